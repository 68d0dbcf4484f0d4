// SPDX-License-Identifier: GPL-2.0-or-later

//! A mapped device: its IO state (what the blk-mq callbacks see), its disk
//! `rnbd<N>` and sysfs objects, and the OPEN/CLOSE messages for it.

use super::io::RnbdMq;
use super::session::Session;
use super::sysfs::DevSys;
use core::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use kernel::prelude::*;
use kernel::str::BStr;
use kernel::sync::{Arc, Mutex};
use rb::sysfs::{Kobject, Link};
use rb_block::gendisk::{GenDisk, Limits};
use rb_rtrs_clt::Clt;
use rnbd_proto::devname::DiskName;
use rnbd_proto::msg::{AccessMode, Close, Open, OpenRsp};
use rnbd_proto::sysfs::DevState;

/// What the IO path and the block device callbacks of one device use: the
/// blk-mq queue data.
pub(crate) struct DevIo {
    pub(crate) clt: Arc<Clt>,
    pub(crate) read_only: bool,
    name: DiskName,
    /// `<device_path@sessname>`, what C's `rnbd_clt_log()` puts before a
    /// device's messages.
    tag: KVec<u8>,
    device_id: AtomicU32,
    state: AtomicU8,
    openers: AtomicU32,
}

fn state_to_u8(s: DevState) -> u8 {
    match s {
        DevState::Init => 0,
        DevState::Mapped => 1,
        DevState::MappedDisconnected => 2,
        DevState::Unmapped => 3,
    }
}

fn state_from_u8(v: u8) -> DevState {
    match v {
        0 => DevState::Init,
        1 => DevState::Mapped,
        2 => DevState::MappedDisconnected,
        _ => DevState::Unmapped,
    }
}

impl DevIo {
    /// Device `rnbd<idx>` of `clt`, for `pathname` in session `sessname`.
    pub(crate) fn new(
        clt: Arc<Clt>,
        read_only: bool,
        idx: u32,
        pathname: &[u8],
        sessname: &[u8],
    ) -> Result<Self> {
        let mut tag = KVec::with_capacity(pathname.len() + sessname.len() + 3, GFP_KERNEL)?;
        for part in [&b"<"[..], pathname, b"@", sessname, b">"] {
            tag.extend_from_slice(part, GFP_KERNEL)?;
        }
        Ok(Self {
            clt,
            read_only,
            name: DiskName::new(idx),
            tag,
            device_id: AtomicU32::new(0),
            state: AtomicU8::new(state_to_u8(DevState::Init)),
            openers: AtomicU32::new(0),
        })
    }

    /// `rnbd<N>`.
    pub(crate) fn name(&self) -> &str {
        self.name.as_str()
    }

    /// `<device_path@sessname>`, for its log lines.
    pub(crate) fn tag(&self) -> &BStr {
        BStr::from_bytes(&self.tag)
    }

    pub(crate) fn state(&self) -> DevState {
        state_from_u8(self.state.load(Ordering::Acquire))
    }

    pub(crate) fn set_state(&self, s: DevState) {
        self.state.store(state_to_u8(s), Ordering::Release);
    }

