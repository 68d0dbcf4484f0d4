// SPDX-License-Identifier: GPL-2.0-or-later

//! Exported block devices (C's `rnbd_srv_dev`): one per device name, shared
//! by the sessions that opened it, with the open-permission count; and one
//! session's opening of one (C's `rnbd_srv_sess_dev`): the open file, its
//! IO in flight, its sysfs directory.

use super::sysfs::{DevFiles, SessDevFiles};
use super::Server;
use kernel::alloc::KVec;
use kernel::prelude::*;
use kernel::str::BStr;
use kernel::sync::{Arc, CondVar};
use rb::kvec::VecExt;
use rb::sync::{new_spinlock_irq, SpinLockIrq};
use rb::sysfs::Kobject;
use rb_block::bdev::{Bdev, BdevFile};
use rnbd_proto::access::OpenPerm;
use rnbd_proto::msg::{AccessMode, NAME_MAX};

/// A device name as `%pg` prints it (`nullb0`), at most `NAME_MAX - 1`
/// bytes.
pub(crate) struct DevName {
    buf: [u8; NAME_MAX],
    len: usize,
}

impl DevName {
    /// The name of `bdev`.
    pub(crate) fn of(bdev: &Bdev) -> Self {
        let mut buf = [0u8; NAME_MAX];
        let len = bdev.name(&mut buf).len();
        Self { buf, len }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    pub(crate) fn as_bstr(&self) -> &BStr {
        BStr::from_bytes(self.as_bytes())
    }
}

/// An exported device: `/sys/class/rnbd-server/ctl/devices/<name>/`.
pub(crate) struct SrvDev {
    pub(crate) name: DevName,
    pub(crate) files: DevFiles,
}

/// An exported device in the server's list, with its openings.
pub(crate) struct DevEntry {
    dev: Arc<SrvDev>,
    perm: OpenPerm,
    users: u32,
}

impl Server {
    /// Finds or adds the exported device of `bdev` and admits an opening in
    /// `mode` (`rnbd_srv_get_or_create_srv_dev`): `EPERM` if the device
    /// has as many writers as `mode` allows.
    pub(crate) fn get_dev(
        &self,
        bdev: &Bdev,
        mode: AccessMode,
        sessname: &BStr,
    ) -> Result<Arc<SrvDev>> {
        let name = DevName::of(bdev);
        let mut devs = self.devs.lock();
        let at = match devs
            .iter()
            .position(|e| e.dev.name.as_bytes() == name.as_bytes())
        {
            Some(at) => at,
            None => {
                let files = DevFiles::new(&self.sysfs, name.as_bstr(), bdev)?;
                let dev = Arc::new(SrvDev { name, files }, GFP_KERNEL)?;
                devs.push(
                    DevEntry {
                        dev,
                        perm: OpenPerm::new(),
                        users: 0,
                    },
                    GFP_KERNEL,
                )?;
                devs.len() - 1
            }
        };
        let e = devs.get_mut(at).ok_or(EINVAL)?;
        if let Err(err) = e.perm.open(mode) {
            let what = if mode == AccessMode::Rw {
                "RW"
            } else {
                "migration"
            };
            pr_err!(
                "Mapping device '{}' for session {} with {} permissions failed. Device already opened as 'RW' by {} client(s), access mode {}.\n",
                e.dev.name.as_bstr(), sessname, what, e.perm.writers(), mode.as_str()
            );
            let unused = e.users == 0;
            let removed = if unused {
                Some(devs.swap_remove(at))
            } else {
                None
            };
            drop(devs);
            drop(removed);
            return Err(super::errno(err));
        }
        e.users += 1;
        Ok(e.dev.clone())
    }

    /// Ends an opening of `dev` in `mode` that [`Server::get_dev`]
    /// admitted; removes the device with its last opening.
    pub(crate) fn put_dev(&self, dev: &Arc<SrvDev>, mode: AccessMode) {
        let mut devs = self.devs.lock();
        let Some(at) = devs.iter().position(|e| Arc::ptr_eq(&e.dev, dev)) else {
            pr_err!("device {} is not exported\n", dev.name.as_bstr());
            return;
        };
        let removed = match devs.get_mut(at) {
            Some(e) => {
                e.perm.close(mode);
                e.users = e.users.saturating_sub(1);
                if e.users == 0 {
                    Some(devs.swap_remove(at))
                } else {
                    None
                }
            }
            None => None,
        };
        // Its sysfs goes outside the lock.
        drop(devs);
        drop(removed);
    }
}

/// What IO needs of an opening: the open device and the count of its IO in
/// flight, which closing waits on (C's `sess_dev->kref` and
/// `destroy_comp`). Its last reference may go in a bio completion: dropping
/// it only closes the file, which is safe there.
///
/// # Locking
///
/// `inflight` (irq-safe: IO ends in bio completions) is a leaf; `drained`
/// is woken under it when the last IO of a closed opening ends.
#[pin_data]
pub(crate) struct Target {
    pub(crate) file: BdevFile,
    pub(crate) read_only: bool,
    #[pin]
    inflight: SpinLockIrq<Inflight>,
    #[pin]
    drained: CondVar,
}

struct Inflight {
    count: u32,
    closed: bool,
}

impl Target {
    pub(crate) fn new(file: BdevFile, read_only: bool) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                file,
                read_only,
                inflight <- new_spinlock_irq!(Inflight { count: 0, closed: false }, "rnbd_srv_inflight"),
                drained <- kernel::new_condvar!("rnbd_srv_drained"),
            }),
            GFP_KERNEL,
        )
    }

    /// Counts an IO in; false once the opening is closing.
    pub(crate) fn start_io(&self) -> bool {
        let mut g = self.inflight.lock();
        if g.closed {
            return false;
        }
        g.count += 1;
        true
    }

    /// Counts an IO out. Any context.
    pub(crate) fn end_io(&self) {
        let mut g = self.inflight.lock();
        g.count = g.count.saturating_sub(1);
        if g.count == 0 && g.closed {
            self.drained.notify_all();
        }
    }

    /// Stops new IO and waits for the IO in flight.
    fn drain(&self) {
        let mut g = self.inflight.lock();
        g.closed = true;
        while g.count != 0 {
            self.drained.wait(&mut g);
        }
    }
}

/// One session's opening of one exported device.
pub(crate) struct SessDev {
    pub(crate) serial: u64,
    pub(crate) mapping_path: KVec<u8>,
    pub(crate) mode: AccessMode,
    pub(crate) target: Arc<Target>,
    pub(crate) dev: Arc<SrvDev>,
    pub(crate) files: Option<Kobject<SessDevFiles>>,
}

impl SessDev {
    /// Closes it (`rnbd_destroy_sess_dev`), once it is out of its session's
    /// table: waits for its IO, removes its sysfs, ends its opening.
    pub(crate) fn close(mut self, srv: &Server, sessname: &BStr) {
        self.target.drain();
        drop(self.files.take());
        srv.put_dev(&self.dev, self.mode);
        pr_info!(
            "<{}@{}>: Device closed\n",
            BStr::from_bytes(&self.mapping_path),
            sessname
        );
    }
}
