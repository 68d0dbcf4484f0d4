// SPDX-License-Identifier: GPL-2.0-or-later

//! A path of a client session on the server (`struct rtrs_srv_path`): its
//! connections, the MRs that register the session's chunks on its device,
//! the IO slots handed to the upper layer, its heartbeat and its close.

use super::abi::OpSlots;
use super::conn::{Con, ConExt, WaitAt};
use super::sess::Session;
use super::sysfs::PathFiles;
use super::trace;
use core::num::NonZeroU32;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::workqueue::{impl_has_work, Work, WorkItem};
use kernel::{new_mutex, new_work};
use rb::global::Global;
use rb::kvec::VecExt;
use rb::net::SockAddr;
use rb::sync::{new_spinlock_irq, new_waitable, SpinLockIrq, SpinLockIrqBackend, Waitable};
use rb::workqueue::{
    impl_has_delayed_work, new_delayed_work, DelayedWork, DelayedWorkItem, OwnedQueue,
};
use rb_rdma::blocks::BlocksMap;
use rb_rdma::cq::impl_has_cqe;
use rb_rdma::mr::DmaMappedSg;
use rb_rdma::{
    Access, CmIdRef, ConnectRequest, Cqe, CqeHandler, DmaBuf, DmaDirection, Mr, Pd, PollContext,
    SendFlags, SendOp, SendWr, Sge, Wc,
};
use rtrs_common::con::{check_wc, QpSizes, SendQueue, WcError};
use rtrs_common::dev::{DevPool, DevUse};
use rtrs_common::hb::{Hb, HbPath, HB_WORK};
pub(crate) use rtrs_common::name::NameBuf;
use rtrs_common::now_ns;
use rtrs_common::slots::ConSlots;
use rtrs_common::sockaddr::same_addr;
use rtrs_proto::ext::{server_answer, Ext, ReadRsp, MSG_FENCE_F, MSG_READ_RSP_F};
use rtrs_proto::imm::{ChunkLayout, Imm};
use rtrs_proto::msg::{
    ConnReq, InfoReq, InfoRsp, IoReq, IoReqFault, RdmaMsg, RkeyRsp, SgDesc, SgList, Uuid,
    MAX_PATHS_NUM, MSG_NEED_INVAL_F, SERVICE_CON_QUEUE_DEPTH,
};
use rtrs_proto::state::{is_zombie, Changed, SrvState, StateCell};

/// The devices of the module's paths, set at module init.
pub(crate) static DEVS: Global<Arc<DevPool>> = Global::new();

/// `a / b` rounded up.
fn div_ceil(a: u32, b: NonZeroU32) -> u32 {
    a / b + u32::from(a % b != 0)
}

/// What the server remembers about an IO between the request and the
/// upper layer's answer. Written before `OpSlots::start` publishes the IO,
/// read after `resp_rdma` finds it: no lock needed.
#[derive(Default)]
pub(crate) struct OpState {
    cid: AtomicU32,
    read: AtomicBool,
    status: AtomicI32,
    rd_addr: AtomicU64,
    rd_key: AtomicU32,
    rd_len: AtomicU32,
    rd_flags: AtomicU32,
    rd_sg_cnt: AtomicU32,
}

impl OpState {
    /// The client's key to invalidate with the answer: a READ with a
    /// descriptor that asks for it (`MSG_NEED_INVAL_F`).
    fn inval_key(&self) -> Option<u32> {
        let ask = self.rd_flags.load(Ordering::Relaxed) & u32::from(MSG_NEED_INVAL_F) != 0;
        (self.read.load(Ordering::Relaxed) && ask && self.rd_sg_cnt.load(Ordering::Relaxed) != 0)
            .then(|| self.rd_key.load(Ordering::Relaxed))
    }
}

/// One MR of the path (one per chunk with `always_invalidate`, else one per
/// group of chunks), with what its re-registration needs.
///
/// # Locking
///
/// `rkey_iu` (irq-safe: the upper layer answers from any context) guards
/// the RKEY_RSP buffer while it is written, a leaf; the MR's own lock its
/// mapping and key.
pub(crate) struct SrvMr {
    pub(crate) inv_cqe: Cqe<SrvMr>,
    /// Its first chunk.
    first: u32,
    pub(crate) mr: Mr,
    pub(crate) map: BlocksMap,
    /// The offset of the request whose LOCAL_INV is in flight.
    pending_off: AtomicU32,
    /// The RKEY_RSP message buffer (`always_invalidate` only).
    rkey_iu: Option<Pin<KBox<SpinLockIrq<DmaBuf>>>>,
}
impl_has_cqe!(impl HasCqe<0> for SrvMr { self.inv_cqe });

impl SrvMr {
    /// Remembers where the request whose LOCAL_INV is posted now sits.
    pub(crate) fn set_pending(&self, off: u32) {
        self.pending_off.store(off, Ordering::Release);
    }
}

impl CqeHandler<0> for SrvMr {
    type Conn = Con;

    /// The LOCAL_INV of a chunk that a request arrived in completed: now the
    /// server may look at it (`rtrs_srv_inv_rkey_done()`).
    fn done(&self, conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        const INV_FAILED: WcError = WcError {
            site: kernel::c_str!("rtrs_srv_inv_rkey_done"),
            what: "Failed IB_WR_LOCAL_INV",
        };
        let path = &conn.handler().path;
        if !check_wc(path, wc, &INV_FAILED) {
            path.process_io_req(conn, self.first, self.pending_off.load(Ordering::Acquire));
        }
    }
}

