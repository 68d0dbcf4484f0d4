// SPDX-License-Identifier: GPL-2.0-or-later

//! rnbd-client: the sessions and devices of the module, map and unmap.

pub(crate) mod device;
pub(crate) mod io;
pub(crate) mod session;
pub(crate) mod sysfs;

use device::{DevIo, DevSysfs, Device};
use io::RnbdMq;
use kernel::prelude::*;
use kernel::str::BStr;
use kernel::sync::{Arc, Mutex};
use kernel::{c_str, new_mutex};
use rb::errno::EALREADY;
use rb::kvec::VecExt;
use rb::sync::{new_waitable, Waitable};
use rb::sysfs::{AsKobject, Class, Device as SysDevice, Kobject, Link, Store, Uevent};
use rb_block::gendisk::{DiskParams, GenDisk, Major};
use rb_block::mq::Operations;
use rb_rtrs_clt::PathAddr;
use rnbd_proto::devname::{first_minor, symlink_name, MAX_DISK_INDEX, MINORS};
use rnbd_proto::msg::{AccessMode, NAME_MAX};
use rnbd_proto::options::{MapOptions, MAX_PATHS};
use rnbd_proto::sysfs::DevState;
use session::Session;

/// What the client's lock protects (C's `sess_lock` and device list).
struct State {
    sessions: KVec<Arc<SessSlot>>,
    devices: KVec<Arc<Device>>,
    /// Maps under way, each with the index it took.
    mapping: KVec<Reserved>,
    /// Indices of devices being unmapped: their disks still exist.
    unmapping: KVec<u32>,
    /// `/sys/class/rnbd-client/ctl/devices/`.
    devices_dir: Option<Kobject<()>>,
}

/// A map under way: the session it maps on, the device path, and the
/// index it took once the session was open (as C's `init_dev()`), so
/// that no other map takes the same.
struct Reserved {
    slot: Arc<SessSlot>,
    path: KVec<u8>,
    idx: Option<u32>,
}

/// What a session of the module is: being opened by the first map that
/// needs it, open, or failed to open.
#[derive(Clone)]
enum Opening {
    Connecting,
    Open(Arc<Session>),
    Failed,
}

/// A session of the module by its name (C's `struct rnbd_clt_session` in
/// `sess_list`, with its `rtrs_ready` wait).
///
/// # Locking
///
/// `opening` is a leaf; other maps of the session sleep on it while the
/// first one opens it.
#[pin_data]
struct SessSlot {
    name: KVec<u8>,
    nr_poll_queues: u32,
    #[pin]
    opening: Waitable<Opening>,
}

impl SessSlot {
    fn new(name: &[u8], nr_poll_queues: u32) -> Result<Arc<Self>> {
        let mut n = KVec::new();
        n.extend_from_slice(name, GFP_KERNEL)?;
        Arc::pin_init(
            pin_init!(SessSlot {
                name: n,
                nr_poll_queues,
                opening <- new_waitable!(Opening::Connecting, "rnbd_clt_sess_opening"),
            }),
            GFP_KERNEL,
        )
    }

    /// The session, if open.
    fn session(&self) -> Option<Arc<Session>> {
        match &*self.opening.lock() {
            Opening::Open(s) => Some(s.clone()),
            _ => None,
        }
    }
}

/// The module's state.
///
/// # Locking
///
/// `state` (a mutex) guards the sessions, devices and device indices, and
/// the maps under way; it is not held across an RTRS connect or an OPEN:
/// a map takes its session and index under it, connects and opens without
/// it, and adds the device under it again. One map to an unreachable
/// server makes no other map or unmap wait, as C's per-session locking.
#[pin_data]
pub(crate) struct Client {
    major: Major,
    #[pin]
    state: Mutex<State>,
}

/// The module's objects, torn down in `destroy`.
pub(crate) struct Module {
    client: Arc<Client>,
    ctl: Option<SysDevice<sysfs::Ctl>>,
    _class: Arc<Class>,
}

