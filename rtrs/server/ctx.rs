// SPDX-License-Identifier: GPL-2.0-or-later

//! The server context (`rtrs_srv_open`): listeners on all devices, for IP
//! and native IB, and the sessions that come in through them.

use super::abi::UpperOps;
use super::params::{Params, MAX_HDR_SIZE};
use super::path::Path;
use super::sess::Session;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::{c_str, new_mutex};
use rb::kvec::VecExt;
use rb::net::SockAddr;
use rb::workqueue::OwnedQueue;
use rb_rdma::{ConnectRequest, ListenHandler, Listener};
use rtrs_proto::msg::{ConnReq, ConnReqFault, ConnRsp, PROTO_VER_MAJOR};

/// The server context: what `rtrs_srv_open` returns.
///
/// # Locking
///
/// `sessions` > a session's `paths`. `listeners` is taken alone, and only
/// to put listeners in or take them out: dropping one waits for its
/// running connection handlers, which take `sessions`. Both are mutexes
/// (CM handlers and `close` run in process context).
#[pin_data]
pub(crate) struct Ctx {
    /// The upper layer's callbacks.
    pub(crate) upper: UpperOps,
    /// The module parameters, as they were at `rtrs_srv_open`.
    pub(crate) params: Params,
    /// Where paths close and heartbeats run (`rtrs_server_wq`).
    pub(crate) wq: OwnedQueue,
    /// The sessions.
    #[pin]
    pub(crate) sessions: Mutex<KVec<Arc<Session>>>,
    /// The IP and IB listeners; empty once closed.
    #[pin]
    listeners: Mutex<KVec<Listener<Ctx>>>,
    /// Set by `close`: no new sessions.
    pub(crate) closing: AtomicBool,
}

impl Ctx {
    pub(crate) fn open(upper: UpperOps, port: u16) -> Result<Arc<Self>> {
        let params = Params::get();
        let ctx = Arc::pin_init(
            try_pin_init!(Ctx {
                upper,
                params,
                wq: OwnedQueue::new(c_str!("rtrs_server_wq"), 0)?,
                sessions <- new_mutex!(KVec::new(), "rtrs_srv_sessions"),
                listeners <- new_mutex!(KVec::new(), "rtrs_srv_listeners"),
                closing: AtomicBool::new(false),
            }? Error),
            GFP_KERNEL,
        )?;
        // Both, or neither (as the C server): IPv6 any (which also takes
        // IPv4) in the TCP port space, and AF_IB in the IB port space.
        let ip = Listener::new(
            ctx.clone(),
            &SockAddr::ipv6([0; 16], 0, port),
            64,
            Some(false),
        )
        .inspect_err(|e| {
            pr_err!(
                "Listening on RDMA connection failed, err: {}\n",
                e.to_errno()
            )
        })?;
        let ib = Listener::new(ctx.clone(), &SockAddr::ib([0; 16], port), 64, None).inspect_err(
            |e| pr_err!("Listening on IB connection failed, err: {}\n", e.to_errno()),
        )?;
        {
            let mut l = ctx.listeners.lock();
            l.push(ip, GFP_KERNEL)?;
            l.push(ib, GFP_KERNEL)?;
        }
        pr_info!("listening on port {}\n", port);
        Ok(ctx)
    }

    /// `rtrs_srv_close`: stop listening, close every path and wait for it.
    pub(crate) fn close(self: Arc<Self>) {
        self.closing.store(true, Ordering::Release);
        // Dropping the listeners waits for their running handlers.
        let listeners = core::mem::take(&mut *self.listeners.lock());
        drop(listeners);
        let sessions: KVec<Arc<Session>> = {
            let s = self.sessions.lock();
            let mut v = KVec::new();
            for sess in s.iter() {
                let _ = v.push(sess.clone(), GFP_KERNEL);
            }
            v
        };
        for sess in sessions.iter() {
            sess.close_paths();
        }
        drop(sessions);
        self.wq.flush();
    }

    fn reject(req: ConnectRequest<'_>, err: Error) {
        let mut msg = [0u8; ConnRsp::SIZE];
        if ConnRsp::reject(err.to_errno()).encode(&mut msg).is_ok() {
            if let Err(e) = req.reject(&msg) {
                pr_err!("rdma_reject(), err: {}\n", e.to_errno());
            }
        }
    }

    /// The session with `paths_uuid`, or a new one if `first_conn`.
    fn get_or_create_session(this: &Arc<Self>, req: &ConnReq) -> Result<Arc<Session>> {
        let mut sessions = this.sessions.lock();
        if let Some(s) = sessions.iter().find(|s| s.paths_uuid == req.paths_uuid) {
            return Ok(s.clone());
        }
        if !req.first_conn {
            pr_err!("Error: Not the first connection request for this session\n");
            return Err(ENXIO);
        }
        let sess = Session::new(this.clone(), req.paths_uuid, this.params)?;
        sessions.push(sess.clone(), GFP_KERNEL)?;
        Ok(sess)
    }