/// What a server path changes after it was made (cold: per connection,
/// per INFO_REQ, per close).
struct PathInner {
    /// `src@dst`, until the client tells its pathname (INFO_REQ).
    name: NameBuf,
    /// The completion vector of the last connection's CQ.
    cq_vector: u32,
    /// The path is counted in its session's `paths_up`.
    established: bool,
    /// When the last connection began to be made (`ktime_get` ns), until
    /// INFO_REQ is answered (C's `connection_timeout`): a path connecting
    /// for longer than `MAX_CONN_TIMEOUT_MS` is a zombie.
    connecting_since: Option<i64>,
    /// Fences that name this path and wait for it to be quiet: the path
    /// each came on and its number (RTRS 2.1); at most `MAX_FENCES`.
    fences: KVec<(Arc<Path>, u16)>,
}

/// Fences one path waits to answer at most: a client sends one per close.
const MAX_FENCES: usize = 8;

/// What became of a fence that names a path ([`Path::fence_on_quiet`]).
pub(crate) enum FenceWait {
    /// The path is quiet already: answer now.
    Quiet,
    /// The path's close work answers once it is quiet.
    Queued,
    /// No room to wait: never answered, so that the client fences the
    /// chunks instead of trusting a close that has not happened.
    Full,
}

/// A path of a client session on the server.
///
/// # Locking
///
/// - `inner` (irq-safe: the upper layer answers IO from any context) holds
///   what changes after the path was made; its wait queue is where the
///   close waits for the upper layer to answer every IO. A leaf: the
///   path's name is read under it, so nothing logs while holding it.
/// - `files` (a mutex: sysfs sleeps) is taken inside the session's
///   `files`.
/// - `read_rsp_ius[i]` (irq-safe) is chunk `i`'s READ_RSP buffer while an
///   answer writes it (RTRS 2.1): a leaf.
/// - The IO path reads `state`, `cons` (under RCU), `ops`, `op_state` and
///   the MRs without a lock; `stats` and `hb`'s `seen` are atomics. An
///   answer's end takes `inner` to wake a close waiting for it.
#[pin_data]
pub(crate) struct Path {
    pub(crate) sess: Arc<Session>,
    /// The path's uuid (`sess_uuid` of CON_REQ).
    pub(crate) uuid: Uuid,
    /// Its id in the session, which RTRS 2.1 tells the client.
    pub(crate) id: u16,
    /// The version it answers (2.1 if the client offered it and
    /// `proto_ext` allows), and the CON_RSP flags that go with it.
    pub(crate) version: (u16, u32),
    /// The READ_RSP message buffer of each chunk, when the path answers
    /// READs with one (RTRS 2.1, `MSG_READ_RSP_F`), else empty. A chunk's
    /// buffer is written only by the answer to the chunk's IO, and read by
    /// the device before the client can have the answer, so before the
    /// chunk's next IO can come.
    read_rsp_ius: KVec<Pin<KBox<SpinLockIrq<DmaBuf>>>>,
    pub(crate) cid_num: u16,
    pub(crate) recon_cnt: u16,
    pub(crate) src_addr: SockAddr,
    pub(crate) dst_addr: SockAddr,
    state: StateCell<SrvState>,
    /// The path's QPs are in the error state and its IO is answered: the
    /// close is past the point where the path touches its chunks.
    quiet: AtomicBool,
    /// The connections, by cid.
    pub(crate) cons: ConSlots<Path>,
    /// The PD of the device, shared with the module's other paths on it.
    pub(crate) pd: Arc<Pd>,
    _dev: DevUse,
    pub(crate) mrs: KVec<SrvMr>,
    chunks_per_mr: NonZeroU32,
    pub(crate) layout: ChunkLayout,
    pub(crate) ops: OpSlots<Path>,
    op_state: KVec<OpState>,
    /// Answers of the upper layer under way ([`Path::answer_begin`]): the
    /// close work waits for none, so that the reference an answer holds,
    /// in a bio's completion, is never the path's last.
    answering: AtomicU32,
    /// Send completions are requested every `signal_interval` sends.
    pub(crate) signal_interval: u32,
    #[pin]
    pub(crate) hb: Hb,
    #[pin]
    inner: Waitable<PathInner, SpinLockIrqBackend>,
    #[pin]
    hb_work: DelayedWork<Path, HB_WORK>,
    #[pin]
    close_work: Work<Path>,
    /// RDMA stats (`stats/rdma`): reads and writes, count and bytes.
    pub(crate) stats: [[AtomicU64; 2]; 2],
    /// The path's sysfs directory, while it has one.
    #[pin]
    pub(crate) files: Mutex<Option<PathFiles>>,
}
impl_has_delayed_work!(impl HasDelayedWork<HB_WORK> for Path { self.hb_work });
impl_has_work! {
    impl HasWork<Path> for Path { self.close_work }
}

