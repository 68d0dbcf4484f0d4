// SPDX-License-Identifier: GPL-2.0-or-later

//! The RNBD server, one concept per file: [`session`] (an RTRS session and
//! the devices it opened), [`device`] (an exported block device and one
//! session's opening of it), [`io`] (block IO), [`sysfs`] and [`params`].
//!
//! Lock order: `Session::ctl` (C's `sess->lock`), then `Server::devs` (C's
//! `dev_lock`), then `Session::devs` (C's `index_idr`), then a target's
//! `inflight`.

use device::DevEntry;
use kernel::alloc::KVec;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow, Mutex};
use rb::global::Global;
use rb_rtrs_srv::{SessRef, SrvIo, SrvUser};
use session::Session;

/// `pr_err!` at most at the kernel's printk rate: for what a client can
/// trigger at will (C's `pr_err_ratelimited`). Textually scoped: the
/// modules below see it.
macro_rules! pr_err_rl {
    ($($arg:tt)*) => {
        ::rb::pr_err_ratelimited!("rnbd_server", $($arg)*)
    };
}

pub(crate) mod device;
pub(crate) mod io;
pub(crate) mod params;
pub(crate) mod session;
pub(crate) mod sysfs;
pub(crate) mod trace;

/// A pure-protocol error as a kernel errno.
pub(crate) fn errno(e: rnbd_proto::error::Error) -> Error {
    Error::from_errno(e.to_errno())
}

/// What the whole module shares: the exported devices and the sysfs they
/// live in.
///
/// # Locking
///
/// `devs` (a mutex) is taken inside a session's `ctl` (open, close), and
/// dropped before a device's sysfs goes.
#[pin_data]
pub(crate) struct Server {
    /// The exported devices, each with the count of its openings (C's
    /// `dev_list` under `dev_lock`).
    #[pin]
    pub(crate) devs: Mutex<KVec<DevEntry>>,
    /// `/sys/class/rnbd-server/ctl/devices`.
    pub(crate) sysfs: sysfs::Sysfs,
}

/// The server, from module init to module exit.
static SERVER: Global<Arc<Server>> = Global::new();

/// The server, if the module is up.
pub(crate) fn server() -> Result<Arc<Server>> {
    SERVER.get().ok_or(ENODEV)
}

/// The module's hold on the [`Server`]: unpublishes it in `Drop`.
pub(crate) struct ServerRef(());

impl ServerRef {
    /// Creates the sysfs (`rnbd_srv_create_sysfs_files`) and publishes the
    /// server.
    pub(crate) fn new() -> Result<Self> {
        let sysfs = sysfs::Sysfs::new()?;
        let srv = Arc::pin_init(
            pin_init!(Server {
                devs <- kernel::new_mutex!(KVec::new(), "rnbd_srv_devs"),
                sysfs,
            }),
            GFP_KERNEL,
        )?;
        SERVER.set(srv).map_err(|_| EBUSY)?;
        Ok(Self(()))
    }
}

impl Drop for ServerRef {
    fn drop(&mut self) {
        if let Some(srv) = SERVER.take() {
            if !srv.devs.lock().is_empty() {
                pr_err!("devices still exported at unload\n");
            }
        }
    }
}

/// Our side of RTRS (`rnbd_srv_link_ev`, `rnbd_srv_rdma_ev`).
pub(crate) struct Handler;

impl SrvUser for Handler {
    type Session = Session;

    fn connected(sess: &SessRef<Self>) -> Result<Arc<Session>> {
        Session::new(sess)
    }

    fn disconnected(sess: Arc<Session>) {
        sess.destroy();
    }

    fn rdma_ev(sess: ArcBorrow<'_, Session>, io: SrvIo<Self>, usr: &[u8]) {
        io::dispatch(sess, io, usr);
    }
}