    /// Drops `sess` from the context if it has no path left.
    pub(crate) fn put_session(&self, sess: &Arc<Session>) {
        let gone = {
            let mut sessions = self.sessions.lock();
            if sess.paths.lock().is_empty() {
                sessions
                    .iter()
                    .position(|s| Arc::ptr_eq(s, sess))
                    .and_then(|i| sessions.swap_remove(i))
            } else {
                None
            }
        };
        drop(gone);
    }

    /// The accept's private data (`rtrs_rdma_do_accept()`).
    pub(crate) fn accept_msg(&self, queue_depth: u32) -> [u8; ConnRsp::SIZE] {
        let rsp = ConnRsp::accept(
            queue_depth as u16,
            self.params.max_chunk_size - MAX_HDR_SIZE,
            MAX_HDR_SIZE,
            self.params.always_invalidate,
        );
        let mut msg = [0u8; ConnRsp::SIZE];
        let _ = rsp.encode(&mut msg);
        msg
    }

    /// The reject message for `err` (`rtrs_rdma_do_reject()`).
    pub(crate) fn accept_msg_reject(&self, err: Error) -> [u8; ConnRsp::SIZE] {
        let mut msg = [0u8; ConnRsp::SIZE];
        let _ = ConnRsp::reject(err.to_errno()).encode(&mut msg);
        msg
    }

    /// `exist_pathname()`: whether a path of another session (another
    /// paths uuid) already has `name`.
    pub(crate) fn pathname_taken(&self, name: &[u8], paths_uuid: &rtrs_proto::msg::Uuid) -> bool {
        self.sessions
            .lock()
            .iter()
            .filter(|s| &s.paths_uuid != paths_uuid)
            .any(|s| s.paths.lock().iter().any(|p| p.name().as_bytes() == name))
    }

    /// `rtrs_rdma_connect()`: a connection request from a client.
    fn connect(this: &Arc<Self>, req: ConnectRequest<'_>) {
        // Each fault logged in C's words.
        let msg = match ConnReq::check(req.private_data()) {
            Ok(m) => m,
            Err(f) => {
                match f {
                    ConnReqFault::Short => pr_err!("Invalid RTRS connection request\n"),
                    ConnReqFault::Magic => pr_err!("Invalid RTRS magic\n"),
                    ConnReqFault::Version(v) => pr_err!(
                        "Unsupported major RTRS version: {}, expected {}\n",
                        v,
                        PROTO_VER_MAJOR
                    ),
                    ConnReqFault::TooManyCons(n) => {
                        pr_err!("Too many connections requested: {}\n", n)
                    }
                    ConnReqFault::Cid(cid, n) => pr_err!("Incorrect cid: {} >= {}\n", cid, n),
                }
                return Self::reject(req, rb::errno::ECONNRESET());
            }
        };
        if this.closing.load(Ordering::Acquire) {
            return Self::reject(req, rb::errno::ECONNRESET());
        }
        let sess = match Self::get_or_create_session(this, &msg) {
            Ok(s) => s,
            Err(e) => {
                pr_err!("get_or_create_srv(), error {}\n", e.to_errno());
                return Self::reject(req, e);
            }
        };
        let mut paths = sess.paths.lock();
        let path = match paths.iter().find(|p| p.uuid == msg.sess_uuid) {
            Some(p) => {
                if let Err(e) = p.check_new_con(&msg) {
                    drop(paths);
                    return Self::reject(req, e);
                }
                p.clone()
            }
            None => match Path::new(&sess, &req, &msg, &paths) {
                Ok(p) => {
                    if let Err(e) = paths.push(p.clone(), GFP_KERNEL) {
                        drop(paths);
                        this.put_session(&sess);
                        return Self::reject(req, e.into());
                    }
                    p
                }
                Err(e) => {
                    pr_err!("RTRS server session allocation failed: {}\n", e.to_errno());
                    drop(paths);
                    this.put_session(&sess);
                    return Self::reject(req, e);
                }
            },
        };
        drop(paths);
        if let Err(e) = Path::create_con(&path, req, msg.cid) {
            pr_err!("create_con(), error {}\n", e.to_errno());
            path.close();
        }
    }
}

impl ListenHandler for Ctx {
    fn connect_request(this: &Arc<Self>, req: ConnectRequest<'_>) {
        Self::connect(this, req);
    }
}
