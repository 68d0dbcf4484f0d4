// SPDX-License-Identifier: GPL-2.0-or-later

//! A client path (`struct rtrs_clt_path`): its state machine, the
//! connections it opens to one server address, the INFO handshake, IO on
//! it, failover of its IO when it breaks, and its recovery: error recovery,
//! reconnect with backoff, heartbeats, the silence probe, close.

use super::abi::{ConType, Confirm, Dir, PermitId, Permits};
use super::chunks::CloseFence;
use super::conn::{self, Con, ConExt, CONNECT_TIMEOUT_MS};
use super::params;
use super::req::{Req, ReqSet};
use super::sess::{failover, Core, Fenced};
use super::sysfs::PathFiles;
use super::trace::PathEvent;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::workqueue::{impl_has_work, Work, WorkItem};
use kernel::{new_mutex, new_work};
use rb::net::SockAddr;
use rb::ratelimit::pr_err_ratelimited;
use rb::sync::{new_waitable, SpinLockIrqBackend, Waitable, Waited};
use rb::workqueue::{
    impl_has_delayed_work, new_delayed_work, DelayedWork, DelayedWorkItem, OwnedQueue,
};
use rb_rdma::{
    Access, BorrowedSg, CmId, CmIdRef, Device, DmaAddr, DmaBuf, DmaDirection, MappedSg, MrMapping,
    Pd, SendFlags, SendOp, SendWr, Sge,
};
use rtrs_common::con::SendQueue;
use rtrs_common::dev::DevUse;
use rtrs_common::hb::{Hb, HbPath, HB_WORK};
use rtrs_common::kerr;
use rtrs_common::name::NameBuf;
use rtrs_common::now_ns;
use rtrs_common::slots::ConSlots;
use rtrs_common::sysfs::addrs_name;
use rtrs_proto::chunks::Fence;
use rtrs_proto::con::{CmCell, CmOutcome};
use rtrs_proto::ext::{client_ext, Ext};
use rtrs_proto::hb::{ms_until, unanswered_ms, Probe, ProbeAction, HB_INTERVAL_MS, HB_MISSED_MAX};
use rtrs_proto::imm::Imm;
use rtrs_proto::mr::{max_pages_per_mr, MAX_SEGMENTS};
use rtrs_proto::msg::{
    ConnRsp, InfoRsp, Rbuf, RdmaRead, RdmaWrite, SgDesc, SgList, Uuid, MSG_NEED_INVAL_F,
    MSG_NEW_RKEY_F, SERVICE_CON_QUEUE_DEPTH,
};
use rtrs_proto::path_sel::PathSnapshot;
use rtrs_proto::reconnect::{Attempts, RECONNECT_BACKOFF_MS, RECONNECT_SEED};
use rtrs_proto::state::{CltState, StateCell};

/// How long after a path's close its fence holds the chunks its IO left,
/// when the server does not confirm the close: by then the server has
/// closed the path on its own, after `HB_MISSED_MAX` heartbeats of
/// `HB_INTERVAL_MS` with nothing from us (it checks every interval), with
/// an interval to spare.
const FENCE_MS: u32 = HB_INTERVAL_MS * (HB_MISSED_MAX + 2);

/// An IO to send: what the user asked for, moved between paths on
/// failover. `conf` and `sg` are taken by the path that sends it.
pub(crate) struct Submit {
    pub(crate) dir: Dir,
    /// The user's permit.
    pub(crate) permit: PermitId,
    /// The chunk the permit holds: the server's buffer, and the request
    /// slot on each path.
    pub(crate) idx: u32,
    pub(crate) con_type: ConType,
    pub(crate) cpu: u32,
    pub(crate) mem_off: u32,
    pub(crate) data_len: usize,
    pub(crate) usr_len: usize,
    pub(crate) conf: Option<Confirm>,
    pub(crate) sg: Option<BorrowedSg>,
}

/// What the server told on the first connection (CON_RSP).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SrvParams {
    pub(crate) queue_depth: u32,
    pub(crate) max_hdr_size: u32,
    pub(crate) chunk_size: u32,
    pub(crate) flags: u32,
    pub(crate) signal_interval: u32,
    /// What RTRS 2.1 the path runs, and the server's id of the path.
    pub(crate) ext: Ext,
    pub(crate) path_id: u16,
}

/// The device the first connection resolved to: the path's use of it (its
/// PD, shared with the module's other paths on it).
#[derive(Clone)]
struct DevInfo {
    dev: Arc<DevUse>,
    max_pages_per_mr: u32,
}

impl SrvParams {
    /// The connections receive into buffers of their ring.
    fn rsp_ring(&self) -> bool {
        self.flags & MSG_NEW_RKEY_F != 0 || self.ext.read_rsp
    }
}

impl DevInfo {
    fn pd(&self) -> &Arc<Pd> {
        self.dev.pd()
    }
}

/// A path's name in log lines: `<session> src@dst`, with the source the
/// path is bound to once connected (`rtrs_addr_to_str()`'s format).
pub(crate) struct PathName<'a>(&'a Path);

impl core::fmt::Display for PathName<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let (src, dst) = self.0.addrs();
        let addrs = addrs_name(&src.unwrap_or(SockAddr::ipv4([0; 4], 0)), &dst);
        let name = kernel::str::BStr::from_bytes(self.0.core.name.as_bytes());
        write!(f, "<{}> {}", name, addrs)
    }
}

/// Path statistics (`struct rtrs_clt_stats`), shown in `stats/`.
pub(crate) struct Stats {
    pub(crate) failover_cnt: AtomicU64,
    /// Successful (re)connects, -1 until the first one, as in C.
    pub(crate) reconnect_ok: AtomicI32,
    pub(crate) reconnect_fail: AtomicI32,
    /// `[READ, WRITE]` x `[count, bytes]`.
    pub(crate) rdma: [[AtomicU64; 2]; 2],
    /// Per CPU: completions of its connection that ran elsewhere.
    pub(crate) migr_from: KVec<AtomicI32>,
    /// Per CPU: completions that ran on it for another CPU's connection.
    pub(crate) migr_to: KVec<AtomicI32>,
}

impl Stats {
    fn new() -> Result<Self> {
        let per_cpu = || -> Result<KVec<AtomicI32>> {
            let n = rb::cpu::nr_cpu_ids().get() as usize;
            let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
            for _ in 0..n {
                v.push(AtomicI32::new(0), GFP_KERNEL)?;
            }
            Ok(v)
        };
        Ok(Self {
            failover_cnt: AtomicU64::new(0),
            reconnect_ok: AtomicI32::new(-1),
            reconnect_fail: AtomicI32::new(0),
            rdma: Default::default(),
            migr_from: per_cpu()?,
            migr_to: per_cpu()?,
        })
    }

