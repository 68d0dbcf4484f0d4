// SPDX-License-Identifier: GPL-2.0-or-later

//! The RTRS server: context and listeners (`ctx`), client sessions
//! (`sess`), their paths (`path`) and connections (`conn`), and the C API
//! glue (`Api`).
//!
//! Ownership: the context owns its sessions, a session its paths, a path its
//! connections (each a `CmId<Con>`), MRs and IO slots. References back up
//! (connection to path, path to session, session to context) are `Arc`s;
//! the cycles they form are broken when a path closes (it takes its
//! connections out) and when a session loses its last path.
//!
//! Locking: `Ctx::sessions` > `Session::paths` > `Session::ev`; the
//! per-connection slot locks and per-path state lock are leaves (irq-safe:
//! IO responses come from any context).

pub(crate) mod conn;
pub(crate) mod ctx;
pub(crate) mod params;
pub(crate) mod path;
pub(crate) mod sess;
pub(crate) mod sysfs;

use crate::rb::rtrs_api::srv::{copy_name, OpSlots, ServerApi, UpperOps, UpperPriv};
use kernel::prelude::*;
use kernel::sync::Arc;

/// The implementation of the exported API.
pub(crate) struct Api;

impl ServerApi for Api {
    type Ctx = ctx::Ctx;
    type Sess = sess::Session;
    type Path = path::Path;

    fn open(ops: UpperOps<Self>, port: u16) -> Result<Arc<ctx::Ctx>> {
        ctx::Ctx::open(ops, port)
    }

    fn close(ctx: Arc<ctx::Ctx>) {
        ctx.close();
    }

    fn op_slots(path: &path::Path) -> &OpSlots<path::Path> {
        &path.ops
    }

    fn resp_rdma(path: &Arc<path::Path>, idx: u32, status: i32) -> bool {
        path::Path::resp_rdma(path, idx, status)
    }

    fn set_sess_priv(sess: &sess::Session, priv_: UpperPriv) {
        *sess.priv_.lock() = priv_;
    }

    fn get_path_name(sess: &sess::Session, out: &mut [u8]) -> Result {
        let name = sess
            .connected_path_name()
            .ok_or_else(crate::rb::errno::ENOTCONN)?;
        copy_name(name.as_bytes(), out);
        Ok(())
    }

    fn get_queue_depth(sess: &sess::Session) -> i32 {
        sess.queue_depth as i32
    }
}