impl Module {
    /// Registers the major, the class and `ctl` (`rnbd_client_init`).
    pub(crate) fn new() -> Result<Self> {
        let major = Major::register(c_str!("rnbd")).inspect_err(|e| {
            pr_err!("Failed to load module, block device registration failed\n");
            let _ = e;
        })?;
        let client = Arc::pin_init(
            pin_init!(Client {
                major,
                state <- new_mutex!(State {
                    sessions: KVec::new(),
                    devices: KVec::new(),
                    mapping: KVec::new(),
                    unmapping: KVec::new(),
                    devices_dir: None,
                }),
            }),
            GFP_KERNEL,
        )?;
        let class = Class::new(c_str!("rnbd-client"))?;
        let ctl = SysDevice::new(
            &class,
            format_args!("ctl"),
            &sysfs::CTL_ATTRS,
            sysfs::Ctl {
                client: client.clone(),
            },
        )?;
        let dir = Kobject::dir(&ctl, format_args!("devices"))?;
        client.state.lock().devices_dir = Some(dir);
        Ok(Self {
            client,
            ctl: Some(ctl),
            _class: class,
        })
    }

    /// Unmaps every device and closes the sessions (`rnbd_destroy_sessions`).
    pub(crate) fn destroy(mut self) {
        // First `ctl`: deleting it waits for `map_device` writes under way.
        drop(self.ctl.take());
        loop {
            let dev = self.client.state.lock().devices.first().cloned();
            let Some(dev) = dev else { break };
            if let Err(e) = self.client.unmap(&dev, true, None) {
                pr_err!("{} unmap at exit: {}\n", dev.io.tag(), e.to_errno());
                // Not in the list any more, or we would loop forever.
                let mut st = self.client.state.lock();
                st.devices.retain(|d| !Arc::ptr_eq(d, &dev));
            }
        }
        let dir = self.client.state.lock().devices_dir.take();
        drop(dir);
    }
}

/// Why a `map_device` write failed to parse: its options, or a path the
/// RTRS address parser refused.
enum MapError {
    Options(rnbd_proto::error::Error),
    Path(Error),
}

impl From<rnbd_proto::error::Error> for MapError {
    fn from(e: rnbd_proto::error::Error) -> Self {
        MapError::Options(e)
    }
}

impl Client {
    /// Maps a device (`rnbd_clt_map_device_store`).
    pub(crate) fn map(self: &Arc<Self>, input: &[u8]) -> Result {
        // Each path is parsed as it is read, as C does: a bad one fails
        // with the RTRS parser's errno before what follows it.
        let mut paths = KVec::with_capacity(MAX_PATHS, GFP_KERNEL)?;
        let parsed = MapOptions::parse_with(input, rb::cpu::nr_cpu_ids().get(), |p| {
            let a = PathAddr::parse(p.addr, p.port).map_err(|e| {
                pr_err!(
                    "map_device: invalid path '{}', err: {}\n",
                    BStr::from_bytes(p.addr),
                    e.to_errno()
                );
                MapError::Path(e)
            })?;
            paths
                .push(a, GFP_KERNEL)
                .map_err(|e| MapError::Path(e.into()))
        });
        let opts = parsed.map_err(|e| match e {
            MapError::Path(e) => e,
            MapError::Options(e) => {
                pr_err!("map_device: invalid options, err: {}\n", e.to_errno());
                Error::from_errno(e.to_errno())
            }
        })?;
        let sessname = BStr::from_bytes(opts.sessname);
        let pathname = BStr::from_bytes(opts.device_path);
        pr_info!(
            "Mapping device {} on session {}, (access_mode: {}, nr_poll_queues: {})\n",
            pathname,
            sessname,
            opts.access_mode.as_str(),
            opts.nr_poll_queues
        );
        let (sess, slot) = loop {
            let (slot, creator) = self.reserve(&opts, paths.is_empty())?;
            if creator {
                let opened =
                    Session::open(opts.sessname, &paths, opts.dest_port, opts.nr_poll_queues);
                match opened {
                    Ok(sess) => {
                        slot.opening.update(|o| *o = Opening::Open(sess.clone()));
                        break (sess, slot);
                    }
                    Err(e) => {
                        pr_err!(
                            "map_device: failed to open session {}, err: {}\n",
                            sessname,
                            e.to_errno()
                        );
                        slot.opening.update(|o| *o = Opening::Failed);
                        self.release(&slot, opts.device_path);
                        return Err(e);
                    }
                }
            }
            // Another map opens the session: wait for it, as C's
            // `wait_for_rtrs_connection()`, and try again if it failed.
            slot.opening
                .wait_until(|o| !matches!(o, Opening::Connecting));
            if let Some(sess) = slot.session() {
                break (sess, slot);
            }
            self.release(&slot, opts.device_path);
        };
        let ret = self
            .take_index(&slot, opts.device_path)
            .and_then(|idx| self.map_on(&sess, &opts, idx));
        if ret.is_err() {
            self.release(&slot, opts.device_path);
        }
        ret
    }

