// SPDX-License-Identifier: GPL-2.0-or-later

//! The server context (`rtrs_srv_open`): listeners on all devices, for IP
//! and native IB, while a device is there, and the sessions that come in
//! through them.

use super::abi::UpperOps;
use super::params::{Params, MAX_HDR_SIZE};
use super::path::Path;
use super::sess::Session;
use core::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::{c_str, new_mutex};
use rb::global::Global;
use rb::kvec::VecExt;
use rb::net::SockAddr;
use rb::workqueue::OwnedQueue;
use rb_rdma::cm::{ListenError, ListenStep};
use rb_rdma::{ConnectRequest, Device, IbClient, IbClientOps, ListenHandler, Listener};
use rtrs_proto::msg::{ConnReq, ConnReqFault, ConnRsp, PROTO_VER_MAJOR};

/// The server context: what `rtrs_srv_open` returns.
///
/// # Locking
///
/// `sessions` > a session's `paths`. `listen` is taken alone, by the RDMA
/// core's device callbacks and by `close`: dropping a listener under it
/// waits for the listener's running connection handlers, which take
/// `sessions`, never `listen`. `client` (our `ib_client`, set at open and
/// taken out at close) is taken alone. All are mutexes (CM handlers,
/// device callbacks and `close` run in process context).
#[pin_data]
pub(crate) struct Ctx {
    /// The upper layer's callbacks.
    pub(crate) upper: UpperOps,
    /// The module parameters, as they were at `rtrs_srv_open`.
    pub(crate) params: Params,
    /// The port to listen on.
    port: u16,
    /// Where paths close and heartbeats run (`rtrs_server_wq`).
    pub(crate) wq: OwnedQueue,
    /// The sessions.
    #[pin]
    pub(crate) sessions: Mutex<KVec<Arc<Session>>>,
    /// The devices and the listeners they brought.
    #[pin]
    listen: Mutex<Listening>,
    /// Our client of the RDMA core, until `close`.
    #[pin]
    client: Mutex<Option<Pin<KBox<IbClient<SrvClient>>>>>,
    /// Set by `close`: no new sessions.
    pub(crate) closing: AtomicBool,
    /// Where the ids of new paths (RTRS 2.1) are counted, for all
    /// sessions: an id a client still knows of an old path is unlikely to
    /// name a new one.
    next_path_id: AtomicU16,
}

/// The RDMA devices that are up, and the listeners (IP and IB) the first
/// of them brought (C's `ib_ctx.ib_dev_count`): the server listens while
/// a device is there, as C does.
struct Listening {
    devices: u32,
    listeners: KVec<Listener<Ctx>>,
}

/// The context the device callbacks serve (C's `ib_ctx`): one per module.
static CTX: Global<Arc<Ctx>> = Global::new();

/// Our client of the RDMA core (`rtrs_srv_client`).
struct SrvClient;

impl IbClientOps for SrvClient {
    /// `rtrs_srv_add_one()`.
    fn add(_dev: &Device) -> Result {
        CTX.get().ok_or(ENODEV)?.device_added()
    }

    /// `rtrs_srv_remove_one()`.
    fn remove(_dev: &Device) {
        if let Some(ctx) = CTX.get() {
            ctx.device_removed();
        }
    }
}

impl Ctx {
    /// `rtrs_srv_open()`: registers with the RDMA core, which tells of the
    /// devices; the first one brings the listeners. A bind that fails is
    /// logged and leaves the server without listeners until a device is
    /// added again, as in C; the open succeeds.
    pub(crate) fn open(upper: UpperOps, port: u16) -> Result<Arc<Self>> {
        let params = Params::get();
        let ctx = Arc::pin_init(
            try_pin_init!(Ctx {
                upper,
                params,
                port,
                wq: OwnedQueue::new(c_str!("rtrs_server_wq"), 0)?,
                sessions <- new_mutex!(KVec::new(), "rtrs_srv_sessions"),
                listen <- new_mutex!(
                    Listening {
                        devices: 0,
                        listeners: KVec::new(),
                    },
                    "rtrs_srv_listen"
                ),
                client <- new_mutex!(None, "rtrs_srv_client"),
                closing: AtomicBool::new(false),
                next_path_id: AtomicU16::new(1),
            }? Error),
            GFP_KERNEL,
        )?;
        CTX.set(ctx.clone()).map_err(|_| EBUSY)?;
        match IbClient::<SrvClient>::new(c_str!("rtrs_server")) {
            Ok(c) => *ctx.client.lock() = Some(c),
            Err(e) => {
                drop(CTX.take());
                return Err(e);
            }
        }
        Ok(ctx)
    }

