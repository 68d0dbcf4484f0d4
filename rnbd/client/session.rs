// SPDX-License-Identifier: GPL-2.0-or-later

//! An RNBD session: one RTRS client session to a server, the blk-mq tag
//! set its devices share, and the link events that mark its devices
//! disconnected and remap them after a reconnect.

use super::device::Device;
use super::io::{RnbdMq, INLINE_SG};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::str::BStr;
use kernel::sync::{Arc, ArcBorrow, Mutex};
use kernel::workqueue::{self, impl_has_work, new_work, Work, WorkItem};
use kernel::{new_mutex, try_pin_init};
use rb::sysfs::{AsKobject, Uevent};
use rb_block::mq::{TagSet, TagSetFlags, TagSetParams};
use rb_rtrs_clt::{Clt, LinkEv, LinkHandler, OpenParams, PathAddr};
use rnbd_proto::msg::{negotiate_version, SessInfo, SessInfoRsp, PROTO_VER_MAJOR};
use rnbd_proto::sysfs::DevState;

/// Seconds between reconnect attempts (C's `RECONNECT_DELAY`).
const RECONNECT_DELAY: u8 = 30;
/// Reconnect forever (C's `MAX_RECONNECTS`).
const MAX_RECONNECTS: i16 = -1;
/// Remap attempts after a reconnect, [`REMAP_RETRY_MS`] apart.
const REMAP_TRIES: u32 = 60;
const REMAP_RETRY_MS: u32 = 1000;

/// What the link events of a session change.
pub(crate) struct EventsInner {
    /// The mapped devices; removed at unmap.
    pub(crate) devs: KVec<Arc<Device>>,
    /// The session to send with, taken when the session goes.
    clt: Option<Arc<Clt>>,
}

/// The link event side of a session: its devices and the work that remaps
/// them. The RTRS session holds it as its handler.
///
/// # Locking
///
/// `inner` (a mutex: link events and the remap work run in process
/// context) > a device's `disk`. It is not held while a message waits for
/// its answer: RTRS fails a request only after the link event that such a
/// wait would block.
#[pin_data]
pub(crate) struct SessEvents {
    name: KVec<u8>,
    /// The largest IO the session takes, as RTRS said when it was opened
    /// and again at each remap: devices mapped later take it as theirs.
    max_io_size: AtomicU32,
    #[pin]
    pub(crate) inner: Mutex<EventsInner>,
    #[pin]
    work: Work<SessEvents>,
}

impl_has_work! {
    impl HasWork<Self> for SessEvents { self.work }
}

impl SessEvents {
    fn name(&self) -> &BStr {
        BStr::from_bytes(&self.name)
    }

    /// The largest IO the session takes now.
    pub(crate) fn max_io_size(&self) -> u32 {
        self.max_io_size.load(Ordering::Relaxed)
    }

    /// Marks the mapped devices disconnected (`set_dev_states_to_disconnected`).
    fn disconnected(&self) {
        let inner = self.inner.lock();
        for dev in inner.devs.iter() {
            pr_err!("{} Device disconnected.\n", dev.io.tag());
            let disk = dev.disk.lock();
            if dev
                .io
                .change_state(DevState::Mapped, DevState::MappedDisconnected)
            {
                if let Some(d) = disk.as_ref() {
                    let _ = d.uevent(Uevent::Offline);
                }
            }
        }
    }

    /// Sends SESS_INFO and reopens every device (`remap_devs`), from a work
    /// item: waiting for answers in the link event would block RTRS.
    /// Returns false if a message failed.
    fn remap(&self) -> bool {
        let Some(clt) = self.inner.lock().clt.clone() else {
            return true;
        };
        if let Err(e) = send_sess_info(&clt) {
            pr_err!(
                "send_msg_sess_info(\"{}\"): {}\n",
                self.name(),
                e.to_errno()
            );
            return false;
        }
        // The server may have come back with other chunks.
        match clt.query() {
            Ok(a) => self.max_io_size.store(a.max_io_size, Ordering::Relaxed),
            Err(e) => {
                pr_err!("rtrs_clt_query(\"{}\"): {}\n", self.name(), e.to_errno());
                return false;
            }
        }
        // Send without the list locked: a link event that comes meanwhile
        // takes it, and RTRS fails our request only after that event.
        let mut devs = KVec::new();
        for d in self.inner.lock().devs.iter() {
            if devs.push(d.clone(), GFP_KERNEL).is_err() {
                pr_err!("remap of session {}: out of memory\n", self.name());
                return false;
            }
        }
        for dev in devs.iter() {
            if dev.io.state() == DevState::Init || dev.io.state() == DevState::Unmapped {
                continue;
            }
            pr_info!("{} session reconnected, remapping device\n", dev.io.tag());
            if let Err(e) = remap_device(dev) {
                pr_err!("{} send_msg_open(): {}\n", dev.io.tag(), e.to_errno());
                return false;
            }
        }
        true
    }

    /// Whether the session is open and a device of it waits to be remapped.
    fn remap_pending(&self) -> bool {
        let inner = self.inner.lock();
        inner.clt.is_some()
            && inner
                .devs
                .iter()
                .any(|d| d.io.state() == DevState::MappedDisconnected)
    }
}

/// Reopens `dev` on the server (`send_msg_open` + `process_msg_open_rsp`).
pub(crate) fn remap_device(dev: &Device) -> Result {
    let rsp = dev.io.open_remote(&dev.pathname, dev.access_mode)?;
    let disk = dev.disk.lock();
    match dev.io.state() {
        DevState::Unmapped => {
            pr_info!(
                "{} Ignoring Open-Response message from server for unmapped device\n",
                dev.io.tag()
            );
            return Err(ENOENT);
        }
        DevState::MappedDisconnected => {
            dev.change_capacity(&disk, rsp.nsectors);
            if let Some(d) = disk.as_ref() {
                let _ = d.uevent(Uevent::Online);
            }
            pr_info!(
                "{} Device online, device remapped successfully\n",
                dev.io.tag()
            );
        }
        _ => {}
    }
    dev.io.set_state(DevState::Mapped);
    Ok(())
}