    /// The disk index of the map of `path` on `slot`, taken now that its
    /// session is open.
    fn take_index(&self, slot: &Arc<SessSlot>, path: &[u8]) -> Result<u32> {
        let mut st = self.state.lock();
        let idx = Self::free_index(&st)?;
        let r = st
            .mapping
            .iter_mut()
            .find(|r| Arc::ptr_eq(&r.slot, slot) && &r.path[..] == path)
            .ok_or(ENODEV)?;
        r.idx = Some(idx);
        Ok(idx)
    }

    /// Takes, for a map of `opts`, its session (found, or new: then the
    /// caller opens it). `EEXIST` if the device is mapped or being mapped
    /// on that session.
    fn reserve(&self, opts: &MapOptions<'_>, no_paths: bool) -> Result<(Arc<SessSlot>, bool)> {
        let sessname = BStr::from_bytes(opts.sessname);
        let mut st = self.state.lock();
        let exists = st
            .devices
            .iter()
            .any(|d| &d.pathname[..] == opts.device_path && &d.sess.name[..] == opts.sessname)
            || st
                .mapping
                .iter()
                .any(|r| &r.path[..] == opts.device_path && &r.slot.name[..] == opts.sessname);
        if exists {
            pr_err!(
                "map_device: Device {} on session {} already exists\n",
                BStr::from_bytes(opts.device_path),
                sessname
            );
            return Err(EEXIST);
        }
        let mut path = KVec::new();
        path.extend_from_slice(opts.device_path, GFP_KERNEL)?;
        st.mapping.reserve(1, GFP_KERNEL)?;
        let (slot, creator) = match st.sessions.iter().find(|s| &s.name[..] == opts.sessname) {
            Some(s) => {
                if (opts.nr_poll_queues != 0) || s.nr_poll_queues != 0 {
                    // A device that polls needs a session of its own.
                    return Err(EINVAL);
                }
                (s.clone(), false)
            }
            None => {
                if no_paths {
                    pr_err!(
                        "Session {} not found, and path parameter not given\n",
                        sessname
                    );
                    return Err(ENXIO);
                }
                let s = SessSlot::new(opts.sessname, opts.nr_poll_queues)?;
                st.sessions.push(s.clone(), GFP_KERNEL)?;
                (s, true)
            }
        };
        // Room was reserved above: this does not fail.
        let _ = st.mapping.push(
            Reserved {
                slot: slot.clone(),
                path,
                idx: None,
            },
            GFP_KERNEL,
        );
        Ok((slot, creator))
    }

    /// The map of `path` on `slot` ends without a device: gives its index
    /// back, and the session if no device and no other map uses it
    /// (closing it if it is open).
    fn release(&self, slot: &Arc<SessSlot>, path: &[u8]) {
        let unused = {
            let mut st = self.state.lock();
            st.mapping
                .retain(|r| !(Arc::ptr_eq(&r.slot, slot) && &r.path[..] == path));
            let sess = slot.session();
            let used = st.mapping.iter().any(|r| Arc::ptr_eq(&r.slot, slot))
                || sess
                    .as_ref()
                    .is_some_and(|s| st.devices.iter().any(|d| Arc::ptr_eq(&d.sess, s)));
            // A session that failed to open goes at once: the maps that
            // waited for it try again with a new one, as C's `goto again`.
            let failed = matches!(*slot.opening.lock(), Opening::Failed);
            if !used || failed {
                st.sessions.retain(|s| !Arc::ptr_eq(s, slot));
            }
            (!used).then_some(sess).flatten()
        };
        if let Some(sess) = unused {
            sess.close();
        }
    }

    fn free_index(st: &State) -> Result<u32> {
        (0..=MAX_DISK_INDEX)
            .find(|i| {
                !st.devices.iter().any(|d| d.idx == *i)
                    && !st.mapping.iter().any(|r| r.idx == Some(*i))
                    && !st.unmapping.contains(i)
            })
            .ok_or(ENOSPC)
    }