impl Path {
    /// `__alloc_path()`: a new path for a connection request of `sess`.
    pub(crate) fn new(
        sess: &Arc<Session>,
        req: &ConnectRequest<'_>,
        msg: &ConnReq,
        others: &[Arc<Path>],
    ) -> Result<Arc<Self>> {
        if others.len() >= MAX_PATHS_NUM {
            return Err(rb::errno::ECONNRESET());
        }
        let (src_addr, dst_addr) = req.addrs();
        if let Some(p) = others
            .iter()
            .find(|p| same_addr(&p.src_addr, &src_addr) && same_addr(&p.dst_addr, &dst_addr))
        {
            pr_err!(
                "{}: Path ({}) with same addr exists (lifetime {})\n",
                p.name(),
                p.state().log_str(),
                p.connecting_ms().unwrap_or(0)
            );
            p.close_if_zombie();
            return Err(EEXIST);
        }
        let p = sess.ctx.params;
        let qd = sess.queue_depth;
        let dev = req.device();
        let used = DEVS.get().ok_or(ENODEV)?.get(dev, |_| Ok(()))?;
        let pd = used.pd().clone();

        // `map_cont_bufs()`: one MR per chunk to invalidate them one by one,
        // else as many chunks per MR as the device registers at once.
        let (mrs_num, chunks_per_mr) = if p.always_invalidate {
            (qd, NonZeroU32::MIN)
        } else {
            // A device registers one page at least.
            let per =
                NonZeroU32::new(dev.attrs().max_fast_reg_page_list_len).unwrap_or(NonZeroU32::MIN);
            let n = div_ceil(qd, per);
            (
                n,
                NonZeroU32::new(div_ceil(qd, NonZeroU32::new(n).ok_or(EINVAL)?)).ok_or(EINVAL)?,
            )
        };
        let mut mrs = KVec::with_capacity(mrs_num as usize, GFP_KERNEL)?;
        for i in 0..mrs_num {
            let first = i * chunks_per_mr.get();
            let count = chunks_per_mr.get().min(qd - first);
            let map = BlocksMap::new(&pd, &sess.pages, first, count)?;
            let mut mr = Mr::new_sg_gaps(&pd, map.dma_nents())?;
            let n = mr.map_sg_owned(&map, map.dma_nents(), p.max_chunk_size)?;
            if n < map.dma_nents() {
                return Err(EINVAL);
            }
            let rkey_iu = if p.always_invalidate {
                let buf = DmaBuf::new(dev, RkeyRsp::SIZE, DmaDirection::ToDevice)?;
                Some(KBox::pin_init(
                    new_spinlock_irq!(buf, "rtrs_srv_rkey_iu"),
                    GFP_KERNEL,
                )?)
            } else {
                None
            };
            mr.inc_key();
            mrs.push(
                SrvMr {
                    inv_cqe: Cqe::new(),
                    first,
                    mr,
                    map,
                    pending_off: AtomicU32::new(0),
                    rkey_iu,
                },
                GFP_KERNEL,
            )?;
        }

        // What this server does of 2.1: it answers fences, and READs with
        // one message.
        let version = server_answer(
            msg.version,
            super::params::proto_ext(),
            MSG_FENCE_F | MSG_READ_RSP_F,
        );
        let read_rsp_ius = if Ext::negotiated(version.0, version.1).read_rsp {
            let mut ius = KVec::with_capacity(qd as usize, GFP_KERNEL)?;
            for _ in 0..qd {
                let buf = DmaBuf::new(dev, ReadRsp::SIZE, DmaDirection::ToDevice)?;
                ius.push(
                    KBox::pin_init(new_spinlock_irq!(buf, "rtrs_srv_read_rsp_iu"), GFP_KERNEL)?,
                    GFP_KERNEL,
                )?;
            }
            ius
        } else {
            KVec::new()
        };
        let mut op_state = KVec::with_capacity(qd as usize, GFP_KERNEL)?;
        for _ in 0..qd {
            op_state.push(OpState::default(), GFP_KERNEL)?;
        }
        // Until the client tells its pathname: `src@dst`, by rtrs-core's
        // `rtrs_addr_to_str`, as the C server does.
        let name = rtrs_common::sysfs::addrs_name(&src_addr, &dst_addr);
        let layout = ChunkLayout::new(qd).map_err(rtrs_common::kerr)?;
        Arc::pin_init(
            try_pin_init!(Path {
                sess: sess.clone(),
                uuid: msg.sess_uuid,
                id: sess.ctx.new_path_id(others),
                version,
                read_rsp_ius,
                cid_num: msg.cid_num,
                recon_cnt: msg.recon_cnt,
                src_addr,
                dst_addr,
                quiet: AtomicBool::new(false),
                state: StateCell::new(SrvState::Connecting),
                cons: ConSlots::new(u32::from(msg.cid_num))?,
                pd,
                _dev: used,
                mrs,
                chunks_per_mr,
                layout,
                ops: OpSlots::new(qd)?,
                op_state,
                answering: AtomicU32::new(0),
                signal_interval: qd.min(SERVICE_CON_QUEUE_DEPTH).max(1),
                hb <- Hb::new(),
                inner <- new_waitable!(
                    PathInner {
                        name,
                        cq_vector: u32::MAX,
                        connecting_since: None,
                        fences: KVec::with_capacity(MAX_FENCES, GFP_KERNEL)?,
                        established: false,
                    },
                    "rtrs_srv_path"
                ),
                hb_work <- new_delayed_work!("rtrs_srv_hb"),
                close_work <- new_work!("rtrs_srv_close"),
                stats: Default::default(),
                files <- new_mutex!(None, "rtrs_srv_path_files"),
            }? Error),
            GFP_KERNEL,
        )
    }

    pub(crate) fn state(&self) -> SrvState {
        self.state.get()
    }

    /// What the path runs of RTRS 2.1.
    pub(crate) fn ext(&self) -> Ext {
        Ext::negotiated(self.version.0, self.version.1)
    }

    /// `rtrs_srv_change_state()`.
    fn change_state(&self, new: SrvState) -> bool {
        self.state.change(new).changed
    }

    pub(crate) fn name(&self) -> NameBuf {
        self.inner.lock().name
    }

    /// The `dst@src` name of the path's sysfs directory.
    pub(crate) fn dir_name(&self) -> NameBuf {
        rtrs_common::sysfs::addrs_name(&self.dst_addr, &self.src_addr)
    }

