// SPDX-License-Identifier: GPL-2.0-or-later

//! The RTRS client: a session (`sess`) of paths (`path`), each with its
//! connections (`conn`) and, while connected, a set of request slots
//! (`req`), one per server chunk.
//!
//! Ownership: the session owns its paths; a path owns its connection slots
//! and its current request set; a connection (the `CmId` handler) holds its
//! path and, once connected, the request set its work requests point at,
//! so that set lives until every QP that used it is drained. The cycles
//! (path -> connection -> path) are broken when a path stops its
//! connections.
//!
//! Locking: `Core::paths` and the per-path state lock are taken from any
//! context (irq-safe); a connection slot lock is held while posting on it;
//! a request's state lock covers its bookkeeping. Order: `Core::paths` >
//! connection slot > request state.

pub(crate) mod conn;
pub(crate) mod path;
pub(crate) mod req;
pub(crate) mod sess;
pub(crate) mod sysfs;

use crate::rb::rtrs_api::clt::{Attrs, ClientApi, OpenArgs, Permits, Request};
use kernel::prelude::*;
use kernel::sync::Arc;

/// The implementation of the exported API.
pub(crate) struct Api;

impl ClientApi for Api {
    type Sess = sess::Sess;

    fn open(args: OpenArgs<'_>) -> Result<Arc<sess::Sess>> {
        sess::Sess::open(args)
    }

    fn close(sess: Arc<sess::Sess>) {
        sess.close();
    }

    fn permits(sess: &sess::Sess) -> &Permits {
        &sess.permits
    }

    fn request(sess: &sess::Sess, req: Request<'_>) -> Result {
        sess.request(req)
    }

    fn rdma_cq_direct(sess: &sess::Sess, index: u32) -> i32 {
        sess.core.poll(index)
    }

    fn query(sess: &sess::Sess) -> Result<Attrs> {
        sess.core.query()
    }
}