    /// Opens the device on the server and makes its disk, with no lock
    /// held; then adds it, with index `idx` that this map took, under the
    /// client's lock.
    fn map_on(self: &Arc<Self>, sess: &Arc<Session>, opts: &MapOptions<'_>, idx: u32) -> Result {
        let read_only = opts.access_mode == AccessMode::Ro;
        let io = DevIo::new(
            sess.clt.clone(),
            read_only,
            idx,
            opts.device_path,
            opts.sessname,
        )?;
        let io = Arc::new(io, GFP_KERNEL)?;
        let mut pathname = KVec::new();
        pathname.extend_from_slice(opts.device_path, GFP_KERNEL)?;
        let dev_io = io.clone();
        let dev_sess = sess.clone();
        let dev = Arc::pin_init(
            pin_init!(Device {
                io: dev_io,
                sess: dev_sess,
                idx,
                pathname,
                access_mode: opts.access_mode,
                nr_poll_queues: opts.nr_poll_queues,
                disk <- new_mutex!(None),
                sysfs <- new_mutex!(DevSysfs { link: None, kobj: None }),
            }),
            GFP_KERNEL,
        )?;
        let pathname = BStr::from_bytes(opts.device_path);
        let rsp = io
            .open_remote(opts.device_path, opts.access_mode)
            .inspect_err(|e| {
                pr_err!(
                    "{} map_device: failed, can't open remote device {}, err: {}\n",
                    io.tag(),
                    pathname,
                    e.to_errno()
                );
            })?;
        let close_on_err = |e: Error| {
            let _ = io.close_remote();
            e
        };
        if rsp.logical_block_size == 0 {
            return Err(close_on_err(EINVAL));
        }
        io.set_state(DevState::Mapped);
        let limits = Device::limits(sess, &rsp);
        let disk = GenDisk::<RnbdMq>::new(
            sess.tag_set.clone(),
            &limits,
            io.clone(),
            DiskParams {
                name: format_args!("rnbd{}", idx),
                major: self.major.number(),
                first_minor: first_minor(idx).ok_or(ENOSPC)?,
                minors: MINORS,
                capacity: rsp.nsectors,
                read_only,
            },
        )
        .map_err(close_on_err)?;
        *dev.disk.lock() = Some(disk);
        let added = {
            let mut st = self.state.lock();
            let mut add = || -> Result {
                self.add_sysfs(&st, &dev)?;
                st.devices.reserve(1, GFP_KERNEL)?;
                sess.events
                    .inner
                    .lock()
                    .devs
                    .push(dev.clone(), GFP_KERNEL)?;
                // Room was reserved above: this does not fail.
                let _ = st.devices.push(dev.clone(), GFP_KERNEL);
                // The device is visible, and takes over the map's index.
                st.mapping.retain(|r| r.idx != Some(idx));
                Ok(())
            };
            add()
        };
        if let Err(e) = added {
            self.teardown(&dev, true);
            return Err(e);
        }
        pr_info!(
            "{}: map_device: Device mapped as {} (nsectors: {}, logical_block_size: {}, \
             physical_block_size: {}, max_write_zeroes_sectors: {}, max_discard_sectors: {}, \
             discard_granularity: {}, discard_alignment: {}, secure_discard: {}, \
             max_segments: {}, max_hw_sectors: {}, wc: {}, fua: {})\n",
            pathname,
            io.name(),
            rsp.nsectors,
            rsp.logical_block_size,
            rsp.physical_block_size,
            rsp.max_write_zeroes_sectors,
            rsp.max_discard_sectors,
            rsp.discard_granularity,
            rsp.discard_alignment,
            rsp.secure_discard,
            sess.max_segments,
            sess.events.max_io_size() / 512,
            u8::from(rsp.cache_policy.writeback),
            u8::from(rsp.cache_policy.client_fua()),
        );
        Ok(())
    }

