// SPDX-License-Identifier: GPL-2.0-or-later

//! An RTRS session as RNBD sees it (C's `rnbd_srv_session`): its name, the
//! protocol version it negotiated, and the devices it opened, by the id the
//! client uses in IO (C's `index_idr`).

use super::device::{SessDev, Target};
use super::sysfs::{sess_dev_files, SessDevFiles};
use super::trace;
use super::Handler;
use super::{params, server};
use core::sync::atomic::{AtomicU8, Ordering};
use kernel::alloc::flags::GFP_ATOMIC;
use kernel::alloc::{KBox, KVec};
use kernel::prelude::*;
use kernel::str::{BStr, CStr};
use kernel::sync::{Arc, Mutex, SpinLock};
use rb_block::bdev::{Bdev, BdevFile};
use rb_rtrs_srv::SessRef;
use rnbd_proto::msg::{AccessMode, CachePolicy, Open, OpenRsp, NAME_MAX, PROTO_VER_MAJOR};

/// Numbers openings, so that a `force_close` finds its own and not a later
/// one that reused the id.

/// One device id of a session.
enum Slot {
    /// Free for the next open.
    Free,
    /// Not usable: being opened, or force-closed while the client still
    /// uses the id (C's `keep_id`).
    Reserved,
    /// An open device.
    Open(KBox<SessDev>),
}

/// An RNBD session.
///
/// # Locking
///
/// `ctl` (a mutex: opening sleeps) > `Server::devs` > `devs` (a spinlock:
/// IO looks its device up in it from the RTRS receive, a workqueue, since
/// the server's CQs are polled there) > a target's `inflight`. `ctl` is
/// held across an open or a close, `devs` only to look at or change a
/// slot.
#[pin_data]
pub(crate) struct Session {
    name: [u8; NAME_MAX],
    name_len: usize,
    queue_depth: i32,
    ver: AtomicU8,
    /// Held while a device opens or closes (C's `sess->lock`): the
    /// session's openings so far, each one's serial.
    #[pin]
    ctl: Mutex<u64>,
    /// The devices by id, for IO lookups.
    #[pin]
    devs: SpinLock<KVec<Slot>>,
}

impl Session {
    /// `create_sess`, at the session's CONNECTED event.
    pub(crate) fn new(rtrs: &SessRef<Handler>) -> Result<Arc<Self>> {
        let mut name = [0u8; NAME_MAX];
        let name_len = rtrs
            .path_name(&mut name)
            .inspect_err(|e| pr_err!("rtrs_srv_get_path_name(): {}\n", e.to_errno()))?
            .len();
        let sess = Arc::pin_init(
            pin_init!(Self {
                name,
                name_len,
                queue_depth: rtrs.queue_depth(),
                ver: AtomicU8::new(PROTO_VER_MAJOR),
                ctl <- kernel::new_mutex!(0, "rnbd_srv_sess_ctl"),
                devs <- kernel::new_spinlock!(KVec::new(), "rnbd_srv_sess_devs"),
            }),
            GFP_KERNEL,
        )?;
        pr_info!(
            "RTRS Session {} connected, queue depth {}\n",
            sess.name(),
            sess.queue_depth
        );
        trace::create_sess(sess.queue_depth, sess.name_cstr());
        Ok(sess)
    }

    /// The session name, as the client gave it.
    pub(crate) fn name(&self) -> &BStr {
        BStr::from_bytes(self.name.get(..self.name_len).unwrap_or_default())
    }

    /// The session name as a C string (for trace events); empty if it
    /// fills the buffer.
    pub(crate) fn name_cstr(&self) -> &CStr {
        self.name
            .get(..=self.name_len)
            .and_then(|b| CStr::from_bytes_with_nul(b).ok())
            .unwrap_or(kernel::c_str!(""))
    }

    pub(crate) fn name_bytes(&self) -> &[u8] {
        self.name.get(..self.name_len).unwrap_or_default()
    }

    /// The negotiated protocol version.
    pub(crate) fn ver(&self) -> u8 {
        self.ver.load(Ordering::Relaxed)
    }

    pub(crate) fn set_ver(&self, ver: u8) {
        self.ver.store(ver, Ordering::Relaxed);
    }