    pub(crate) fn params(&self) -> super::params::Params {
        self.sess.ctx.params
    }

    /// Another connection for this path: it must be still connecting, with
    /// the same connection count and a free cid.
    pub(crate) fn check_new_con(self: &Arc<Self>, msg: &ConnReq) -> Result {
        let state = self.state();
        if state != SrvState::Connecting {
            pr_err!(
                "{}: Session in wrong state: {}\n",
                self.name(),
                state.log_str()
            );
            return Err(rb::errno::ECONNRESET());
        }
        if msg.cid_num != self.cid_num || msg.cid >= self.cid_num {
            pr_err!(
                "{}: Incorrect request: {}, {}\n",
                self.name(),
                msg.cid,
                msg.cid_num
            );
            return Err(rb::errno::ECONNRESET());
        }
        if self.cons.has(msg.cid) {
            pr_err!(
                "{}: Connection ({}) already exists: {} (lifetime {})\n",
                self.name(),
                state.log_str(),
                msg.cid,
                self.connecting_ms().unwrap_or(0)
            );
            self.close_if_zombie();
            return Err(rb::errno::ECONNRESET());
        }
        Ok(())
    }

    /// Fence `seq`, which came on `from`, waits for this path to be quiet:
    /// its close work answers it then.
    pub(crate) fn fence_on_quiet(&self, from: &Arc<Path>, seq: u16) -> FenceWait {
        let mut inner = self.inner.lock();
        if self.quiet.load(Ordering::Acquire) {
            return FenceWait::Quiet;
        }
        if inner.fences.len() >= MAX_FENCES {
            return FenceWait::Full;
        }
        // Room was reserved: this does not allocate.
        match inner.fences.push((from.clone(), seq), GFP_ATOMIC) {
            Ok(()) => FenceWait::Queued,
            Err(_) => FenceWait::Full,
        }
    }

    /// A connection of the path begins to be made.
    pub(crate) fn connecting_now(&self) {
        self.inner.lock().connecting_since = Some(now_ns());
    }

    /// How long ago, in ms, the last connection began to be made, if the
    /// path waits for its INFO_REQ.
    fn connecting_ms(&self) -> Option<u64> {
        let since = self.inner.lock().connecting_since?;
        Some(((now_ns() - since).max(0) / 1_000_000) as u64)
    }

    /// `rtrs_srv_check_close_path()`: a path left connecting for longer than
    /// `MAX_CONN_TIMEOUT_MS` (its client gave up on it) is closed when a new
    /// attempt meets it, so that the attempt after that succeeds.
    fn close_if_zombie(self: &Arc<Self>) {
        if is_zombie(self.state(), self.connecting_ms()) {
            pr_err!("{}: Closing zombie path\n", self.name());
            self.close();
        }
    }

    /// The completion vectors of the path's connections, round robin.
    fn next_cq_vector(&self) -> u32 {
        let n = self.pd.device().num_comp_vectors();
        let mut inner = self.inner.lock();
        inner.cq_vector = inner.cq_vector.wrapping_add(1) % n;
        inner.cq_vector
    }

    /// `create_con()` and `rtrs_rdma_do_accept()`: adopts the request as
    /// connection `cid`, creates its QP, and accepts it.
    pub(crate) fn create_con(this: &Arc<Self>, req: ConnectRequest<'_>, cid: u16) -> Result {
        let p = this.params();
        let qd = this.sess.queue_depth;
        let wr_limit = req.device().attrs().max_qp_wr;
        let (max_send_wr, max_recv_wr) = if cid == 0 {
            // All receives and all sends (each needing an invalidate), plus
            // drain and heartbeat; the send queue also holds the chunks'
            // REG_MRs, which the INFO_RSP posts at once (one per chunk with
            // always_invalidate).
            let n = SERVICE_CON_QUEUE_DEPTH * 2 + 2;
            let mrs = u32::try_from(this.mrs.len()).unwrap_or(u32::MAX);
            (wr_limit.min(n.saturating_add(mrs)), wr_limit.min(n))
        } else {
            let per = if p.always_invalidate { 1 + 4 } else { 1 + 2 };
            (wr_limit.min(qd * per + 1), qd + 1)
        };
        let sq = SendQueue::new(max_send_wr, this.signal_interval);
        let con = Con::new(this.clone(), cid, sq, ConExt::new(qd))?;
        let id = req.adopt(con)?;
        let sizes = QpSizes {
            send_wr: max_send_wr,
            recv_wr: max_recv_wr,
            send_sge: 1,
            comp_vector: this.next_cq_vector(),
            poll: PollContext::Workqueue,
        };
        let setup = Con::create_cq_qp(&id, &this.pd, sizes).and_then(|_| {
            if cid == 0 {
                let rx = DmaBuf::new(this.pd.device(), InfoReq::SIZE, DmaDirection::FromDevice)?;
                Con::post_info_rx(&id, rx, this.pd.local_dma_lkey())?;
            }
            Ok(())
        });
        if let Err(e) = setup {
            let _ = id.reject(&this.sess.ctx.accept_msg_reject(e));
            return Err(e);
        }
        let msg = this.sess.ctx.accept_msg(qd, &this);
        if cid == 0 {
            pr_info!("{}: {}\n", this.name(), this.ext().log_str());
        }
        let accept = rb_rdma::ConnParam {
            private_data: &msg,
            rnr_retry_count: 7,
            ..Default::default()
        };
        if let Err(e) = id.accept(&accept) {
            pr_err!("rdma_accept(), err: {}\n", e.to_errno());
            let _ = id.reject(&this.sess.ctx.accept_msg_reject(e));
            // Stored below all the same: the close drops it, as in C.
            this.close();
        }
        let id = KBox::new(id, GFP_KERNEL)?;
        this.cons.set(cid, id).map_err(|_| EEXIST)
    }