    /// A device came: the first one brings the listeners.
    fn device_added(self: &Arc<Self>) -> Result {
        let mut l = self.listen.lock();
        if l.devices == 0 {
            let listeners = self.listeners().inspect_err(|_| {
                pr_err!("Failed to initialize RDMA connection\n");
            })?;
            l.listeners = listeners;
            pr_info!("listening on port {}\n", self.port);
        }
        l.devices += 1;
        Ok(())
    }

    /// A device goes: the last one takes the listeners.
    fn device_removed(&self) {
        let gone = {
            let mut l = self.listen.lock();
            l.devices = l.devices.saturating_sub(1);
            if l.devices > 0 {
                return;
            }
            core::mem::take(&mut l.listeners)
        };
        // Dropping them waits for their running handlers.
        drop(gone);
    }

    /// `rtrs_srv_rdma_init()`: both listeners, or neither: IPv6 any (which
    /// also takes IPv4) in the TCP port space, and AF_IB in the IB port
    /// space. Each failure is logged as `rtrs_srv_cm_init()` does.
    fn listeners(self: &Arc<Self>) -> Result<KVec<Listener<Ctx>>> {
        let log = |e: ListenError| {
            let what = match e.step {
                ListenStep::Create => "Creating id for RDMA connection failed",
                ListenStep::Bind => "Binding RDMA address failed",
                ListenStep::Listen => "Listening on RDMA connection failed",
            };
            pr_err!("{}, err: {}\n", what, e.err.to_errno());
            e.err
        };
        let mut v = KVec::with_capacity(2, GFP_KERNEL)?;
        let ip = Listener::new(
            self.clone(),
            &SockAddr::ipv6([0; 16], 0, self.port),
            64,
            Some(false),
        )
        .map_err(log)?;
        let ib = Listener::new(self.clone(), &SockAddr::ib([0; 16], self.port), 64, None)
            .map_err(log)?;
        v.push(ip, GFP_KERNEL)?;
        v.push(ib, GFP_KERNEL)?;
        Ok(v)
    }

    /// An id for a new path of a session whose paths are `others`: never
    /// 0, none of theirs. Called under the session's `paths`.
    pub(crate) fn new_path_id(&self, others: &[Arc<Path>]) -> u16 {
        loop {
            let id = self.next_path_id.fetch_add(1, Ordering::Relaxed);
            if id != 0 && !others.iter().any(|p| p.id == id) {
                return id;
            }
        }
    }

    /// `rtrs_srv_close`: stop listening, close every path and wait for it.
    pub(crate) fn close(self: Arc<Self>) {
        self.closing.store(true, Ordering::Release);
        // Unregistering removes every device: the listeners go, after
        // their running handlers.
        let client = self.client.lock().take();
        drop(client);
        let listeners = core::mem::take(&mut self.listen.lock().listeners);
        drop(listeners);
        drop(CTX.take());
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
    /// In RTRS 2.1, with the version, flags and id of `path`.
    pub(crate) fn accept_msg(&self, queue_depth: u32, path: &Path) -> [u8; ConnRsp::SIZE] {
        let mut rsp = ConnRsp::accept(
            queue_depth as u16,
            self.params.max_chunk_size - MAX_HDR_SIZE,
            MAX_HDR_SIZE,
            self.params.always_invalidate,
        );
        let (version, flags) = path.version;
        if version != rsp.version {
            rsp.version = version;
            rsp.flags |= flags;
            rsp.path_id = path.id;
        }
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
        path.connecting_now();
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
