// SPDX-License-Identifier: GPL-2.0-or-later

//! A path of a client session on the server (`struct rtrs_srv_path`): its
//! connections, the MRs that register the session's chunks on its device,
//! the IO slots handed to the upper layer, its heartbeat and its close.

use super::abi::OpSlots;
use super::conn::Con;
use super::sess::Session;
use super::sysfs::PathFiles;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicU8, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, CondVar, CondVarTimeoutResult, Mutex};
use kernel::time::Ktime;
use kernel::workqueue::{impl_has_work, Work, WorkItem};
use kernel::{new_condvar, new_mutex, new_work};
use rb::kvec::VecExt;
use rb::net::SockAddr;
use rb::ratelimit::pr_err_ratelimited;
use rb::rcu::{self, RcuBox};
use rb::sync::{new_spinlock_irq, SpinLockIrq};
use rb::workqueue::{impl_has_delayed_work, DelayedWork, DelayedWorkItem};
use rb_rdma::blocks::BlocksMap;
use rb_rdma::cm::QpAttr;
use rb_rdma::cq::impl_has_cqe;
use rb_rdma::mr::DmaMappedSg;
use rb_rdma::{
    Access, CmId, CmIdRef, ConnectRequest, Cqe, CqeHandler, DmaBuf, DmaDirection, Mr, Pd,
    PollContext, RecvWr, SendFlags, SendOp, SendWr, Sge, Wc,
};
use rb_rtrs::addr_to_str;
pub(crate) use rtrs_common::name::NameBuf;
use rtrs_common::sockaddr::same_addr;
use rtrs_common::{div, div_ceil, rem};
use rtrs_proto::hb::{HbAction, Heartbeat};
use rtrs_proto::imm::{ChunkLayout, Imm};
use rtrs_proto::msg::{
    ConnReq, InfoRsp, IoReq, IoReqFault, RdmaMsg, RkeyRsp, SgDesc, SgList, Uuid, MAX_PATHS_NUM,
    MSG_NEED_INVAL_F, NAME_MAX, SERVICE_CON_QUEUE_DEPTH,
};
use rtrs_proto::state::SrvState;

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
        let path = &conn.handler().path;
        if !wc.is_ok() {
            pr_err_ratelimited!(
                "rtrs_srv_inv_rkey_done",
                "{}: Failed IB_WR_LOCAL_INV: {}\n",
                path.name(),
                wc.status_msg()
            );
            path.close();
            return;
        }
        path.process_io_req(conn, self.first, self.pending_off.load(Ordering::Acquire));
    }
}

#[pin_data]
pub(crate) struct Path {
    pub(crate) sess: Arc<Session>,
    /// The path's uuid (`sess_uuid` of CON_REQ).
    pub(crate) uuid: Uuid,
    pub(crate) cid_num: u16,
    pub(crate) recon_cnt: u16,
    pub(crate) src_addr: SockAddr,
    pub(crate) dst_addr: SockAddr,
    #[pin]
    state: SpinLockIrq<SrvState>,
    /// `state`, read without its lock on the IO path.
    state_fast: AtomicU8,
    #[pin]
    name: SpinLockIrq<NameBuf>,
    /// The connections, by cid; a slot is empty before its connection
    /// arrives and after the close took it. The IO path reaches them under
    /// RCU: no lock, and interrupts stay on while it posts.
    pub(crate) cons: KVec<RcuBox<CmId<Con>>>,
    pub(crate) pd: Arc<Pd>,
    pub(crate) mrs: KVec<SrvMr>,
    chunks_per_mr: u32,
    pub(crate) layout: ChunkLayout,
    pub(crate) ops: OpSlots<Path>,
    op_state: KVec<OpState>,
    /// Send completions are requested every `signal_interval` sends.
    pub(crate) signal_interval: u32,
    cq_vector: AtomicU32,
    established: AtomicBool,
    #[pin]
    hb: SpinLockIrq<Heartbeat>,
    /// Something arrived since the heartbeat's last tick (see the client's
    /// `Path::hb_seen`).
    hb_seen: AtomicBool,
    #[pin]
    hb_work: DelayedWork<Path>,
    #[pin]
    close_work: Work<Path>,
    /// Woken when an IO of a closing path is answered.
    #[pin]
    idle: CondVar,
    #[pin]
    idle_lock: SpinLockIrq<()>,
    /// RDMA stats (`stats/rdma`): reads and writes, count and bytes.
    pub(crate) stats: [[AtomicU64; 2]; 2],
    /// The path's sysfs directory, while it has one.
    #[pin]
    pub(crate) files: Mutex<Option<PathFiles>>,
}
impl_has_delayed_work!(impl HasDelayedWork<0> for Path { self.hb_work });
impl_has_work! {
    impl HasWork<Path> for Path { self.close_work }
}