    /// `close_path()`: closes the path in the background, once. Closing a
    /// connected path is logged with the caller, the reason being there.
    #[track_caller]
    pub(crate) fn close(self: &Arc<Self>) {
        let Changed { changed, old } = self.state.change(SrvState::Closing);
        if changed && old == SrvState::Connected {
            pr_info!(
                "{}: closing the path ({})\n",
                self.name(),
                rtrs_common::CallSite::here()
            );
        }
        if changed {
            let _ = self.sess.ctx.wq.queue().enqueue(self.clone());
        }
    }

    /// `process_io_req()`: a request arrived in chunk `id` at `off`.
    pub(crate) fn process_io_req(self: &Arc<Self>, conn: &CmIdRef<Con>, id: u32, off: u32) {
        let max_chunk = self.params().max_chunk_size;
        let Some(mr) = self.mrs.get((id / self.chunks_per_mr) as usize) else {
            return self.close_on_bad_id(id);
        };
        let _ = mr.map.sync_for_cpu(id, max_chunk as usize);
        let mut hdr = [0u8; IoReq::MAX_SIZE];
        let n = hdr.len().min((max_chunk - off) as usize);
        if let Err(e) = self
            .sess
            .pages
            .read(id as usize, off as usize, &mut hdr[..n])
        {
            pr_err!(
                "{}: cannot read the request in chunk {} at {}: {}\n",
                self.name(),
                id,
                off,
                e.to_errno()
            );
            self.close();
            return;
        }
        let state = self.state();
        if state != SrvState::Connected {
            pr_err!(
                "{}: Processing request failed, session is disconnected, sess state {}\n",
                self.name(),
                state.log_str()
            );
            return;
        }
        // Where C drops the request without an answer (a bad sg_cnt,
        // usr_len > off), or reads it from past the chunk, we close.
        let msg = match IoReq::check(&hdr[..n], off) {
            Ok(m) => m,
            Err(f) => {
                match f {
                    IoReqFault::UnknownType(t) => pr_err!(
                        "{}: Processing I/O request failed, unknown message type received: {:#04x}\n",
                        self.name(),
                        t
                    ),
                    IoReqFault::PastChunk => pr_err!(
                        "{}: request at offset {} of chunk {} runs past it\n",
                        self.name(),
                        off,
                        id
                    ),
                    IoReqFault::SgCnt(n) => pr_err!(
                        "{}: Processing read request failed, invalid message (sg_cnt {})\n",
                        self.name(),
                        n
                    ),
                    IoReqFault::UsrLen(u) => {
                        pr_err!("{}: Invalid usr_len {} > off {}\n", self.name(), u, off)
                    }
                }
                self.close();
                return;
            }
        };
        let (usr_len, read) = match &msg {
            RdmaMsg::Write(w) => (w.usr_len, None),
            RdmaMsg::Read(r) => (r.usr_len, Some((r.flags, r.descs))),
        };
        let st = &self.op_state[id as usize];
        st.cid
            .store(u32::from(conn.handler().cid), Ordering::Relaxed);
        st.read.store(read.is_some(), Ordering::Relaxed);
        if let Some((flags, descs)) = read {
            let d = descs.get(0);
            st.rd_sg_cnt.store(descs.len() as u32, Ordering::Relaxed);
            st.rd_flags.store(u32::from(flags), Ordering::Relaxed);
            st.rd_addr.store(d.map_or(0, |d| d.addr), Ordering::Relaxed);
            st.rd_key.store(d.map_or(0, |d| d.key), Ordering::Relaxed);
            st.rd_len.store(d.map_or(0, |d| d.len), Ordering::Relaxed);
        }
        // `[READ, WRITE]`, as C's stats.
        let dir = if read.is_some() { 0 } else { 1 };
        self.stats[dir][0].fetch_add(1, Ordering::Relaxed);
        self.stats[dir][1].fetch_add(u64::from(off), Ordering::Relaxed);
        let op = match self.ops.start(id, self) {
            Ok(op) => op,
            Err(_) => {
                pr_err!(
                    "{}: request for chunk {} which is still in use\n",
                    self.name(),
                    id
                );
                self.close();
                return;
            }
        };
        let data_len = (off - u32::from(usr_len)) as usize;
        let priv_ = self.sess.priv_.get();
        let ret = self.sess.ctx.upper.rdma_ev(
            priv_,
            op,
            &self.sess.pages,
            id,
            data_len,
            usize::from(usr_len),
        );
        if ret != 0 {
            pr_err!(
                "{}: Processing request failed, user module callback reports err: {}\n",
                self.name(),
                ret
            );
            if let Err(e) = self.send_io_resp_imm(conn, id, ret) {
                pr_err!(
                    "{}: Sending err msg for failed request failed, msg_id {}, err: {}\n",
                    self.name(),
                    id,
                    e.to_errno()
                );
                self.close();
            }
            self.finish(id);
        }
    }

    fn close_on_bad_id(self: &Arc<Self>, id: u32) {
        pr_err!("{}: no chunk {}\n", self.name(), id);
        self.close();
    }

    /// The IO ends: the slot lets the path go, and a close waiting for the
    /// last IO is woken.
    fn finish(&self, id: u32) {
        self.ops.finish(id);
        if self.state() != SrvState::Connected {
            self.inner.notify_all_locked();
        }
    }