    /// A completion for connection CPU `con_cpu` ran on this CPU
    /// (`rtrs_clt_update_wc_stats()`).
    pub(crate) fn completion_on(&self, con_cpu: u32) {
        let cpu = rb::cpu::current_cpu();
        if cpu != con_cpu {
            if let Some(c) = self.migr_to.get(cpu as usize) {
                c.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(c) = self.migr_from.get(con_cpu as usize) {
                c.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn reset_rdma(&self) {
        for d in self.rdma.iter().flatten() {
            d.store(0, Ordering::Relaxed);
        }
        self.failover_cnt.store(0, Ordering::Relaxed);
    }

    pub(crate) fn reset_cpu_migr(&self) {
        for c in Iterator::chain(self.migr_from.iter(), self.migr_to.iter()) {
            c.store(0, Ordering::Relaxed);
        }
    }

    pub(crate) fn reset_reconnects(&self) {
        self.reconnect_ok.store(0, Ordering::Relaxed);
        self.reconnect_fail.store(0, Ordering::Relaxed);
    }
}

/// What CM handlers, completions and sysfs change on a path: per connect,
/// per heartbeat, per sysfs access, never per IO.
struct PathInner {
    /// The source address: the user's, or the one the first connection
    /// was bound to (`s.src_addr`); reconnects use it.
    src: Option<SockAddr>,
    /// The device of the first connection; taken out and dropped outside
    /// the lock (freeing a PD may sleep).
    dev: Option<DevInfo>,
    /// What the server told in CON_RSP.
    srv: SrvParams,
    /// The HCA and port of the last connection.
    hca: (NameBuf, u32),
    /// CON_REQ's `first_conn`: a new client session for the server.
    first_conn: bool,
    /// Reconnect attempts since the path was last up.
    attempts: Attempts,
    /// Established connections (C's `connected_cnt`).
    connected: u32,
    /// Connections established whose close the server has not confirmed:
    /// their QPs on the server may still take writes.
    unconfirmed: u32,
    /// The fence of the chunks the last close left, until `unconfirmed`
    /// drops to 0.
    fence: Option<Fence>,
    /// Close works queued and not yet done (what `flush_work()` waits
    /// for).
    closes: u32,
    /// The silence probe's state (`silence_ms`).
    probe: Probe,
}

/// What `init()` builds and the teardown takes apart, in process context.
#[derive(Default)]
struct ConnSet {
    /// CON_REQ's `recon_cnt` of the connections made last: a new count
    /// for each new set, so the server tells it from one it has not closed
    /// yet.
    recon_cnt: u16,
    /// The request slots of the set's connections.
    reqset: Option<Arc<ReqSet>>,
    /// The path is counted in its session's `paths_up`.
    established: bool,
    /// The path is counted in its session's `answering` (its server
    /// answers fences).
    answering: bool,
}

/// The path's work items besides the heartbeat ([`HB_WORK`]).
const RECOVERY_WORK: u64 = 1;
const RECONNECT_WORK: u64 = 2;
const PROBE_WORK: u64 = 3;

/// A client path.
///
/// # Locking
///
/// - `conns` (a mutex) > `inner` (irq-safe spinlock) > a connection's INFO
///   buffers, a request slot's lock; `conns` > `Core::paths_up`. `files`
///   (a mutex) is taken inside the session's `SessFiles::paths`.
/// - `conns` is held while the connections are made, which waits for CM
///   events (`init`), and while they are torn down: no CM handler and no
///   completion takes it. The teardown calls the user with it held (the
///   confirmations of failed-over IO, `link_ev`), so the user must not
///   close or reconnect this path from those callbacks (RNBD does not; it
///   may issue IO, which takes no path lock).
/// - `inner` is a leaf towards the session: dropped before calling into
///   `Core`. The path's name is read under it ([`Path::name`]), so nothing
///   logs while holding it. Its wait queue is every waiter's of the path:
///   what changes under the lock wakes them (`update`), a connection's CM
///   outcome among them ([`Path::con_up`]); so do changes of `state`
///   (`notify`).
/// - The IO path and completions read `state`, `cons` (under RCU), `hb`,
///   `inflight`, `probe_armed` and `stats` without a lock. `inflight` and
///   `probe_armed` pair up with sequentially consistent accesses: an IO
///   counts itself, then looks whether the probe runs; the probe, going
///   idle, says it no longer runs, then looks for IO. One of the two sees
///   the other, so no IO is left unwatched.
#[pin_data]
pub(crate) struct Path {
    pub(crate) core: Arc<Core>,
    pub(crate) uuid: Uuid,
    dst: SockAddr,
    /// Connections: the service one, one per CPU, then the poll queues.
    pub(crate) con_num: u32,
    /// The service connection and the per-CPU ones.
    pub(crate) irq_con_num: u32,
    /// The connections, by cid.
    pub(crate) cons: ConSlots<Path>,
    state: StateCell<CltState>,
    #[pin]
    pub(crate) hb: Hb,
    inflight: AtomicI32,
    /// The silence probe ([`PROBE_WORK`]) is queued or running: set by
    /// the IO that finds it idle, cleared by the probe when no IO is in
    /// flight.
    probe_armed: AtomicBool,
    pub(crate) stats: Stats,
    #[pin]
    inner: Waitable<PathInner, SpinLockIrqBackend>,
    #[pin]
    conns: Mutex<ConnSet>,
    /// The path's sysfs directory, while it has one.
    #[pin]
    pub(crate) files: Mutex<Option<PathFiles>>,
    #[pin]
    hb_work: DelayedWork<Path, HB_WORK>,
    #[pin]
    recovery_work: DelayedWork<Path, RECOVERY_WORK>,
    #[pin]
    reconnect_work: DelayedWork<Path, RECONNECT_WORK>,
    #[pin]
    probe_work: DelayedWork<Path, PROBE_WORK>,
    #[pin]
    close_work: Work<Path>,
}
impl_has_delayed_work!(impl HasDelayedWork<HB_WORK> for Path { self.hb_work });
impl_has_delayed_work!(impl HasDelayedWork<RECOVERY_WORK> for Path { self.recovery_work });
impl_has_delayed_work!(impl HasDelayedWork<RECONNECT_WORK> for Path { self.reconnect_work });
impl_has_delayed_work!(impl HasDelayedWork<PROBE_WORK> for Path { self.probe_work });
impl_has_work! {
    impl HasWork<Path> for Path { self.close_work }
}

impl Path {
    /// `alloc_path()`: a path to `dst`, from `src` if given.
    pub(crate) fn new(
        core: &Arc<Core>,
        src: Option<SockAddr>,
        dst: SockAddr,
        for_new: bool,
    ) -> Result<Arc<Self>> {
        let con_num = rb::cpu::nr_cpu_ids().get() + core.nr_poll_queues + 1;
        let cons = ConSlots::new(con_num)?;
        Arc::pin_init(
            try_pin_init!(Path {
                core: core.clone(),
                uuid: rb::random::uuid(),
                dst,
                con_num,
                irq_con_num: rb::cpu::nr_cpu_ids().get() + 1,
                cons,
                state: StateCell::new(CltState::Connecting),
                hb <- Hb::new(),
                inflight: AtomicI32::new(0),
                probe_armed: AtomicBool::new(false),
                stats: Stats::new()?,
                inner <- new_waitable!(
                    PathInner {
                        src,
                        dev: None,
                        srv: SrvParams::default(),
                        hca: (NameBuf::new(), 0),
                        first_conn: for_new,
                        attempts: Attempts::NONE,
                        connected: 0,
                        unconfirmed: 0,
                        fence: None,
                        closes: 0,
                        probe: Probe::default(),
                    },
                    "rtrs_clt_path"
                ),
                conns <- new_mutex!(ConnSet::default(), "rtrs_clt_conns"),
                files <- new_mutex!(None, "rtrs_clt_path_files"),
                hb_work <- new_delayed_work!("rtrs_clt_hb"),
                recovery_work <- new_delayed_work!("rtrs_clt_recovery"),
                reconnect_work <- new_delayed_work!("rtrs_clt_reconnect"),
                probe_work <- new_delayed_work!("rtrs_clt_probe"),
                close_work <- new_work!("rtrs_clt_close"),
            }? Error),
            GFP_KERNEL,
        )
    }

    /// The path as log lines name it: `<session> src@dst`. Reads `inner`.
    pub(crate) fn name(&self) -> PathName<'_> {
        PathName(self)
    }

    /// The `src@dst` name of the path's sysfs directory, as
    /// `rtrs_addr_to_str()` prints it.
    pub(crate) fn dir_name(&self) -> NameBuf {
        let (src, dst) = self.addrs();
        addrs_name(&src.unwrap_or(SockAddr::ipv4([0; 4], 0)), &dst)
    }

    /// Reconnect attempts since the path was last up.
    pub(crate) fn attempts(&self) -> Attempts {
        self.inner.lock().attempts
    }

    pub(crate) fn state(&self) -> CltState {
        self.state.get()
    }

    /// `rtrs_clt_change_state_get_old()`: `(changed, old)`.
    fn change_state(&self, new: CltState) -> (bool, CltState) {
        let c = self.state.change(new);
        if c.changed {
            self.notify();
        }
        (c.changed, c.old)
    }

    /// `rtrs_clt_change_state_from_to()`.
    fn change_state_from_to(&self, old: CltState, new: CltState) -> bool {
        let changed = self.state.change_from_to(old, new);
        if changed {
            self.notify();
        }
        changed
    }

    /// Wakes those waiting on the path after a change outside `inner` (the
    /// state), and failed-over IO waiting for a chunk, which gives up once
    /// no path can take it.
    fn notify(&self) {
        self.inner.notify_all_locked();
        if let Some(permits) = self.core.permits.get() {
            permits.chunks().wake();
        }
    }

    /// Waits up to `ms` for `done`, evaluated under `inner` whenever the
    /// path wakes its waiters; false on timeout or signal.
    fn wait(&self, ms: u32, mut done: impl FnMut(&Self, &PathInner) -> bool) -> bool {
        self.inner.wait_for(ms, |inner| done(self, inner))
    }

    pub(crate) fn set_connecting_err(&self) {
        self.change_state(CltState::ConnectingErr);
    }

    /// CON_REQ's `first_conn`.
    pub(crate) fn for_new_clt(&self) -> bool {
        self.inner.lock().first_conn
    }

    /// A connection's ESTABLISHED event: unless it failed meanwhile, its
    /// outcome becomes `Established` and it is counted; returns whether.
    ///
    /// `cm` changes to and from `Established` only under `inner`, in this
    /// and [`Path::con_failed`], so the counts follow it exactly.
    pub(crate) fn con_up(&self, cm: &CmCell) -> bool {
        self.inner.update(|i| {
            let up = cm.establish();
            if up {
                i.connected += 1;
                i.unconfirmed += 1;
            }
            up
        })
    }

    /// The server confirmed that its side of an established connection is
    /// closed; when it has for all of them, the fence of the path's last
    /// close lifts.
    pub(crate) fn con_close_confirmed(&self) {
        let lift = self.inner.update(|i| {
            i.unconfirmed = i.unconfirmed.saturating_sub(1);
            if i.unconfirmed == 0 {
                i.fence.take()
            } else {
                None
            }
        });
        if let (Some(f), Some(permits)) = (lift, self.core.permits.get()) {
            self.lift(permits, f);
        }
    }

    /// Lifts fence `f` of this path's close, which the server confirmed.
    fn lift(&self, permits: &Permits, f: Fence) {
        let (n, ms) = permits.chunks().lift(f);
        if n > 0 {
            pr_info!(
                "{}: {} fenced chunks free again after {} ms: the server confirmed the close\n",
                self.name(),
                n,
                ms
            );
        }
    }

    /// A connection failed with `errno` (`flag_error_on_conn()`): counted
    /// no longer if it was established; its opener is woken either way.
    pub(crate) fn con_failed(&self, cm: &CmCell, errno: i32) {
        self.inner.update(|i| {
            if cm.fail(errno) == CmOutcome::Established {
                i.connected = i.connected.saturating_sub(1);
            }
        });
    }

    pub(crate) fn srv(&self) -> SrvParams {
        self.inner.lock().srv
    }

    pub(crate) fn queue_depth(&self) -> u32 {
        self.srv().queue_depth
    }

    /// Whether the server answers with messages (RKEY_RSP with
    /// `always_invalidate`, READ_RSP in RTRS 2.1) that the connections
    /// receive into buffers of their ring, as it told on the last
    /// connection.
    pub(crate) fn rsp_ring(&self) -> bool {
        SrvParams::rsp_ring(&self.srv())
    }

    /// Every how many sends one is signalled, once the server told its
    /// queue depth.
    pub(crate) fn signal_interval(&self) -> u32 {
        self.srv().signal_interval
    }

    pub(crate) fn pd(&self) -> Option<Arc<Pd>> {
        self.inner.lock().dev.as_ref().map(|d| d.pd().clone())
    }

    pub(crate) fn inflight_dec(&self) {
        self.inflight.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn stats_failover(&self) {
        self.stats.failover_cnt.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> PathSnapshot {
        PathSnapshot {
            connected: self.state() == CltState::Connected,
            inflight: self.inflight.load(Ordering::Relaxed),
            latency_ns: self.hb.latency_ns(),
        }
    }

    /// `query_fast_reg_mode()` and the device part of `create_con_cq_qp()`
    /// for the first connection.
    pub(crate) fn attach_device(&self, dev: &Device) -> Result {
        let a = dev.attrs();
        let used = self.core.devs.get(dev, |d| {
            // `rtrs_clt_ib_dev_init()`: requests register their pages.
            if d.attrs().mem_mgt_extensions() {
                Ok(())
            } else {
                pr_err!("Memory registrations not supported.\n");
                Err(rb::errno::EOPNOTSUPP())
            }
        })?;
        let max_pages_per_mr =
            max_pages_per_mr(a.page_size_cap, a.max_mr_size, a.max_fast_reg_page_list_len);
        // Allocated before the spinlock is taken, and the old one freed
        // after it is let go: both may sleep.
        let info = DevInfo {
            dev: Arc::new(used, GFP_KERNEL)?,
            max_pages_per_mr,
        };
        let old = self.inner.lock().dev.replace(info);
        drop(old);
        Ok(())
    }

    /// `rtrs_rdma_conn_established()` for the first connection: the
    /// server's parameters.
    pub(crate) fn learn(&self, id: &CmIdRef<Con>, rsp: &ConnRsp) -> Result {
        let qd = u32::from(rsp.queue_depth);
        let src = id.src_addr();
        let hca = id.device().map(|dev| {
            let mut name = NameBuf::new();
            name.set(dev.name().as_bytes());
            (name, id.port_num())
        });
        let pages = {
            let mut inner = self.inner.lock();
            if inner.srv.queue_depth > 0 && qd != inner.srv.queue_depth {
                inner.attempts = Attempts::Stopped;
                None
            } else {
                inner.srv = SrvParams {
                    queue_depth: qd,
                    max_hdr_size: rsp.max_hdr_size,
                    chunk_size: rsp.chunk_size(),
                    flags: rsp.flags,
                    signal_interval: if qd == 0 {
                        SERVICE_CON_QUEUE_DEPTH
                    } else {
                        qd.min(SERVICE_CON_QUEUE_DEPTH)
                    },
                    ext: client_ext(rsp.version, rsp.flags, id.handler().ext.offered_ext()),
                    path_id: rsp.path_id,
                };
                if let Some(hca) = hca {
                    inner.hca = hca;
                }
                inner.src = Some(src);
                inner.first_conn = true;
                Some(
                    inner
                        .dev
                        .as_ref()
                        .map_or(MAX_SEGMENTS, |d| d.max_pages_per_mr),
                )
            }
        };
        let Some(pages) = pages else {
            pr_err!("{}: Error: queue depth changed\n", self.name());
            pr_err!("{}: Disabling auto-reconnect. Trigger a manual reconnect after issue is resolved\n", self.name());
            return Err(rb::errno::ECONNRESET());
        };
        self.core.learn(qd, rsp.max_io_size, pages);
        pr_info!("{}: {}\n", self.name(), self.srv().ext.log_str());
        Ok(())
    }

    /// `create_cm()`: opens connection `cid` of the set `recon_cnt` and
    /// waits until it is established or failed.
    fn create_cm(self: &Arc<Self>, cid: u16, recon_cnt: u16) -> Result {
        let interval = self.signal_interval();
        let con = Con::new(
            self.clone(),
            cid,
            SendQueue::new(0, interval),
            ConExt::new(cid, recon_cnt),
        )?;
        let id = KBox::new(CmId::new_for(con.clone(), &self.dst)?, GFP_KERNEL)?;
        id.set_reuseaddr(true)?;
        let src = self.inner.lock().src;
        // What the resolution sets off goes through the id's own handler,
        // which needs no slot; we wait for its outcome below.
        let ret = id.resolve_addr(src.as_ref(), &self.dst, CONNECT_TIMEOUT_MS);
        // The slot was empty (`take_all`): nothing to wait for.
        self.cons.replace(cid, id)?;
        if let Err(e) = ret {
            pr_err!(
                "{}: Failed to resolve address, err: {}\n",
                self.name(),
                e.to_errno()
            );
            return Err(e);
        }
        let waited = self.inner.wait_for_outcome(CONNECT_TIMEOUT_MS, |_| {
            con.ext.cm.get() != CmOutcome::Pending || self.state() != CltState::Connecting
        });
        match waited {
            Waited::Done => {}
            Waited::TimedOut => return Err(rb::errno::ETIMEDOUT()),
            // As C: the caller's system call may restart.
            Waited::Interrupted => return Err(ERESTARTSYS),
        }
        match con.ext.cm.get() {
            CmOutcome::Failed(e) => Err(Error::from_errno(e)),
            _ if self.state() != CltState::Connecting => Err(rb::errno::ECONNABORTED()),
            _ => Ok(()),
        }
    }

    /// `init_conns()`: opens all connections, then the request slots.
    fn init_conns(self: &Arc<Self>, set: &mut ConnSet) -> Result {
        // Each new set of connections has a new reconnect counter, so the
        // server tells it from a previous one it has not closed yet.
        set.recon_cnt = set.recon_cnt.wrapping_add(1);
        // The previous connections are destroyed: no event of theirs comes,
        // and a fence of theirs lifts at its deadline.
        self.inner.update(|i| {
            i.unconfirmed = 0;
            i.fence = None;
        });
        let ret = (|| {
            for cid in 0..self.con_num {
                self.create_cm(cid as u16, set.recon_cnt)?;
            }
            let (srv, dev) = {
                let inner = self.inner.lock();
                (inner.srv, inner.dev.clone())
            };
            let dev = dev.ok_or(ENODEV)?;
            let rs = ReqSet::new(dev.pd(), srv, dev.max_pages_per_mr)?;
            for cid in 0..self.con_num {
                self.cons.with(cid as u16, |id| {
                    id.handler().ext.set_reqs(rs.clone());
                    Ok(())
                })?;
            }
            set.reqset = Some(rs);
            Ok(())
        })();
        if ret.is_err() {
            self.destroy_conns(set);
            // Never took the asynchronous way: keep reconnecting.
            self.change_state(CltState::ConnectingErr);
        }
        ret
    }

    /// `rtrs_send_path_info()`: INFO_REQ with the session name; waits for
    /// INFO_RSP and the receives for IO.
    fn send_path_info(self: &Arc<Self>) -> Result {
        let qd = self.queue_depth();
        // The buffers first: allocating may sleep, and `cons.with` is an RCU
        // read-side section.
        let ret = conn::info_bufs(self, qd)
            .and_then(|bufs| self.cons.with(0, |id| conn::send_info(id, bufs)))
            .and_then(|()| {
                self.wait(CONNECT_TIMEOUT_MS, |p, _| p.state() != CltState::Connecting);
                match self.state() {
                    CltState::Connected => Ok(()),
                    CltState::ConnectingErr => Err(rb::errno::ECONNRESET()),
                    _ => Err(rb::errno::ETIMEDOUT()),
                }
            });
        if ret.is_err() {
            self.change_state(CltState::ConnectingErr);
        }
        ret
    }

    /// `process_info_rsp()` and `post_recv_path()`: the server's chunks.
    pub(crate) fn info_rsp(&self, conn: &CmIdRef<Con>, rx: &DmaBuf, len: usize) -> Result {
        let srv = self.srv();
        let size = InfoRsp::wire_size(srv.queue_depth as usize)
            .ok_or(EINVAL)?
            .min(len)
            .min(rx.len());
        let mut buf = KVec::from_elem(0u8, size, GFP_ATOMIC)?;
        rx.read(0, &mut buf)?;
        let rsp = InfoRsp::decode(&buf).map_err(|e| {
            pr_err!("{}: Path info response is malformed\n", self.name());
            kerr(e)
        })?;
        let rs = conn.handler().ext.reqs()?;
        let mut rbufs = KVec::from_elem(Rbuf::default(), srv.queue_depth as usize, GFP_ATOMIC)?;
        rsp.map_rbufs(srv.chunk_size, &mut rbufs).map_err(|e| {
            pr_err!("{}: Incorrect sg vector, not fully mapped\n", self.name());
            kerr(e)
        })?;
        for (slot, r) in rs.rbufs.iter().zip(rbufs.iter()) {
            slot.set(*r);
        }
        // `x2`: for read responses plus key invalidations.
        for cid in 0..self.con_num {
            let q = if cid == 0 {
                SERVICE_CON_QUEUE_DEPTH
            } else {
                srv.queue_depth
            } * 2;
            self.cons
                .with(cid as u16, |id| conn::post_recv_io(id, q, srv.rsp_ring()))
                .inspect_err(|e| {
                    pr_err!("{}: post_recv_io(), err: {}\n", self.name(), e.to_errno())
                })?;
        }
        Ok(())
    }

    /// The INFO handshake ended: the path is connected, or connecting failed.
    pub(crate) fn info_done(&self, ok: bool) {
        self.change_state(if ok {
            CltState::Connected
        } else {
            CltState::ConnectingErr
        });
    }

    /// `init_path()`: connections, handshake, and the path is up.
    pub(crate) fn init(self: &Arc<Self>) -> Result {
        let mut set = self.conns.lock();
        let ret = self
            .init_conns(&mut set)
            .and_then(|()| self.send_path_info());
        match ret {
            Ok(()) => {
                self.core.path_up();
                self.stats.reconnect_ok.fetch_add(1, Ordering::Relaxed);
                set.established = true;
                if self.srv().ext.fence {
                    self.core.answering.fetch_add(1, Ordering::AcqRel);
                    set.answering = true;
                }
                self.inner.lock().attempts = Attempts::NONE;
                Hb::start(self);
                Ok(())
            }
            Err(e) => {
                let hca = self.hca();
                pr_err!(
                    "{}: init_path() failed: err={} [{}:{}]\n",
                    self.name(),
                    e.to_errno(),
                    hca.0,
                    hca.1
                );
                Err(e)
            }
        }
    }

    /// Destroys the connections of a failed `init_conns()`.
    fn destroy_conns(&self, set: &mut ConnSet) {
        let ids = self.cons.take_all();
        for id in ids.iter() {
            conn::retire(id.handler());
            let _ = id.disconnect();
            id.drain();
        }
        drop(ids);
        // Taken out and dropped outside the spinlock: deregistering MRs
        // and freeing the PD may sleep.
        drop(set.reqset.take());
        let dev = self.inner.lock().dev.take();
        drop(dev);
    }

    /// The fence for the chunks of this close, if the server has not
    /// confirmed the close of every connection established: it lifts when
    /// it has, or `FENCE_MS` from now.
    fn close_fence(&self) -> Option<CloseFence> {
        let permits = self.core.permits.get()?;
        let deadline = now_ns() + i64::from(FENCE_MS) * 1_000_000;
        let mut inner = self.inner.lock();
        if inner.unconfirmed == 0 {
            return None;
        }
        let fence = *inner
            .fence
            .get_or_insert_with(|| permits.chunks().new_fence());
        Some(CloseFence {
            fence,
            deadline_ns: deadline,
            awaited: None,
        })
    }

    /// `rtrs_clt_stop_and_destroy_conns()`: disconnect, fail the IO over,
    /// tell the session, destroy. A running `init` finishes first.
    fn stop_and_destroy_conns(self: &Arc<Self>) {
        let mut set = self.conns.lock();
        Hb::stop(&**self);
        self.stop_probe();
        // Disconnect and flush: every request now completes with an error
        // or not at all, so the slots can be taken over. Every QP goes to
        // the error state before the first drain waits, so that their
        // flushes run together.
        let ids = self.cons.take_all();
        for id in ids.iter() {
            let _ = id.disconnect();
        }
        for id in ids.iter() {
            id.drain();
        }
        // The server's chunks are shared by the session's paths. A write of
        // this path still on its way (sent, not acknowledged: flushed here)
        // may land in the server's memory later: READ descriptors with this
        // path's rkey (a remote access error on another path), or another
        // write's data (a NIC whose cable was pulled sends what it held
        // when the cable comes back). The server confirms the close only
        // once its QP is in the error state, which takes no more writes;
        // without that, it closes the path by itself once our heartbeats
        // stop. Until the one or the other, the chunks of this path's IO
        // are fenced, and the IO fails over at once on other chunks.
        if core::mem::replace(&mut set.answering, false) {
            self.core.answering.fetch_sub(1, Ordering::AcqRel);
            // The answers to fences this path carried will not come.
            if let Some(permits) = self.core.permits.get() {
                permits.chunks().drop_answers_via(self.srv().path_id);
            }
        }
        let mut fence = self.close_fence();
        // RTRS 2.1: the server closes its side on another path's word and
        // answers this path's IO first; then nothing of it lands any more,
        // and the IO fails over on its own chunks. An answer that is late
        // lifts the chunks' fence when it comes: the fence knows it from
        // its first chunk on.
        let (mut late, mut answered) = (None, false);
        if let Some(cf) = fence.as_mut() {
            let f = cf.fence;
            // Only for IO to fail over: a close with none needs no fence.
            if self.inflight.load(Ordering::Relaxed) > 0 {
                match self.core.fence(self) {
                    Fenced::Answered => {
                        answered = true;
                        self.inner.update(|i| {
                            if i.fence == Some(f) {
                                i.fence = None;
                            }
                        });
                    }
                    Fenced::Pending(a) => {
                        cf.awaited = Some(a);
                        late = Some(a);
                    }
                    Fenced::NotSent => {}
                }
            }
        }
        if answered {
            // No chunk is fenced.
            fence = None;
        }
        let mut moved = 0;
        if let Some(rs) = set.reqset.take() {
            let mut usr = KVec::new();
            for r in rs.reqs.iter() {
                if let Some(parts) = r.take_for_failover(self, &mut usr) {
                    moved += failover(&self.core, self, parts, &usr, fence) as u32;
                }
            }
        }
        if fence.is_some() && moved > 0 {
            pr_info!(
                "{}: {} IOs failed over on other chunks; theirs wait for the server to confirm the close, {} ms at most\n",
                self.name(),
                moved,
                FENCE_MS
            );
        }
        if let Some(a) = late {
            // The chunk fence knew the answer before the fence is forgotten:
            // an answer that came meanwhile was seen by the one or the other.
            if self.core.fences.forget(a.path_id, a.seq) {
                if let (Some(cf), Some(permits)) = (fence, self.core.permits.get()) {
                    self.lift(permits, cf.fence);
                }
            }
        }
        // Confirmed while the IO failed over: the confirmation lifted the
        // fence before the last chunks went to it. Lifting again frees them.
        if let Some(CloseFence { fence: f, .. }) = fence {
            let confirmed = self.inner.update(|i| {
                if i.unconfirmed == 0 {
                    i.fence = None;
                }
                i.unconfirmed == 0
            });
            if let (true, Some(permits)) = (confirmed, self.core.permits.get()) {
                self.lift(permits, f);
            }
        }
        if core::mem::replace(&mut set.established, false) {
            self.core.path_down();
        }
        // Graceful shutdown: the peer's disconnect events. If the peer is
        // gone, this waits the whole timeout, as in C; a signal ends the
        // wait sooner, so the log says how long it was.
        let start = now_ns();
        if !self.wait(CONNECT_TIMEOUT_MS, |_, inner| inner.connected == 0) {
            // Read before logging: the name is read under `inner` too.
            let connected = self.inner.lock().connected;
            pr_warn!(
                "{}: {} connections not disconnected after {} ms; destroying them\n",
                self.name(),
                connected,
                (now_ns() - start) / 1_000_000
            );
        }
        for id in ids.iter() {
            conn::retire(id.handler());
        }
        // Each QP and CQ go before their id (`CmId`). The PD, the request
        // slots' MRs and buffers may go after the ids: they hold the device
        // registered (`DeviceRef`), so a device being removed waits for
        // them. Outside the spinlock: freeing the PD may sleep.
        let dev = self.inner.lock().dev.take();
        drop(dev);
        drop(ids);
    }

    /// `rtrs_rdma_error_recovery()`. Taking a connected path down is
    /// logged with the caller, the reason being there.
    #[track_caller]
    pub(crate) fn error_recovery(self: &Arc<Self>) {
        self.trace(PathEvent::ErrorRecovery);
        if self.change_state_from_to(CltState::Connected, CltState::Reconnecting) {
            pr_info!(
                "{}: reconnecting the path ({})\n",
                self.name(),
                rtrs_common::CallSite::here()
            );
            DelayedWork::<Path, RECOVERY_WORK>::schedule(self, &self.core.failover_wq, 0);
        } else {
            // Errors while connecting: the waiter cleans up.
            self.change_state_from_to(CltState::Connecting, CltState::ConnectingErr);
        }
    }

    /// `rtrs_clt_close_conns()`: closes the path in the background, and
    /// waits for it if `wait`.
    pub(crate) fn close_conns(self: &Arc<Self>, wait: bool) {
        self.trace(PathEvent::CloseConns);
        if self.change_state(CltState::Closing).0 {
            self.inner.update(|i| i.closes += 1);
            if self.core.wq.queue().enqueue(self.clone()).is_err() {
                // Queued already: that run counts down once.
                self.inner.update(|i| i.closes -= 1);
            }
        }
        if wait {
            // Until the close work ran, as C's `flush_work()`, and
            // uninterruptibly: the work always ends, and a signal pending
            // on the writer of a sysfs file must not make this a busy loop.
            self.inner.wait_until(|i| i.closes == 0);
        }
    }

    /// sysfs `reconnect` (`rtrs_clt_reconnect_from_sysfs()`): reconnects
    /// now and waits for the outcome. `EBUSY` unless the path is connected,
    /// closed or already reconnecting; `ENOTCONN` if it did not come up.
    pub(crate) fn reconnect_now(self: &Arc<Self>) -> Result {
        let (changed, old) = self.change_state(CltState::Reconnecting);
        if changed {
            self.inner.lock().attempts = Attempts::NONE;
            self.stop_and_destroy_conns();
            DelayedWork::<Path, RECONNECT_WORK>::schedule(self, &self.core.wq, 0);
        }
        if !changed && old != CltState::Reconnecting {
            return Err(EBUSY);
        }
        DelayedWork::<Path, RECONNECT_WORK>::flush(self);
        if self.state() == CltState::Connected {
            Ok(())
        } else {
            Err(rb::errno::ENOTCONN())
        }
    }

    /// Closes the path for good (the first half of
    /// `rtrs_clt_remove_path_from_sysfs()`): true if this call made it
    /// `DEAD`, false if someone else did.
    pub(crate) fn kill(self: &Arc<Self>) -> bool {
        loop {
            self.close_conns(true);
            let (changed, old) = self.change_state(CltState::Dead);
            if changed || old == CltState::Dead {
                return changed;
            }
        }
    }

    /// The HCA and port of the last connection (sysfs `hca_name`,
    /// `hca_port`).
    pub(crate) fn hca(&self) -> (NameBuf, u32) {
        self.inner.lock().hca
    }

    /// Source (resolved once connected) and destination address.
    pub(crate) fn addrs(&self) -> (Option<SockAddr>, SockAddr) {
        (self.inner.lock().src, self.dst)
    }

    /// The last heartbeat round trip (sysfs `cur_latency`).
    pub(crate) fn cur_latency_ns(&self) -> i64 {
        self.hb.latency_ns()
    }

    /// IO in flight on the path.
    pub(crate) fn inflight(&self) -> i32 {
        self.inflight.load(Ordering::Relaxed)
    }

    /// A response to request `msg_id` (`process_io_rsp()`).
    pub(crate) fn io_rsp(
        self: &Arc<Self>,
        conn: &CmIdRef<Con>,
        msg_id: u32,
        errno: i32,
        w_inval: bool,
    ) {
        let Ok(rs) = conn.handler().ext.reqs() else {
            return;
        };
        // A server that answers what was not asked may answer the next IO
        // of the slot early too: no answer of this path is trusted again.
        let Some(req) = rs.reqs.get(msg_id as usize) else {
            pr_err!(
                "{}: response for request {} of {}\n",
                self.name(),
                msg_id,
                rs.reqs.len()
            );
            self.error_recovery();
            return;
        };
        // Taken with every answer: a SEND_WITH_INV counts only for the
        // answer right after it.
        let inval = conn.handler().ext.take_inval();
        let w_inval = w_inval && self.invalidated(inval, req, msg_id);
        if !req.complete(conn, errno, true, w_inval) {
            pr_err!(
                "{}: response for request {}, which is not in flight\n",
                self.name(),
                msg_id
            );
            self.error_recovery();
        }
    }

    /// Whether the server's answer to request `msg_id`, which says it
    /// invalidated the request's registration, did: only the SEND_WITH_INV
    /// of its rkey, received just before the answer (`inval`), does. Else
    /// the client invalidates the registration itself, so that the server
    /// keeps no key to pages given back to the user.
    fn invalidated(&self, inval: Option<u32>, req: &Req, msg_id: u32) -> bool {
        let rkey = req.mr.rkey();
        if inval == Some(rkey) {
            return true;
        }
        pr_err_ratelimited!(
            "rtrs_clt_inval_claim",
            "{}: response for request {} claims an invalidation of rkey {:#x} it did not make; invalidating it here\n",
            self.name(),
            msg_id,
            rkey
        );
        false
    }

    /// Polls poll queue (connection) `cid` (`ib_process_cq_direct()`, which
    /// may run on several CPUs at once for one CQ, as in C).
    pub(crate) fn poll(&self, cid: u32) -> i32 {
        self.cons
            .with(cid as u16, |id| id.poll_cq(-1))
            .map_or(0, |n| n as i32)
    }

    /// Sends an IO on this path (`rtrs_clt_get_req()` and
    /// `rtrs_clt_{read,write}_req()`). On error the IO's confirmation and
    /// pages are back in `parts`, for the next path.
    pub(crate) fn submit(
        self: &Arc<Self>,
        parts: &mut Submit,
        fill: &dyn Fn(&mut [u8]) -> Result<usize>,
    ) -> Result {
        let cid = match parts.con_type {
            ConType::Io => parts.cpu % rb::cpu::nr_cpu_ids() + 1,
            ConType::Admin => 0,
        };
        self.cons.with(cid as u16, |id| {
            let rs = id.handler().ext.reqs()?;
            let req = rs.reqs.get(parts.idx as usize).ok_or(EINVAL)?;
            self.check_size(rs, parts)?;
            let (size, iu_addr, reg) = Self::claim(rs, req, parts, fill)?;
            // SeqCst: see `probe_armed` (# Locking).
            self.inflight.fetch_add(1, Ordering::SeqCst);
            let ret = self.post_req(id, rs, parts, size, iu_addr, reg);
            if ret.is_err() {
                let mut st = req.st.lock();
                st.in_use = false;
                let mapped = st.mapped.take();
                st.need_inval = false;
                parts.conf = st.conf.take();
                parts.sg = st.sg.take();
                drop(st);
                // Unmapped outside the slot's lock, as in `Req::finish()`.
                drop(mapped);
                self.inflight.fetch_sub(1, Ordering::Relaxed);
            } else {
                let d = (parts.dir == Dir::Write) as usize;
                self.stats.rdma[d][0].fetch_add(1, Ordering::Relaxed);
                let bytes = parts.data_len as u64 + parts.usr_len as u64;
                self.stats.rdma[d][1].fetch_add(bytes, Ordering::Relaxed);
                self.watch();
            }
            ret
        })
    }

    /// Starts the silence probe for the IO just posted, unless it runs
    /// (`silence_ms`). Any context.
    fn watch(self: &Arc<Self>) {
        if self.probe_armed.load(Ordering::SeqCst) || params::silence_ms() == 0 {
            return;
        }
        if !self.probe_armed.swap(true, Ordering::SeqCst) {
            DelayedWork::<Path, PROBE_WORK>::schedule(self, &self.core.failover_wq, 0);
        }
    }

    /// Stops the silence probe: it may not fail a path that is down
    /// already. Process context.
    fn stop_probe(&self) {
        DelayedWork::<Path, PROBE_WORK>::cancel_sync(self);
        self.inner.lock().probe = Probe::default();
        self.probe_armed.store(false, Ordering::SeqCst);
    }

    /// The IO fits the server's chunks and the slot's buffer (`EMSGSIZE`:
    /// it fits no path of the session).
    fn check_size(&self, rs: &ReqSet, parts: &Submit) -> Result {
        let read = parts.dir == Dir::Read;
        let hdr_len = match parts.dir {
            Dir::Read => 8 + parts.sg.as_ref().map_or(0, |s| s.count()) as usize * 16,
            Dir::Write => 4,
        };
        if parts.usr_len + hdr_len > rs.srv.max_hdr_size as usize {
            pr_warn!(
                "{} request failed, user message size is {} and header length {}, but max size is {}\n",
                if read { "Read" } else { "Write" },
                parts.usr_len,
                hdr_len,
                rs.srv.max_hdr_size
            );
            return Err(rb::errno::EMSGSIZE());
        }
        let hdr = if read {
            RdmaRead::SIZE
        } else {
            RdmaWrite::SIZE
        };
        let tsize = hdr + parts.data_len + parts.usr_len;
        if tsize > rs.srv.chunk_size as usize {
            pr_warn!(
                "{}: request failed, size too big {} > {}\n",
                self.name(),
                tsize,
                rs.srv.chunk_size
            );
            return Err(rb::errno::EMSGSIZE());
        }
        Ok(())
    }

    /// Takes slot `req` for the IO in `parts`: maps and registers the
    /// user's pages (fast registration) and writes the user's message, then
    /// the RTRS message, into the slot's buffer. The slot's lock is held
    /// only to reserve the slot and to publish the IO into it; the work in
    /// between runs with interrupts on, as C's does (its permit owns the
    /// request). Returns the messages' size, the buffer's DMA address and
    /// the registration, if the pages are registered. On error the slot
    /// stays free and `parts` keeps the IO.
    fn claim(
        rs: &ReqSet,
        req: &super::req::Req,
        parts: &mut Submit,
        fill: &dyn Fn(&mut [u8]) -> Result<usize>,
    ) -> Result<(usize, DmaAddr, Option<MrMapping>)> {
        {
            let mut st = req.st.lock();
            if st.in_use || st.building {
                return Err(EBUSY);
            }
            st.building = true;
        }
        // While `building`, nothing but this call touches the slot's MR
        // and buffer: completions and failover look only at slots in use.
        let built = Self::build(rs, req, parts, fill);
        let mut st = req.st.lock();
        st.building = false;
        let (size, iu_addr, mapped, reg) = built?;
        st.in_use = true;
        st.dir = parts.dir;
        st.permit = parts.permit;
        st.data_len = parts.data_len;
        st.usr_len = parts.usr_len;
        st.con_type = parts.con_type;
        st.cpu = parts.cpu;
        st.mem_off = parts.mem_off;
        st.conf = parts.conf.take();
        st.sg = parts.sg.take();
        st.mapped = mapped;
        st.need_inval = reg.is_some();
        st.pending = None;
        st.posted_ns = now_ns();
        Ok((size, iu_addr, reg))
    }

    /// The work of [`Path::claim`] on a reserved slot. On error the pages
    /// are unmapped again.
    fn build(
        rs: &ReqSet,
        req: &super::req::Req,
        parts: &Submit,
        fill: &dyn Fn(&mut [u8]) -> Result<usize>,
    ) -> Result<(usize, DmaAddr, Option<MappedSg>, Option<MrMapping>)> {
        let read = parts.dir == Dir::Read;
        let (mapped, reg) = match parts.sg.as_ref() {
            Some(sg) => {
                let dir = if read {
                    DmaDirection::FromDevice
                } else {
                    DmaDirection::ToDevice
                };
                let m = sg.map(rs.pd.device(), dir)?;
                let reg = req.mr.map_sg_next_key(&m, 4096)?;
                (Some(m), Some(reg))
            }
            None => (None, None),
        };
        let mut iu = req.iu.lock();
        let cap = iu.len();
        let size = iu.fill(0, cap, |buf| {
            let n = fill(buf)?;
            let rest = buf.get_mut(n..).ok_or(EINVAL)?;
            let m = if read {
                let desc = reg.map(|r| SgDesc {
                    addr: r.iova,
                    key: r.rkey,
                    len: r.length as u32,
                });
                let msg = RdmaRead {
                    usr_len: n as u16,
                    flags: if desc.is_some() { MSG_NEED_INVAL_F } else { 0 },
                    descs: match desc.as_ref() {
                        Some(d) => SgList::new(core::slice::from_ref(d)),
                        None => SgList::empty(),
                    },
                };
                msg.encode(rest).map_err(kerr)?
            } else {
                RdmaWrite { usr_len: n as u16 }.encode(rest).map_err(kerr)?
            };
            Ok(n + m)
        })?;
        Ok((size, iu.dma_addr(0)?, mapped, reg))
    }

    /// Posts the IO of slot `req`, which [`Path::claim`] prepared.
    fn post_req(
        &self,
        id: &CmIdRef<Con>,
        rs: &ReqSet,
        parts: &Submit,
        size: usize,
        iu_addr: DmaAddr,
        reg: Option<MrMapping>,
    ) -> Result {
        let read = parts.dir == Dir::Read;
        let lkey = rs.pd.local_dma_lkey();
        let imm = Imm::IoReq {
            payload: parts.mem_off + (parts.data_len + parts.usr_len) as u32,
        }
        .encode();
        let rbuf = rs.rbufs.get(parts.idx as usize).ok_or(EINVAL)?.get();
        let flags = id.handler().sq.next_flags();
        let i = parts.idx as usize;
        let iu_sge = Sge::new(iu_addr, size as u32, lkey);
        // A READ's message goes behind the room for its data in the chunk,
        // and its registered pages are for the server to write into; a
        // WRITE sends its registered pages, then its message, to the
        // chunk's start (C's `rtrs_clt_read_req()`, `rtrs_clt_write_req()`).
        let (remote_addr, access, pages) = if read {
            let rw = Access::LOCAL_WRITE.union(Access::REMOTE_WRITE);
            (rbuf.addr + parts.data_len as u64, rw, None)
        } else {
            (rbuf.addr, Access::LOCAL_WRITE, reg.map(|r| r.sge()))
        };
        let sge_buf = [pages.unwrap_or(iu_sge), iu_sge];
        let sges = if pages.is_some() {
            &sge_buf[..]
        } else {
            &sge_buf[1..]
        };
        let op = SendOp::RdmaWriteWithImm {
            remote_addr,
            rkey: rbuf.rkey,
            imm,
        };
        let registered = reg.is_some();
        let ret = id.post_chain::<2, _>(|h: &Con, chain| {
            let r = h.ext.reqs()?.reqs.get(i).ok_or(EINVAL)?;
            if registered {
                let reg_mr = SendOp::RegMr { mr: &r.mr, access };
                chain.push(SendWr::new(&h.reg_cqe, reg_mr, &[], SendFlags::empty()))?;
            }
            chain.push(SendWr::new(&r.iu_cqe, op, sges, flags))
        });
        if let Err(e) = &ret {
            pr_err!(
                "{}: {} request failed: error={}\n",
                self.name(),
                if read { "Read" } else { "Write" },
                e.to_errno()
            );
        }
        ret
    }
}

impl HbPath for Path {
    fn hb_queue(&self) -> &OwnedQueue {
        &self.core.wq
    }

    fn hb_connected(&self) -> bool {
        self.state() == CltState::Connected
    }

    fn cons(&self) -> &ConSlots<Path> {
        &self.cons
    }

    /// The oldest IO waiting for the server, once it has waited longer
    /// than `io_deadline_s`. A look at each slot's lock, per tick.
    fn unanswered(&self, now_ns: i64) -> Option<(u32, u64)> {
        let deadline_ms = params::io_deadline_ms();
        if deadline_ms == 0 {
            return None;
        }
        self.cons
            .with(0, |id| {
                let rs = id.handler().ext.reqs()?;
                let oldest = rs
                    .reqs
                    .iter()
                    .filter_map(|r| {
                        let st = r.st.lock();
                        // A slot whose LOCAL_INV is pending has its answer.
                        (st.in_use && st.pending.is_none()).then_some((r.idx, st.posted_ns))
                    })
                    .min_by_key(|&(_, t)| t);
                Ok(oldest
                    .and_then(|(idx, t)| unanswered_ms(t, now_ns, deadline_ms).map(|ms| (idx, ms))))
            })
            .ok()
            .flatten()
    }
}

impl DelayedWorkItem<HB_WORK> for Path {
    /// `hb_work()`.
    fn run(this: Arc<Self>) {
        Hb::run(this);
    }
}

impl DelayedWorkItem<PROBE_WORK> for Path {
    /// The silence probe ([`Probe`]): while IO is in flight on a connected
    /// path, a path that hears nothing from its server for `silence_ms`,
    /// a heartbeat unanswered among it, fails, and its IO fails over to
    /// another path that is up. C's client waits for the QP's retries
    /// (for ever on rxe) or the heartbeats (35 s).
    fn run(this: Arc<Self>) {
        if this.state() != CltState::Connected {
            this.probe_armed.store(false, Ordering::SeqCst);
            return;
        }
        let now = rb::time::coarse_ns();
        let in_flight = this.inflight.load(Ordering::SeqCst) > 0;
        let may_fail = in_flight && this.core.other_path_up(&this);
        let action = this.inner.lock().probe.step(
            now,
            this.hb.last_rx_ns(),
            in_flight,
            params::silence_ms(),
            may_fail,
        );
        let at_ns = match action {
            ProbeAction::Idle => {
                this.probe_armed.store(false, Ordering::SeqCst);
                // An IO counted before the store found the probe armed.
                if this.inflight.load(Ordering::SeqCst) > 0
                    && !this.probe_armed.swap(true, Ordering::SeqCst)
                {
                    DelayedWork::<Path, PROBE_WORK>::schedule(&this, &this.core.failover_wq, 0);
                }
                return;
            }
            ProbeAction::Wait { at_ns } => at_ns,
            ProbeAction::Send { at_ns } => {
                if Hb::probe(&this).is_err() {
                    return;
                }
                at_ns
            }
            ProbeAction::Fail {
                silent_ms,
                probe_ms,
                send_late_ms,
            } => {
                pr_err!(
                    "{}: nothing from the server for {} ms with IO in flight and a heartbeat unanswered for {} ms (sent {} ms late), failing the path over\n",
                    this.name(),
                    silent_ms,
                    probe_ms,
                    send_late_ms
                );
                this.error_recovery();
                return;
            }
        };
        DelayedWork::<Path, PROBE_WORK>::schedule(
            &this,
            &this.core.failover_wq,
            ms_until(now, at_ns),
        );
    }
}

impl DelayedWorkItem<RECOVERY_WORK> for Path {
    /// `rtrs_clt_err_recovery_work()`.
    fn run(this: Arc<Self>) {
        this.stop_and_destroy_conns();
        let delay = this.core.reconnect_delay_ms + rb::random::below(RECONNECT_SEED);
        DelayedWork::<Path, RECONNECT_WORK>::schedule(&this, &this.core.wq, delay);
    }
}

impl DelayedWorkItem<RECONNECT_WORK> for Path {
    /// `rtrs_clt_reconnect_work()`.
    fn run(this: Arc<Self>) {
        this.trace(PathEvent::ReconnectWork);
        if this.state() != CltState::Reconnecting {
            return;
        }
        let max = this.core.max_reconnect_attempts.load(Ordering::Relaxed);
        if !this.inner.lock().attempts.take(max) {
            // Out of attempts: close the path for good.
            this.close_conns(false);
            return;
        }
        rb::random::msleep(RECONNECT_BACKOFF_MS);
        if this.change_state(CltState::Connecting).0
            && this.init().is_err()
            && this.change_state(CltState::Reconnecting).0
        {
            this.stats.reconnect_fail.fetch_add(1, Ordering::Relaxed);
            DelayedWork::<Path, RECOVERY_WORK>::schedule(&this, &this.core.failover_wq, 0);
        }
    }
}

impl WorkItem for Path {
    type Pointer = Arc<Path>;

    /// `rtrs_clt_close_work()`.
    fn run(this: Arc<Path>) {
        DelayedWork::<Path, RECOVERY_WORK>::cancel_sync(&*this);
        DelayedWork::<Path, RECONNECT_WORK>::cancel_sync(&*this);
        this.stop_and_destroy_conns();
        this.change_state(CltState::Closed);
        this.inner.update(|i| i.closes = i.closes.saturating_sub(1));
    }
}