impl LinkHandler for SessEvents {
    fn link_ev(this: ArcBorrow<'_, Self>, ev: LinkEv) {
        match ev {
            LinkEv::Disconnected => this.disconnected(),
            LinkEv::Reconnected => {
                // The work holds a reference to the events, not to the
                // RTRS session: it finds that gone if the session closed.
                let _ = workqueue::system().enqueue(Arc::<SessEvents>::from(this));
            }
        }
    }
}

impl WorkItem for SessEvents {
    type Pointer = Arc<SessEvents>;

    /// Remaps the devices, and tries again while that fails and a device
    /// is still disconnected. C tries once per reconnect event, which RTRS
    /// sends only when the first path of a session comes back: when that
    /// path went down again before the remap got through, and another came
    /// up meanwhile, C's devices stay disconnected (every IO `EIO`) for as
    /// long as any path stays up.
    fn run(this: Arc<SessEvents>) {
        for _ in 0..REMAP_TRIES {
            if this.remap() || !this.remap_pending() {
                return;
            }
            rb::random::msleep(REMAP_RETRY_MS);
            if !this.remap_pending() {
                return;
            }
        }
        pr_err!(
            "session {}: remap failed {} times, waiting for the next reconnect\n",
            this.name(),
            REMAP_TRIES
        );
    }
}

/// Sends SESS_INFO and checks the answer (`send_msg_sess_info`).
fn send_sess_info(clt: &Arc<Clt>) -> Result<u8> {
    let mut msg = [0u8; SessInfo::SIZE];
    SessInfo {
        ver: PROTO_VER_MAJOR,
    }
    .encode(&mut msg)
    .map_err(|e| Error::from_errno(e.to_errno()))?;
    let mut rsp = [0u8; SessInfoRsp::SIZE];
    clt.send_usr_msg(&msg, Some(&mut rsp))?;
    let rsp = SessInfoRsp::decode(&rsp).map_err(|e| Error::from_errno(e.to_errno()))?;
    Ok(negotiate_version(rsp.ver))
}

/// A session (C's `struct rnbd_clt_session`).
pub(crate) struct Session {
    pub(crate) name: KVec<u8>,
    pub(crate) clt: Arc<Clt>,
    pub(crate) tag_set: Arc<TagSet<RnbdMq>>,
    pub(crate) events: Arc<SessEvents>,
    pub(crate) max_segments: u32,
    /// The negotiated protocol version.
    pub(crate) _ver: u8,
}

impl Session {
    /// Opens a session to `paths` (`find_and_get_or_create_sess` for a new
    /// one): RTRS session, tag set, SESS_INFO.
    pub(crate) fn open(
        name: &[u8],
        paths: &[PathAddr],
        port: u16,
        nr_poll_queues: u32,
    ) -> Result<Arc<Self>> {
        let mut n = KVec::new();
        n.extend_from_slice(name, GFP_KERNEL)?;
        let mut n2 = KVec::new();
        n2.extend_from_slice(name, GFP_KERNEL)?;
        let events = Arc::pin_init(
            try_pin_init!(SessEvents {
                name: n2,
                max_io_size: AtomicU32::new(0),
                inner <- new_mutex!(EventsInner {
                    devs: KVec::new(),
                    clt: None,
                }),
                work <- new_work!("SessEvents::work"),
            }? Error),
            GFP_KERNEL,
        )?;
        let clt = Clt::open(
            events.clone(),
            &OpenParams {
                sessname: name,
                paths,
                port,
                reconnect_delay_sec: RECONNECT_DELAY,
                max_reconnect_attempts: MAX_RECONNECTS,
                nr_poll_queues,
            },
        )?;
        events.inner.lock().clt = Some(clt.clone());
        let close = |e: Error| {
            events.inner.lock().clt.take();
            e
        };
        let attrs = clt.query().map_err(close)?;
        events
            .max_io_size
            .store(attrs.max_io_size, Ordering::Relaxed);
        let tag_set = Arc::new(
            TagSet::new(TagSetParams {
                queue_depth: attrs.queue_depth,
                nr_poll_queues,
                inline_sg: INLINE_SG,
                // One tag set for all devices of the session, as C's.
                flags: TagSetFlags::SHOULD_MERGE.union(TagSetFlags::TAG_QUEUE_SHARED),
            })
            .map_err(close)?,
            GFP_KERNEL,
        )
        .map_err(|e| close(e.into()))?;
        let ver = send_sess_info(&clt).map_err(close)?;
        pr_debug!(
            "session {}: protocol version {}\n",
            BStr::from_bytes(name),
            ver
        );
        Ok(Arc::new(
            Session {
                name: n,
                clt,
                tag_set,
                events: events.clone(),
                max_segments: attrs.max_segments,
                _ver: ver,
            },
            GFP_KERNEL,
        )
        .map_err(|e| close(e.into()))?)
    }

    /// Lets the RTRS session go once the last reference to it is dropped:
    /// breaks the cycle through its link handler. Called when the last
    /// device of the session is unmapped.
    pub(crate) fn close(&self) {
        // Dropped after the lock: were it the last reference, closing the
        // RTRS session would raise a link event, whose handler takes it.
        let clt = self.events.inner.lock().clt.take();
        drop(clt);
        // A remap under way sees the session gone within a retry; the
        // module must not go before it ends.
        rb::workqueue::flush_work(&self.events.work);
    }
}