    /// The upper layer's answer to an IO begins: it holds a reference to
    /// the path, taken from the IO's slot, and may run in interrupt
    /// context, where dropping the path's last reference (MRs, maybe the
    /// PD) would sleep. As C's `ids_inuse`.
    pub(crate) fn answer_begin(&self) {
        self.answering.fetch_add(1, Ordering::AcqRel);
    }

    /// The answer has let go of its reference: the close work may go on.
    /// The path may be gone once this returns; nothing touches it after
    /// the lock is let go of.
    pub(crate) fn answer_end(&self) {
        let g = self.inner.lock();
        self.answering.fetch_sub(1, Ordering::AcqRel);
        self.inner.notify_all();
        drop(g);
    }

    /// `rtrs_srv_resp_rdma()`: the upper layer answers IO `id`.
    pub(crate) fn resp_rdma(this: &Arc<Self>, id: u32, status: i32) -> bool {
        Self::answer(this, id, status, WaitAt::Tail)
    }

    /// Answers IO `id`, or queues the answer `at` the wait list if the
    /// send queue is full and returns `false`.
    fn answer(this: &Arc<Self>, id: u32, status: i32, at: WaitAt) -> bool {
        let Some(st) = this.op_state.get(id as usize) else {
            return true;
        };
        st.status.store(status, Ordering::Relaxed);
        let state = this.state();
        if state != SrvState::Connected {
            pr_err!(
                "{}: Sending I/O response failed, server path is disconnected, path state {}\n",
                this.name(),
                state.log_str()
            );
            this.finish(id);
            return true;
        }
        if this.params().always_invalidate {
            this.mrs[id as usize].mr.inc_key();
        }
        let cid = st.cid.load(Ordering::Relaxed) as u16;
        let ret = this.cons.with(cid, |conn| {
            let h = conn.handler();
            if !h.sq.take() {
                pr_err!("{}: IB send queue full: cid={}\n", this.name(), cid);
                h.ext.wait_push(id, at);
                return Ok(false);
            }
            let read = st.read.load(Ordering::Relaxed);
            if status != 0 || !read || st.rd_sg_cnt.load(Ordering::Relaxed) == 0 {
                this.send_io_resp_imm(conn, id, status)?;
            } else {
                this.rdma_write_sg(conn, id)?;
            }
            Ok(true)
        });
        match ret {
            Ok(false) => return false,
            Ok(true) => {}
            Err(e) => {
                pr_err!("{}: IO response failed: {}\n", this.name(), e.to_errno());
                this.close();
            }
        }
        this.finish(id);
        true
    }

    fn rkey_rsp_sge(&self, id: u32) -> Result<Sge> {
        let mr = &self.mrs[id as usize];
        let iu = mr.rkey_iu.as_ref().ok_or(EINVAL)?;
        let mut buf = iu.lock();
        let mut msg = [0u8; RkeyRsp::SIZE];
        RkeyRsp {
            buf_id: id as u16,
            rkey: mr.mr.rkey(),
        }
        .encode(&mut msg)
        .map_err(rtrs_common::kerr)?;
        buf.write(0, &msg)?;
        Ok(Sge::new(
            buf.dma_addr(0)?,
            RkeyRsp::SIZE as u32,
            self.pd.local_dma_lkey(),
        ))
    }

    /// `send_io_resp_imm()`: an immediate-data answer (WRITE done, or any
    /// error).
    pub(crate) fn send_io_resp_imm(&self, conn: &CmIdRef<Con>, id: u32, errno: i32) -> Result {
        if trace::send_io_resp_imm_enabled() {
            if let Some(st) = self.op_state.get(id as usize) {
                trace::send_io_resp_imm(
                    if st.read.load(Ordering::Relaxed) {
                        0
                    } else {
                        1
                    },
                    st.inval_key().is_some(),
                    self.params().always_invalidate,
                    id,
                    conn.handler().sq.wr_cnt() as i32,
                    self.signal_interval,
                    self.state() as i32,
                    errno,
                    self.dir_name().as_cstr(),
                );
            }
        }
        self.post_io_rsp(conn, id, errno, None)
    }

    /// `rdma_write_sg()`: a READ's answer: RDMA-write the chunk's data into
    /// the client's buffer, then the immediate data.
    fn rdma_write_sg(&self, conn: &CmIdRef<Con>, id: u32) -> Result {
        let st = self.op_state.get(id as usize).ok_or(EINVAL)?;
        let len = st.rd_len.load(Ordering::Relaxed);
        if len == 0 || len > self.params().max_chunk_size {
            pr_err!(
                "{}: Invalid RDMA-Write sg list length {}\n",
                self.name(),
                len
            );
            return Err(EINVAL);
        }
        let write = SendOp::RdmaWrite {
            remote_addr: st.rd_addr.load(Ordering::Relaxed),
            rkey: st.rd_key.load(Ordering::Relaxed),
        };
        let mr = self
            .mrs
            .get((id / self.chunks_per_mr) as usize)
            .ok_or(EINVAL)?;
        let data = Sge::new(mr.map.block_addr(id)?, len, self.pd.local_dma_lkey());
        mr.map.sync_for_device(id, len as usize)?;
        self.post_io_rsp(conn, id, 0, Some((write, data)))
    }