    /// The open device `id`, with an IO counted in (see
    /// [`Target::end_io`]); `None` for an unknown or closing one.
    pub(crate) fn start_io(&self, id: u32) -> Option<Arc<Target>> {
        let devs = self.devs.lock();
        match devs.get(id as usize) {
            Some(Slot::Open(sd)) if sd.target.start_io() => Some(sd.target.clone()),
            _ => None,
        }
    }

    /// Takes the open device `id` out of the table (if `serial` is given,
    /// only that opening), leaving the id reserved if `keep_id`.
    fn take(&self, id: u32, serial: Option<u64>, keep_id: bool) -> Option<KBox<SessDev>> {
        let mut devs = self.devs.lock();
        let slot = devs.get_mut(id as usize)?;
        match slot {
            Slot::Open(sd) if serial.map_or(true, |s| s == sd.serial) => {}
            _ => return None,
        }
        let next = if keep_id { Slot::Reserved } else { Slot::Free };
        match core::mem::replace(slot, next) {
            Slot::Open(sd) => Some(sd),
            _ => None,
        }
    }

    /// Closes device `id` for the client's CLOSE (`process_msg_close`).
    pub(crate) fn close(&self, id: u32) {
        let _ctl = self.ctl.lock();
        if let Some(sd) = self.take(id, None, false) {
            self.close_taken(sd);
        }
    }

    /// Closes the opening `serial` of device `id` from its `force_close`
    /// file; the id stays reserved, the client still uses it and gets
    /// `ENOTCONN` for its IO.
    pub(crate) fn force_close(&self, id: u32, serial: u64) {
        let _ctl = self.ctl.lock();
        if let Some(sd) = self.take(id, Some(serial), true) {
            self.close_taken(sd);
        }
    }

    fn close_taken(&self, sd: KBox<SessDev>) {
        match server() {
            Ok(srv) => KBox::into_inner(sd).close(&srv, self.name()),
            Err(_) => pr_err!("session {}: server gone before its devices\n", self.name()),
        }
    }

    /// Closes every device of the session (`destroy_sess`), at its
    /// DISCONNECTED event.
    pub(crate) fn destroy(&self) {
        trace::destroy_sess(self.queue_depth, self.name_cstr());
        let _ctl = self.ctl.lock();
        loop {
            let next = {
                let mut devs = self.devs.lock();
                devs.iter_mut().find_map(|slot| match slot {
                    Slot::Open(_) => match core::mem::replace(slot, Slot::Free) {
                        Slot::Open(sd) => Some(sd),
                        _ => None,
                    },
                    _ => None,
                })
            };
            match next {
                Some(sd) => self.close_taken(sd),
                None => break,
            }
        }
        pr_info!("RTRS Session {} disconnected\n", self.name());
    }

    /// Reserves the lowest free id (as `xa_alloc`).
    fn alloc_id(&self) -> Result<u32> {
        let mut devs = self.devs.lock();
        if let Some(at) = devs.iter().position(|s| matches!(s, Slot::Free)) {
            if let Some(s) = devs.get_mut(at) {
                *s = Slot::Reserved;
            }
            return u32::try_from(at).map_err(|_| ENOSPC);
        }
        let at = u32::try_from(devs.len()).map_err(|_| ENOSPC)?;
        devs.push(Slot::Reserved, GFP_ATOMIC)?;
        Ok(at)
    }

    /// Frees or fills a reserved id.
    fn set_slot(&self, id: u32, slot: Slot) {
        let mut devs = self.devs.lock();
        if let Some(s) = devs.get_mut(id as usize) {
            *s = slot;
        }
    }