fn now_ns() -> i64 {
    Ktime::ktime_get().to_ns()
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
        if others
            .iter()
            .any(|p| same_addr(&p.src_addr, &src_addr) && same_addr(&p.dst_addr, &dst_addr))
        {
            pr_err!("Path with same addr exists\n");
            return Err(EEXIST);
        }
        let p = sess.ctx.params;
        let qd = sess.queue_depth;
        let dev = req.device();
        let pd = Arc::new(Pd::new(dev, 0)?, GFP_KERNEL)?;

        // `map_cont_bufs()`: one MR per chunk to invalidate them one by one,
        // else as many chunks per MR as the device registers at once.
        let (mrs_num, chunks_per_mr) = if p.always_invalidate {
            (qd, 1)
        } else {
            let per = dev.attrs().max_fast_reg_page_list_len.max(1);
            let n = div_ceil(qd, per);
            (n, div_ceil(qd, n))
        };
        let mut mrs = KVec::with_capacity(mrs_num as usize, GFP_KERNEL)?;
        for i in 0..mrs_num {
            let first = i * chunks_per_mr;
            let count = chunks_per_mr.min(qd - first);
            let map = BlocksMap::new(&pd, &sess.pages, first, count)?;
            let mut mr = Mr::new(&pd, map.dma_nents())?;
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

        let mut cons = KVec::with_capacity(msg.cid_num as usize, GFP_KERNEL)?;
        for _ in 0..msg.cid_num {
            cons.push(RcuBox::empty(), GFP_KERNEL)?;
        }
        let mut op_state = KVec::with_capacity(qd as usize, GFP_KERNEL)?;
        for _ in 0..qd {
            op_state.push(OpState::default(), GFP_KERNEL)?;
        }
        // Until the client tells its pathname: `src@dst`, by rtrs-core's
        // `rtrs_addr_to_str`, as the C server does.
        let mut name = NameBuf::new();
        let mut s = [0u8; NAME_MAX];
        addr_to_str(&src_addr, &dst_addr, &mut s);
        name.set(&s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())]);
        let layout = ChunkLayout::new(qd).map_err(rtrs_common::kerr)?;
        Arc::pin_init(
            try_pin_init!(Path {
                sess: sess.clone(),
                uuid: msg.sess_uuid,
                cid_num: msg.cid_num,
                recon_cnt: msg.recon_cnt,
                src_addr,
                dst_addr,
                state <- new_spinlock_irq!(SrvState::Connecting, "rtrs_srv_path_state"),
                state_fast: AtomicU8::new(SrvState::Connecting.as_u8()),
                name <- new_spinlock_irq!(name, "rtrs_srv_path_name"),
                cons,
                pd,
                mrs,
                chunks_per_mr,
                layout,
                ops: OpSlots::new(qd)?,
                op_state,
                signal_interval: qd.min(SERVICE_CON_QUEUE_DEPTH).max(1),
                cq_vector: AtomicU32::new(u32::MAX),
                established: AtomicBool::new(false),
                hb <- new_spinlock_irq!(Heartbeat::default(), "rtrs_srv_hb"),
                hb_seen: AtomicBool::new(false),
                hb_work <- DelayedWork::new(),
                close_work <- new_work!("rtrs_srv_close"),
                idle <- new_condvar!("rtrs_srv_idle"),
                idle_lock <- new_spinlock_irq!((), "rtrs_srv_idle"),
                stats: Default::default(),
                files <- new_mutex!(None, "rtrs_srv_path_files"),
            }? Error),
            GFP_KERNEL,
        )
    }

    pub(crate) fn state(&self) -> SrvState {
        SrvState::from_u8(self.state_fast.load(Ordering::Acquire)).unwrap_or(SrvState::Closed)
    }

    fn change_state(&self, new: SrvState) -> bool {
        self.change_state_from(new).0
    }

    /// Moves to `new` if the state machine allows it; returns whether it
    /// did, and the state before.
    fn change_state_from(&self, new: SrvState) -> (bool, SrvState) {
        let mut st = self.state.lock();
        let old = *st;
        let changed = st.change(new);
        self.state_fast.store(st.as_u8(), Ordering::Release);
        (changed, old)
    }

    pub(crate) fn name(&self) -> NameBuf {
        *self.name.lock()
    }

    pub(crate) fn params(&self) -> super::params::Params {
        self.sess.ctx.params
    }

    /// Another connection for this path: it must be still connecting, with
    /// the same connection count and a free cid.
    pub(crate) fn check_new_con(&self, msg: &ConnReq) -> Result {
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
        let exists = {
            let g = rcu::read_lock();
            self.cons[msg.cid as usize].get(&g).is_some()
        };
        if exists {
            pr_err!("{}: Connection already exists: {}\n", self.name(), msg.cid);
            return Err(rb::errno::ECONNRESET());
        }
        Ok(())
    }

    fn next_cq_vector(&self) -> u32 {
        let n = self.pd.device().num_comp_vectors();
        let v = rem(self.cq_vector.load(Ordering::Relaxed).wrapping_add(1), n);
        self.cq_vector.store(v, Ordering::Relaxed);
        v
    }

    /// `create_con()` and `rtrs_rdma_do_accept()`: adopts the request as
    /// connection `cid`, creates its QP, and accepts it.
    pub(crate) fn create_con(this: &Arc<Self>, req: ConnectRequest<'_>, cid: u16) -> Result {
        let p = this.params();
        let qd = this.sess.queue_depth;
        let wr_limit = req.device().attrs().max_qp_wr;
        let (max_send_wr, max_recv_wr) = if cid == 0 {
            // All receives and all sends (each needing an invalidate), plus
            // drain and heartbeat.
            let n = wr_limit.min(SERVICE_CON_QUEUE_DEPTH * 2 + 2);
            (n, n)
        } else {
            let per = if p.always_invalidate { 1 + 4 } else { 1 + 2 };
            (wr_limit.min(qd * per + 1), qd + 1)
        };
        let con = Con::new(this.clone(), cid, max_send_wr, req.device())?;
        let id = req.adopt(con)?;
        let attr = QpAttr {
            max_send_wr,
            max_recv_wr,
            max_send_sge: 1,
            max_recv_sge: 1,
            nr_cqe: max_send_wr + max_recv_wr,
            comp_vector: this.next_cq_vector(),
            poll: PollContext::Workqueue,
        };
        let setup = id.create_qp(&this.pd, &attr).and_then(|()| {
            if cid == 0 {
                Con::post_info_req_recv(&id)?;
            }
            Ok(())
        });
        if let Err(e) = setup {
            let _ = id.reject(&this.sess.ctx.accept_msg_reject(e));
            return Err(e);
        }
        let msg = this.sess.ctx.accept_msg(qd);
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
        this.cons[cid as usize].try_set(id).map_err(|_| EEXIST)
    }

    /// `close_path()`: closes the path in the background, once. Closing a
    /// connected path is logged with the caller, the reason being there.
    #[track_caller]
    pub(crate) fn close(self: &Arc<Self>) {
        let (changed, old) = self.change_state_from(SrvState::Closing);
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

    /// Runs `f` on connection `cid` if it is there, in an RCU read-side
    /// section: `f` must not sleep.
    pub(crate) fn with_con<R>(
        &self,
        cid: u16,
        f: impl FnOnce(&CmIdRef<Con>) -> Result<R>,
    ) -> Result<R> {
        let slot = self.cons.get(cid as usize).ok_or(EINVAL)?;
        let g = rcu::read_lock();
        match slot.get(&g) {
            Some(id) => f(id),
            None => Err(rb::errno::ENOTCONN()),
        }
    }

    fn send_flags(&self, con: &Con) -> SendFlags {
        if rem(con.next_wr(), self.signal_interval) == 0 {
            SendFlags::SIGNALED
        } else {
            SendFlags::empty()
        }
    }

    /// Posts `RDMA_WRITE_WITH_IMM` without data (heartbeats and their acks).
    pub(crate) fn post_imm_empty(&self, conn: &CmIdRef<Con>, imm: Imm) -> Result {
        let h = conn.handler();
        h.sq_take_if_positive();
        let flags = self.send_flags(h);
        let op = SendOp::RdmaWriteWithImm {
            remote_addr: 0,
            rkey: 0,
            imm: imm.encode(),
        };
        conn.post_send(|h: &Con| Ok([SendWr::new(&h.io_cqe, op, &[], flags)]))
    }

    /// `process_io_req()`: a request arrived in chunk `id` at `off`.
    pub(crate) fn process_io_req(self: &Arc<Self>, conn: &CmIdRef<Con>, id: u32, off: u32) {
        let max_chunk = self.params().max_chunk_size;
        let Some(mr) = self.mrs.get(div(id, self.chunks_per_mr) as usize) else {
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
        let priv_ = *self.sess.priv_.lock();
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
            let _g = self.idle_lock.lock();
            self.idle.notify_all();
        }
    }

    /// `rtrs_srv_resp_rdma()`: the upper layer answers IO `id`.
    pub(crate) fn resp_rdma(this: &Arc<Self>, id: u32, status: i32) -> bool {
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
        let ret = this.with_con(cid, |conn| {
            let h = conn.handler();
            if !h.sq_take() {
                pr_err!("{}: IB send queue full: cid={}\n", this.name(), cid);
                h.wait_push(id);
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
            .get(div(id, self.chunks_per_mr) as usize)
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
        let inval = st.inval_key();
        let always = self.params().always_invalidate;
        let rkey_sge = if always {
            Some([self.rkey_rsp_sge(id)?])
        } else {
            None
        };
        let data_sge = data.map(|(_, sge)| [sge]);
        let flags = self.send_flags(conn.handler());
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

    /// Answers requests that waited for room in the send queue.
    pub(crate) fn process_wait_list(self: &Arc<Self>, con: &Con) {
        while let Some(id) = con.wait_pop() {
            let status = self.op_state[id as usize].status.load(Ordering::Relaxed);
            if !Self::resp_rdma(self, id, status) {
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
            self.with_con(cid, |conn| {
                for _ in 0..n {
                    conn.post_recv(|h: &Con| Ok([RecvWr::new(&h.io_cqe, &[])]))?;
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
        self.name.lock().set(pathname);
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
        let sge = [Sge::new(
            iu.dma_addr(0)?,
            size as u32,
            self.pd.local_dma_lkey(),
        )];
        let access = Access::LOCAL_WRITE.union(Access::REMOTE_WRITE);
        for i in 0..mrs_num {
            conn.post_send(|h: &Con| {
                Ok([SendWr::new(
                    &h.reg_cqe,
                    SendOp::RegMr {
                        mr: &h.path.mrs[i].mr,
                        access,
                    },
                    &[],
                    SendFlags::empty(),
                )])
            })?;
        }
        if !self.change_state(SrvState::Connected) {
            return Err(EIO);
        }
        DelayedWork::schedule(self, &self.sess.ctx.wq, Heartbeat::default().interval_ms());
        // We rely on the client, which sends INFO_REQ once all connections
        // are up: the first path of a session tells the upper layer.
        self.sess.path_up()?;
        self.established.store(true, Ordering::Release);
        conn.handler().set_info_rsp(iu);
        conn.post_send(|h: &Con| {
            Ok([SendWr::new(
                &h.info_rsp_cqe,
                SendOp::Send,
                &sge,
                SendFlags::SIGNALED,
            )])
        })
    }

    /// A heartbeat or any immediate data arrived.
    pub(crate) fn hb_received(&self) {
        self.hb_seen.store(true, Ordering::Relaxed);
    }
}

impl DelayedWorkItem<0> for Path {
    /// `hb_work()`: send a heartbeat, or give up on a silent path.
    fn run(this: Arc<Self>) {
        if this.state() != SrvState::Connected {
            return;
        }
        let action = {
            let mut hb = this.hb.lock();
            if this.hb_seen.swap(false, Ordering::Relaxed) {
                hb.received();
            }
            hb.tick(now_ns())
        };
        match action {
            HbAction::Fail => {
                pr_err!("{}: HB missed max reached.\n", this.name());
                this.close();
                return;
            }
            HbAction::Send => {
                if let Err(e) = this.with_con(0, |c| this.post_imm_empty(c, Imm::HbMsg)) {
                    pr_err!("{}: HB send failed, errno: {}\n", this.name(), e.to_errno());
                    this.close();
                    return;
                }
            }
            HbAction::Skip => {}
        }
        DelayedWork::schedule(&this, &this.sess.ctx.wq, this.hb.lock().interval_ms());
    }
}

impl WorkItem for Path {
    type Pointer = Arc<Path>;

    /// `rtrs_srv_close_work()`.
    fn run(this: Arc<Path>) {
        DelayedWork::cancel_sync(&*this);
        this.hb.lock().stop();
        // Take the connections out, disconnect them and flush their queues,
        // once no IO can be posting on them (one grace period for all).
        let cons = rcu::take_all(&this.cons);
        for id in cons.iter() {
            let _ = id.disconnect();
            id.drain();
        }
        // Wait for the upper layer to answer every IO it has.
        {
            let mut g = this.idle_lock.lock();
            while this.ops.in_flight() != 0 {
                if let CondVarTimeoutResult::Timeout = this
                    .idle
                    .wait_interruptible_timeout(&mut g, kernel::time::msecs_to_jiffies(1000))
                {
                    pr_info!(
                        "{}: waiting for {} IOs of the upper layer\n",
                        this.name(),
                        this.ops.in_flight()
                    );
                }
            }
        }
        PathFiles::remove(&this);
        if this.established.swap(false, Ordering::AcqRel) {
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