    /// Posts the answer to IO `id` in one chain, in C's order: a READ's data
    /// (`data`: RDMA write and its SGE) first, then the chunk's
    /// re-registration with `always_invalidate` and the invalidation of the
    /// client's key (in the other order without data, as C's
    /// `send_io_resp_imm()`), then the response: with `always_invalidate` a
    /// SEND_WITH_IMM carrying the chunk's new key (RKEY_RSP), else an empty
    /// RDMA_WRITE_WITH_IMM.
    fn post_io_rsp(
        &self,
        conn: &CmIdRef<Con>,
        id: u32,
        errno: i32,
        data: Option<(SendOp<'static>, Sge)>,
    ) -> Result {
        let st = self.op_state.get(id as usize).ok_or(EINVAL)?;
        if !self.read_rsp_ius.is_empty() && st.read.load(Ordering::Relaxed) {
            return self.post_read_rsp(conn, id, errno, data);
        }
        let inval = st.inval_key();
        let always = self.params().always_invalidate;
        let rkey_sge = if always {
            Some([self.rkey_rsp_sge(id)?])
        } else {
            None
        };
        let data_sge = data.map(|(_, sge)| [sge]);
        let flags = conn.handler().sq.next_flags();
        let imm = Imm::io_rsp(id, errno, inval.is_some()).encode();
        let i = id as usize;
        let none = SendFlags::empty();
        conn.post_chain::<4, _>(|h: &Con, chain| {
            let reg = match always {
                true => Some(SendWr::new(
                    &h.reg_cqe,
                    SendOp::RegMr {
                        mr: &h.path.mrs.get(i).ok_or(EINVAL)?.mr,
                        access: Access::LOCAL_WRITE.union(Access::REMOTE_WRITE),
                    },
                    &[],
                    none,
                )),
                false => None,
            };
            let inv = inval.map(|key| SendWr::new(&h.io_cqe, SendOp::SendWithInv(key), &[], none));
            match (data, &data_sge) {
                (Some((write, _)), Some(sge)) => {
                    chain.push(SendWr::new(&h.io_cqe, write, sge, none))?;
                    chain.push_opt(reg)?;
                    chain.push_opt(inv)?;
                }
                _ => {
                    chain.push_opt(inv)?;
                    chain.push_opt(reg)?;
                }
            }
            chain.push(match &rkey_sge {
                Some(sge) => SendWr::new(&h.io_cqe, SendOp::SendWithImm(imm), sge, flags),
                None => SendWr::new(
                    &h.io_cqe,
                    SendOp::RdmaWriteWithImm {
                        remote_addr: 0,
                        rkey: 0,
                        imm,
                    },
                    &[],
                    flags,
                ),
            })
        })
    }

    /// Writes the READ_RSP of chunk `id` into its buffer: its SGE.
    fn read_rsp_sge(&self, id: u32, rsp: &ReadRsp) -> Result<Sge> {
        let iu = self.read_rsp_ius.get(id as usize).ok_or(EINVAL)?;
        let mut buf = iu.lock();
        let mut msg = [0u8; ReadRsp::SIZE];
        rsp.encode(&mut msg).map_err(rtrs_common::kerr)?;
        buf.write(0, &msg)?;
        Ok(Sge::new(
            buf.dma_addr(0)?,
            ReadRsp::SIZE as u32,
            self.pd.local_dma_lkey(),
        ))
    }

    /// The answer to READ `id` on a path of RTRS 2.1 with
    /// `MSG_READ_RSP_F`, in one chain: its data (`data`, if it succeeded
    /// and has any), the chunk's re-registration with
    /// `always_invalidate`, then one SEND whose payload is a `ReadRsp`
    /// (the errno, and the chunk's new key), a SEND_WITH_INV of the
    /// client's key if the request asked for it. The re-registration comes
    /// before the SEND, so the key is valid when the client learns it.
    fn post_read_rsp(
        &self,
        conn: &CmIdRef<Con>,
        id: u32,
        errno: i32,
        data: Option<(SendOp<'static>, Sge)>,
    ) -> Result {
        let st = self.op_state.get(id as usize).ok_or(EINVAL)?;
        let inval = st.inval_key();
        let always = self.params().always_invalidate;
        let new_key = match always {
            true => Some(self.mrs.get(id as usize).ok_or(EINVAL)?.mr.rkey()),
            false => None,
        };
        let msg_id = u16::try_from(id).map_err(|_| EINVAL)?;
        let rsp_sge = [self.read_rsp_sge(id, &ReadRsp::new(msg_id, errno, new_key))?];
        let data_sge = data.map(|(_, sge)| [sge]);
        let flags = conn.handler().sq.next_flags();
        let i = id as usize;
        let none = SendFlags::empty();
        let send = match inval {
            Some(key) => SendOp::SendWithInv(key),
            None => SendOp::Send,
        };
        conn.post_chain::<3, _>(|h: &Con, chain| {
            if let (Some((write, _)), Some(sge)) = (data, &data_sge) {
                chain.push(SendWr::new(&h.io_cqe, write, sge, none))?;
            }
            if always {
                chain.push(SendWr::new(
                    &h.reg_cqe,
                    SendOp::RegMr {
                        mr: &h.path.mrs.get(i).ok_or(EINVAL)?.mr,
                        access: Access::LOCAL_WRITE.union(Access::REMOTE_WRITE),
                    },
                    &[],
                    none,
                ))?;
            }
            chain.push(SendWr::new(&h.io_cqe, send, &rsp_sge, flags))
        })
    }

    /// Answers requests that waited for room in the send queue.
    pub(crate) fn process_wait_list(self: &Arc<Self>, con: &Con) {
        while let Some(id) = con.ext.wait_pop() {
            let status = self.op_state[id as usize].status.load(Ordering::Relaxed);
            if !Self::answer(self, id, status, WaitAt::Head) {
                break;
            }
        }
    }

    /// `post_recv_path()`: every connection gets its receives for IO.
    fn post_recv_path(&self) -> Result {
        for cid in 0..self.cid_num {
            let n = if cid == 0 {
                SERVICE_CON_QUEUE_DEPTH
            } else {
                self.sess.queue_depth
            };
            self.cons
                .with(cid, |conn| {
                    for _ in 0..n {
                        Con::post_recv_empty::<1>(conn)?;
                    }
                    Ok(())
                })
                .inspect_err(|_| pr_err!("{}: Conn not set for {}\n", self.name(), cid))?;
        }
        Ok(())
    }

    /// `process_info_req()`: the client's pathname arrived on connection 0,
    /// after all connections of the path were established.
    pub(crate) fn process_info_req(
        self: &Arc<Self>,
        conn: &CmIdRef<Con>,
        pathname: &[u8],
    ) -> Result {
        if self.state() != SrvState::Connecting {
            return Err(EIO);
        }
        self.post_recv_path()?;
        if self
            .sess
            .ctx
            .pathname_taken(pathname, &self.sess.paths_uuid)
        {
            pr_err!("{}: pathname is duplicated\n", self.name());
            return Err(EPERM);
        }
        self.inner.lock().name.set(pathname);
        PathFiles::add(self)?;

        // The chunks' registrations, then the response with their keys.
        let mrs_num = self.mrs.len();
        let size = InfoRsp::wire_size(mrs_num).ok_or(EINVAL)?;
        let mut descs = KVec::with_capacity(mrs_num, GFP_KERNEL)?;
        for m in self.mrs.iter() {
            let (iova, len) = m.mr.mapping();
            descs.push(
                SgDesc {
                    addr: iova,
                    key: m.mr.rkey(),
                    len: len as u32,
                },
                GFP_KERNEL,
            )?;
        }
        let mut buf = KVec::from_elem(0u8, size, GFP_KERNEL)?;
        InfoRsp {
            descs: SgList::new(&descs),
        }
        .encode(&mut buf)
        .map_err(rtrs_common::kerr)?;
        let mut iu = DmaBuf::new(self.pd.device(), size, DmaDirection::ToDevice)?;
        iu.write(0, &buf)?;
        let access = Access::LOCAL_WRITE.union(Access::REMOTE_WRITE);
        for i in 0..mrs_num {
            conn.post_send(|h: &Con| {
                Ok([SendWr::new(
                    &h.reg_cqe,
                    SendOp::RegMr {
                        mr: &h.path.mrs.get(i).ok_or(EINVAL)?.mr,
                        access,
                    },
                    &[],
                    SendFlags::empty(),
                )])
            })?;
        }
        // No longer a zombie: the path is about to be connected.
        self.inner.lock().connecting_since = None;
        if !self.change_state(SrvState::Connected) {
            return Err(EIO);
        }
        Hb::start(self);
        // We rely on the client, which sends INFO_REQ once all connections
        // are up: the first path of a session tells the upper layer.
        self.sess.path_up()?;
        self.inner.lock().established = true;
        Con::post_info_tx(conn, iu, size, self.pd.local_dma_lkey())
    }
}

impl HbPath for Path {
    fn hb_queue(&self) -> &OwnedQueue {
        &self.sess.ctx.wq
    }

    fn hb_connected(&self) -> bool {
        self.state() == SrvState::Connected
    }

    fn cons(&self) -> &ConSlots<Path> {
        &self.cons
    }
}

impl DelayedWorkItem<HB_WORK> for Path {
    /// `hb_work()`.
    fn run(this: Arc<Self>) {
        Hb::run(this);
    }
}

impl WorkItem for Path {
    type Pointer = Arc<Path>;

    /// `rtrs_srv_close_work()`.
    fn run(this: Arc<Path>) {
        Hb::stop(&*this);
        // Take the connections out and move their QPs to the error state,
        // flushing their queues, once no IO can be posting on them (one
        // grace period for all): the client's writes land no more.
        let cons = this.cons.take_all();
        for id in cons.iter() {
            id.drain();
        }
        // Wait for the upper layer to answer every IO it has (`finish`
        // wakes this once the path is no longer connected): until then a
        // request's bio may still read or write its chunk.
        // Then for the answers to let go of the path, so that its last
        // reference goes here or after, never in a bio's completion.
        let answered = |_: &mut PathInner| {
            this.ops.in_flight() == 0 && this.answering.load(Ordering::Acquire) == 0
        };
        while !this.inner.wait_for(1000, answered) {
            pr_info!(
                "{}: waiting for {} IOs of the upper layer\n",
                this.name(),
                this.ops.in_flight()
            );
        }
        let fences = {
            let mut inner = this.inner.lock();
            this.quiet.store(true, Ordering::Release);
            core::mem::take(&mut inner.fences)
        };
        for (on, seq) in fences.iter() {
            super::fence::answer(on, this.id, *seq);
        }
        drop(fences);
        // Only now answer the client's disconnect, or send ours: a client
        // that counts this as the close's confirmation may give the chunks
        // to other requests (C disconnects first, then waits).
        for id in cons.iter() {
            let _ = id.disconnect();
        }
        PathFiles::remove(&this);
        let established = core::mem::replace(&mut this.inner.lock().established, false);
        if established {
            this.sess.path_down();
        }
        drop(cons);
        let sess = this.sess.clone();
        {
            let mut paths = sess.paths.lock();
            paths.retain(|p| !Arc::ptr_eq(p, &this));
        }
        sess.ctx.put_session(&sess);
        this.change_state(SrvState::Closed);
    }
}