    /// Opens the device a client's OPEN names (`process_msg_open`) and
    /// writes the response to `rsp`.
    pub(crate) fn open(self: &Arc<Self>, msg: &Open<'_>, rsp: &mut [u8]) -> Result {
        let mut opened = self.ctl.lock();
        // Already open by this session: answer again.
        let existing = {
            let devs = self.devs.lock();
            devs.iter().enumerate().find_map(|(id, s)| match s {
                Slot::Open(sd) if sd.mapping_path.as_slice() == msg.dev_name => {
                    Some((id as u32, sd.target.clone()))
                }
                _ => None,
            })
        };
        if let Some((id, target)) = existing {
            return fill_open_rsp(rsp, id, target.file.bdev());
        }

        let dev_name = BStr::from_bytes(msg.dev_name);
        let path = params::full_path(self.name_bytes(), msg.dev_name).inspect_err(|e| {
            params::with_search_path(|sp| {
                pr_err!(
                    "Opening device '{}' for session {} failed, bad device path '{}' under dev_search_path '{}', err: {}\n",
                    dev_name, self.name(), dev_name, BStr::from_bytes(sp), e.to_errno()
                )
            })
        })?;
        let file = BdevFile::open_by_path(path.as_cstr()?, msg.access_mode.is_write()).inspect_err(|e| {
            pr_err!(
                "Opening device '{}' on session {} failed, failed to open the block device, err: {}\n",
                path.as_bstr(), self.name(), e.to_errno()
            )
        })?;
        let srv = server()?;
        let dev =
            srv.get_dev(file.bdev(), msg.access_mode, self.name())
                .inspect_err(|e| {
                    pr_err!(
                "Opening device '{}' on session {} failed, creating srv_dev failed, err: {}\n",
                path.as_bstr(), self.name(), e.to_errno()
            )
                })?;
        let res = self.add_sess_dev(msg, file, &dev, rsp, &mut opened);
        if let Err(e) = res {
            pr_err!(
                "<{}@{}>: Opening device failed, err: {}\n",
                dev_name,
                self.name(),
                e.to_errno()
            );
            srv.put_dev(&dev, msg.access_mode);
            return Err(e);
        }
        pr_info!(
            "<{}@{}>: Opened device '{}'\n",
            dev_name,
            self.name(),
            dev.name.as_bstr()
        );
        Ok(())
    }

    /// The rest of [`Session::open`], once the device is admitted.
    fn add_sess_dev(
        self: &Arc<Self>,
        msg: &Open<'_>,
        file: BdevFile,
        dev: &Arc<super::device::SrvDev>,
        rsp: &mut [u8],
        opened: &mut u64,
    ) -> Result {
        let mut mapping_path = KVec::with_capacity(msg.dev_name.len(), GFP_KERNEL)?;
        mapping_path.extend_from_slice(msg.dev_name, GFP_KERNEL)?;
        let mut files_path = KVec::with_capacity(msg.dev_name.len(), GFP_KERNEL)?;
        files_path.extend_from_slice(msg.dev_name, GFP_KERNEL)?;
        let id = self.alloc_id()?;
        *opened += 1;
        let serial = *opened;
        let built = (|| -> Result<KBox<SessDev>> {
            let target = Target::new(file, msg.access_mode == AccessMode::Ro)?;
            let files = sess_dev_files(
                &dev.files.sessions,
                SessDevFiles {
                    sess: self.clone(),
                    dev_id: id,
                    serial,
                    mode: msg.access_mode,
                    mapping_path: files_path,
                },
            )?;
            fill_open_rsp(rsp, id, target.file.bdev())?;
            Ok(KBox::new(
                SessDev {
                    serial,
                    mapping_path,
                    mode: msg.access_mode,
                    target,
                    dev: dev.clone(),
                    files: Some(files),
                },
                GFP_KERNEL,
            )?)
        })();
        match built {
            Ok(sd) => {
                self.set_slot(id, Slot::Open(sd));
                Ok(())
            }
            Err(e) => {
                self.set_slot(id, Slot::Free);
                Err(e)
            }
        }
    }
}

/// Writes the OPEN response for device `id` (`rnbd_srv_fill_msg_open_rsp`).
fn fill_open_rsp(rsp: &mut [u8], id: u32, bdev: &Bdev) -> Result {
    let mut cache = 0;
    if bdev.write_cache() {
        cache |= CachePolicy::WRITEBACK;
    }
    if bdev.fua() {
        cache |= CachePolicy::FUA;
    }
    let msg = OpenRsp {
        device_id: id,
        nsectors: bdev.nr_sectors(),
        max_hw_sectors: bdev.max_hw_sectors(),
        max_write_zeroes_sectors: bdev.write_zeroes_sectors(),
        max_discard_sectors: bdev.max_discard_sectors(),
        discard_granularity: bdev.discard_granularity(),
        discard_alignment: bdev.discard_alignment(),
        // The C server stores these in 16-bit fields as they are.
        physical_block_size: bdev.physical_block_size() as u16,
        logical_block_size: bdev.logical_block_size() as u16,
        max_segments: bdev.max_segments() as u16,
        secure_discard: bdev.max_secure_erase_sectors() as u16,
        cache_policy: CachePolicy::from_bits(cache),
    };
    msg.encode(rsp).map_err(super::errno)?;
    Ok(())
}