    /// Moves from `from` to `to`; false if the state was not `from`.
    pub(crate) fn change_state(&self, from: DevState, to: DevState) -> bool {
        self.state
            .compare_exchange(
                state_to_u8(from),
                state_to_u8(to),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    pub(crate) fn device_id(&self) -> u32 {
        self.device_id.load(Ordering::Relaxed)
    }

    /// An open of the block device: `EIO` once unmapped.
    pub(crate) fn get_opener(&self) -> Result {
        if self.state() == DevState::Unmapped {
            return Err(EIO);
        }
        self.openers.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    pub(crate) fn put_opener(&self) {
        self.openers.fetch_sub(1, Ordering::AcqRel);
    }

    pub(crate) fn openers(&self) -> u32 {
        self.openers.load(Ordering::Acquire)
    }

    /// Sends OPEN and waits for the answer; on success the device id is
    /// the server's.
    pub(crate) fn open_remote(&self, path: &[u8], mode: AccessMode) -> Result<OpenRsp> {
        let mut msg = [0u8; Open::SIZE];
        Open {
            access_mode: mode,
            dev_name: path,
        }
        .encode(&mut msg)
        .map_err(|e| Error::from_errno(e.to_errno()))?;
        let mut rsp = [0u8; OpenRsp::SIZE];
        self.clt.send_usr_msg(&msg, Some(&mut rsp))?;
        let rsp = OpenRsp::decode(&rsp).map_err(|e| {
            pr_err!("{} invalid OPEN response\n", self.tag());
            Error::from_errno(e.to_errno())
        })?;
        self.device_id.store(rsp.device_id, Ordering::Relaxed);
        Ok(rsp)
    }

    /// Sends CLOSE for the device and waits for its confirmation.
    pub(crate) fn close_remote(&self) -> Result {
        let mut msg = [0u8; Close::SIZE];
        Close {
            device_id: self.device_id(),
        }
        .encode(&mut msg)
        .map_err(|e| Error::from_errno(e.to_errno()))?;
        self.clt.send_usr_msg(&msg, None)
    }
}

/// The sysfs objects of a mapped device, dropped in this order.
pub(crate) struct DevSysfs {
    pub(crate) link: Option<Link>,
    pub(crate) kobj: Option<Kobject<DevSys>>,
}

/// A mapped device (C's `struct rnbd_clt_dev`).
///
/// # Locking
///
/// `disk` > `sysfs`, both mutexes, taken alone or in that order by sysfs
/// stores, link events and unmap. The IO path reads `io` (its state is an
/// atomic) and takes neither.
#[pin_data]
pub(crate) struct Device {
    pub(crate) io: Arc<DevIo>,
    pub(crate) sess: Arc<Session>,
    pub(crate) idx: u32,
    pub(crate) pathname: KVec<u8>,
    pub(crate) access_mode: AccessMode,
    pub(crate) nr_poll_queues: u32,
    /// The disk, while mapped; and the lock that state changes take (C's
    /// `dev->lock`), since they touch the disk (uevents, capacity).
    #[pin]
    pub(crate) disk: Mutex<Option<GenDisk<RnbdMq>>>,
    #[pin]
    pub(crate) sysfs: Mutex<DevSysfs>,
}

impl Device {
    /// The queue limits of the disk from the server's answer and the
    /// session (`rnbd_client_setup_device`).
    pub(crate) fn limits(sess: &Session, rsp: &OpenRsp) -> Limits {
        Limits {
            logical_block_size: rsp.logical_block_size.into(),
            physical_block_size: rsp.physical_block_size.into(),
            io_opt: sess.events.max_io_size(),
            max_hw_sectors: sess.events.max_io_size() / 512,
            max_segments: u16::try_from(sess.max_segments).unwrap_or(u16::MAX),
            max_hw_discard_sectors: rsp.max_discard_sectors,
            discard_granularity: rsp.discard_granularity,
            discard_alignment: rsp.discard_alignment,
            max_secure_erase_sectors: if rsp.secure_discard != 0 {
                rsp.max_discard_sectors
            } else {
                0
            },
            max_write_zeroes_sectors: rsp.max_write_zeroes_sectors,
            virt_boundary_mask: 4096 - 1,
            write_cache: rsp.cache_policy.writeback,
            fua: rsp.cache_policy.client_fua(),
        }
    }

    /// Sets the capacity of `disk` (this device's, locked) to `sectors`
    /// (`rnbd_clt_change_capacity`).
    pub(crate) fn change_capacity(&self, disk: &Option<GenDisk<RnbdMq>>, sectors: u64) {
        if let Some(d) = disk.as_ref() {
            let old = d.capacity();
            if old != sectors {
                pr_info!(
                    "{} Device size changed from {} to {} sectors\n",
                    self.io.tag(),
                    old,
                    sectors
                );
                d.set_capacity_and_notify(sectors);
            }
        }
    }
}