    /// `/sys/block/rnbd<N>/rnbd/` and the link in `ctl/devices/`.
    fn add_sysfs(self: &Arc<Self>, st: &State, dev: &Arc<Device>) -> Result {
        let disk = dev.disk.lock();
        let disk = disk.as_ref().ok_or(ENODEV)?;
        let kobj = Kobject::new(
            disk,
            format_args!("rnbd"),
            &sysfs::DEV_ATTRS,
            sysfs::DevSys {
                dev: dev.clone(),
                client: self.clone(),
            },
        )?;
        let _ = disk.uevent(Uevent::Online);
        let mut name = [0u8; 2 * NAME_MAX + 2];
        let len = symlink_name(&dev.pathname, &dev.sess.name, &mut name)
            .map_err(|e| Error::from_errno(e.to_errno()))?;
        let dir = st.devices_dir.as_ref().ok_or(ENODEV)?;
        let link = Link::new(
            dir,
            disk,
            format_args!("{}", BStr::from_bytes(&name[..len])),
        )
        .inspect_err(|e| {
            pr_err!(
                "{} Creating symlink failed, err: {}\n",
                dev.io.tag(),
                e.to_errno()
            )
        });
        let mut s = dev.sysfs.lock();
        s.kobj = Some(kobj);
        s.link = Some(link?);
        Ok(())
    }

    /// Removes the sysfs objects and the disk of `dev`; sends CLOSE if it
    /// was mapped. No lock of its sysfs files is held.
    fn teardown(&self, dev: &Device, was_mapped: bool) {
        let (link, kobj) = {
            let mut s = dev.sysfs.lock();
            (s.link.take(), s.kobj.take())
        };
        drop(link);
        drop(kobj);
        let disk = dev.disk.lock().take();
        drop(disk);
        if was_mapped {
            if let Err(e) = dev.io.close_remote() {
                pr_err!("{} sending CLOSE failed: {}\n", dev.io.tag(), e.to_errno());
            }
        }
    }

    /// Unmaps `dev` (`rnbd_clt_unmap_device`): `EBUSY` if it is open and
    /// not `force`. `store` is the `unmap_device` write that asks for it,
    /// which removes its own file.
    pub(crate) fn unmap(
        &self,
        dev: &Arc<Device>,
        force: bool,
        store: Option<&mut Store<'_>>,
    ) -> Result {
        let was_mapped = {
            let _disk = dev.disk.lock();
            let state = dev.io.state();
            if state == DevState::Unmapped {
                pr_info!("{} Device is already being unmapped\n", dev.io.tag());
                return Err(EALREADY());
            }
            let users = dev.io.openers();
            if !force && users > 0 {
                pr_err!(
                    "{} Closing device failed, device is in use, ({} device users)\n",
                    dev.io.tag(),
                    users
                );
                return Err(EBUSY);
            }
            dev.io.set_state(DevState::Unmapped);
            state == DevState::Mapped
        };
        if let Some(s) = store {
            s.remove_self()?;
        }
        let sess = dev.sess.clone();
        {
            // The index stays taken until the disk is gone.
            let mut st = self.state.lock();
            st.devices.retain(|d| !Arc::ptr_eq(d, dev));
            // Out of memory only narrows a window in which a new map could
            // pick the index of the disk still being deleted.
            let _ = st.unmapping.push(dev.idx, GFP_KERNEL);
        }
        sess.events
            .inner
            .lock()
            .devs
            .retain(|d| !Arc::ptr_eq(d, dev));
        self.teardown(dev, was_mapped);
        pr_info!("{} Device is unmapped\n", dev.io.tag());
        // The session goes with its last device; a map that came meanwhile
        // found it in the list and keeps it.
        let last = {
            let mut st = self.state.lock();
            st.unmapping.retain(|i| *i != dev.idx);
            let slot = st
                .sessions
                .iter()
                .find(|s| s.session().is_some_and(|s| Arc::ptr_eq(&s, &sess)))
                .cloned();
            let last = !st.devices.iter().any(|d| Arc::ptr_eq(&d.sess, &sess))
                && !slot
                    .as_ref()
                    .is_some_and(|slot| st.mapping.iter().any(|r| Arc::ptr_eq(&r.slot, slot)));
            if last {
                st.sessions
                    .retain(|s| !slot.as_ref().is_some_and(|slot| Arc::ptr_eq(s, slot)));
            }
            last
        };
        if last {
            sess.close();
        }
        Ok(())
    }
}

// `Operations` is used through `GenDisk<RnbdMq>`.
const _: fn() = || {
    fn assert_ops<T: Operations>() {}
    assert_ops::<RnbdMq>();
};
