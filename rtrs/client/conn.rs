// SPDX-License-Identifier: GPL-2.0-or-later

//! A connection of a client path (`struct rtrs_clt_con`): its rdma_cm
//! events (address, route, CON_REQ, CON_RSP) and completions (IO responses
//! as immediate data, new rkeys, heartbeats, INFO_REQ/RSP).

use super::path::Path;
use super::req::ReqSet;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU8, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::once::SetOnce;
use rb::ratelimit::pr_err_ratelimited;
use rb::sync::{new_spinlock_irq, SpinLockIrq};
use rb_rdma::cq::impl_has_cqe;
use rb_rdma::{
    CmEvent, CmHandler, CmIdRef, ConnParam, Cqe, CqeHandler, DmaBuf, DmaDirection, QpEvent, RecvWr,
    Sge, Wc, WcOpcode,
};
use rtrs_proto::imm::Imm;
use rtrs_proto::msg::{ConnReq, ConnRsp, InfoRsp, RkeyRsp, PROTO_VER};
use rtrs_proto::state::CltState;

/// `RTRS_CONNECT_TIMEOUT_MS`.
pub(crate) const CONNECT_TIMEOUT_MS: u32 = 30_000;

/// One receive buffer for RKEY_RSP messages (`rsp_ius`), all in one
/// mapping per connection.
pub(crate) struct RspIu {
    cqe: Cqe<RspIu>,
    idx: u32,
}
impl_has_cqe!(impl HasCqe<0> for RspIu { self.cqe });

/// The RKEY_RSP receive buffers of a connection.
pub(crate) struct RspRing {
    ius: KVec<RspIu>,
    buf: DmaBuf,
    /// The local DMA key of the connection's PD, for reposting without
    /// looking the PD up (a lock and a reference count) on every receive.
    lkey: u32,
}

impl RspRing {
    fn new(dev: &rb_rdma::Device, n: u32, lkey: u32) -> Result<Self> {
        let buf = DmaBuf::new(dev, n as usize * RkeyRsp::SIZE, DmaDirection::FromDevice)?;
        let mut ius = KVec::with_capacity(n as usize, GFP_KERNEL)?;
        for idx in 0..n {
            ius.push(
                RspIu {
                    cqe: Cqe::new(),
                    idx,
                },
                GFP_KERNEL,
            )?;
        }
        Ok(Self { ius, buf, lkey })
    }
}

#[pin_data]
pub(crate) struct Con {
    pub(crate) path: Arc<Path>,
    pub(crate) cid: u16,
    pub(crate) cpu: u32,
    /// 0 while connecting, 1 once established, a negative errno on error.
    pub(crate) cm_err: AtomicI32,
    /// Empty receives (IO responses, heartbeats) and RDMA writes.
    pub(crate) io_cqe: Cqe<Con, 0>,
    /// REG_MR (only errors complete).
    pub(crate) reg_cqe: Cqe<Con, 1>,
    /// INFO_REQ sent (connection 0).
    pub(crate) info_req_cqe: Cqe<Con, 2>,
    /// INFO_RSP received (connection 0).
    pub(crate) info_rsp_cqe: Cqe<Con, 3>,
    #[pin]
    info_bufs: SpinLockIrq<(Option<DmaBuf>, Option<DmaBuf>)>,
    rsp: SetOnce<RspRing>,
    reqs: SetOnce<Arc<ReqSet>>,
    pub(crate) wr_cnt: AtomicU32,
    /// 0 until established, 1 while the server has not confirmed its close
    /// (its DREQ, or its DREP to ours: `CmEvent::Disconnected(0)`), 2 after.
    close_state: AtomicU8,
    /// Set before the connection is torn down: no new QP from a late
    /// ADDR_RESOLVED.
    pub(crate) destroyed: AtomicBool,
}
impl_has_cqe!(impl HasCqe<0> for Con { self.io_cqe });
impl_has_cqe!(impl HasCqe<1> for Con { self.reg_cqe });
impl_has_cqe!(impl HasCqe<2> for Con { self.info_req_cqe });
impl_has_cqe!(impl HasCqe<3> for Con { self.info_rsp_cqe });

impl Con {
    pub(crate) fn new(path: Arc<Path>, cid: u16) -> Result<Arc<Self>> {
        let ncpu = rb::cpu::nr_cpu_ids().max(1);
        // The first two connections go to the first CPU.
        let cpu = rtrs_common::rem(u32::from(cid).saturating_sub(1), ncpu);
        Arc::pin_init(
            pin_init!(Con {
                path,
                cid,
                cpu,
                cm_err: AtomicI32::new(0),
                io_cqe: Cqe::new(),
                reg_cqe: Cqe::new(),
                info_req_cqe: Cqe::new(),
                info_rsp_cqe: Cqe::new(),
                info_bufs <- new_spinlock_irq!((None, None), "rtrs_clt_info"),
                rsp: SetOnce::new(),
                reqs: SetOnce::new(),
                wr_cnt: AtomicU32::new(1),
                close_state: AtomicU8::new(0),
                destroyed: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
    }

    /// The request set, once the path is connected.
    pub(crate) fn reqs(&self) -> Result<&ReqSet> {
        self.reqs
            .get()
            .map(|r| &**r)
            .ok_or_else(rb::errno::ENOTCONN)
    }

    pub(crate) fn set_reqs(&self, r: Arc<ReqSet>) {
        let _ = self.reqs.set(r);
    }

    /// `create_con_cq_qp()`: the QP, its CQ, and the RKEY_RSP buffers.
    fn create_qp(id: &CmIdRef<Self>) -> Result {
        let h = id.handler();
        let path = &h.path;
        if h.destroyed.load(Ordering::Acquire) {
            return Err(rb::errno::ECONNABORTED());
        }
        let dev = id.device().ok_or(ENODEV)?;
        let wr_limit = dev.attrs().max_qp_wr;
        let (max_send_wr, max_recv_wr, max_send_sge) = if h.cid == 0 {
            path.attach_device(dev)?;
            // Request and registration, receives (x2 for invalidations), plus
            // drain and heartbeat.
            let n = wr_limit.min(rtrs_proto::msg::SERVICE_CON_QUEUE_DEPTH * 2 + 2);
            (n, n, 1)
        } else {
            let qd = path.queue_depth();
            if qd == 0 {
                return Err(EINVAL);
            }
            (wr_limit.min(qd * 4 + 1), wr_limit.min(qd * 3 + 1), 2)
        };
        let cq_num = max_send_wr + max_recv_wr;
        let pd = path.pd().ok_or(ENODEV)?;
        if path.new_rkey() || h.cid == 0 {
            let _ = h.rsp.set(RspRing::new(dev, cq_num, pd.local_dma_lkey())?);
        }
        let attr = rb_rdma::cm::QpAttr {
            max_send_wr,
            max_recv_wr,
            max_send_sge,
            max_recv_sge: 1,
            nr_cqe: cq_num,
            comp_vector: rtrs_common::rem(h.cpu, dev.num_comp_vectors()),
            poll: if u32::from(h.cid) >= path.irq_con_num {
                rb_rdma::PollContext::Direct
            } else {
                rb_rdma::PollContext::Softirq
            },
        };
        id.create_qp(&pd, &attr)
    }

    /// `rtrs_rdma_route_resolved()`: sends CON_REQ.
    fn connect(id: &CmIdRef<Self>) -> Result {
        let h = id.handler();
        let path = &h.path;
        let req = ConnReq {
            version: PROTO_VER,
            cid: h.cid,
            cid_num: path.con_num as u16,
            recon_cnt: path.recon_cnt(),
            sess_uuid: path.uuid,
            paths_uuid: path.core.paths_uuid,
            first_conn: path.for_new_clt(),
        };
        let mut msg = [0u8; ConnReq::SIZE];
        req.encode(&mut msg).map_err(rtrs_common::kerr)?;
        id.connect(&ConnParam {
            private_data: &msg,
            retry_count: 7,
            rnr_retry_count: 7,
            ..Default::default()
        })
    }

    /// `rtrs_rdma_conn_established()`: checks CON_RSP; the first connection
    /// learns the server's parameters.
    fn established(id: &CmIdRef<Self>, private_data: &[u8]) -> Result {
        let h = id.handler();
        let rsp = ConnRsp::decode(private_data).map_err(|_| {
            pr_err!("{}: Invalid RTRS connection response\n", h.path.name());
            rb::errno::ECONNRESET()
        })?;
        if rsp.check_accepted().is_err() {
            pr_err!(
                "{}: Invalid RTRS message: errno {}\n",
                h.path.name(),
                rsp.errno
            );
            return Err(rb::errno::ECONNRESET());
        }
        if h.cid == 0 {
            h.path.learn(id, &rsp)?;
        }
        Ok(())
    }

    /// The server confirmed the close: its DREQ, or its DREP to ours
    /// (`CmEvent::Disconnected(0)`). Counted once, for an established
    /// connection.
    fn close_confirmed(&self) {
        if self
            .close_state
            .compare_exchange(1, 2, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.path.con_close_confirmed();
        }
    }

    /// A CM event that ends the connection: logged as C does, `err` for
    /// the path.
    fn cm_error(&self, event: &CmEvent<'_>, err: Error) -> Option<i32> {
        pr_warn!(
            "{}: CM error (CM event: {}, err: {})\n",
            self.path.name(),
            event.name(),
            event.status()
        );
        Some(err.to_errno())
    }

    /// `rtrs_rdma_conn_rejected()`: the server's errno, if it sent one.
    fn rejected(&self, private_data: Option<&[u8]>, reason: i32) -> i32 {
        let errno = private_data.map_or(0, ConnRsp::reject_errno);
        if errno == -(rb::ffi::EBUSY as i32) {
            pr_err!(
                "{}: Previous session is still exists on the server, please reconnect later\n",
                self.path.name()
            );
        } else if errno != 0 {
            pr_err!(
                "{}: Connect rejected: status {}, rtrs errno {}\n",
                self.path.name(),
                reason,
                errno
            );
        } else {
            pr_err!(
                "{}: Connect rejected but with malformed message: status {}\n",
                self.path.name(),
                reason
            );
        }
        if errno != 0 {
            errno
        } else {
            rb::errno::ECONNRESET().to_errno()
        }
    }

    /// `flag_error_on_conn()`.
    fn flag_error(&self, err: i32) {
        if self.cm_err.swap(err, Ordering::AcqRel) == 1 {
            self.path.con_down();
        }
        self.path.notify();
    }

    /// Before the CM ID is destroyed: no new QP from a late ADDR_RESOLVED,
    /// and a connection still counted as established (its end never
    /// reported: the server did not answer the disconnect) is counted no
    /// longer. No event of it comes after the destruction, and a count left
    /// behind would make every later close of the path wait the whole
    /// `CONNECT_TIMEOUT_MS` for it (C's `connected_cnt` is left so: after
    /// one unanswered disconnect, each close of the path takes 30 s more).
    pub(crate) fn retire(&self) {
        self.destroyed.store(true, Ordering::Release);
        self.flag_error(rb::errno::ECONNABORTED().to_errno());
    }

    /// Posts receive `i` of the RKEY_RSP ring.
    pub(crate) fn post_rsp_iu(id: &CmIdRef<Self>, i: u32) -> Result {
        let h = id.handler();
        let ring = h.rsp.get().ok_or(EINVAL)?;
        let off = i as usize * RkeyRsp::SIZE;
        let sge = [Sge::new(
            ring.buf.dma_addr(off)?,
            RkeyRsp::SIZE as u32,
            ring.lkey,
        )];
        id.post_recv(|h: &Self| {
            let ring = h.rsp.get().ok_or(EINVAL)?;
            Ok([RecvWr::new(
                &ring.ius.get(i as usize).ok_or(EINVAL)?.cqe,
                &sge,
            )])
        })
    }

    /// `post_recv_io()`: the receives for IO of this connection.
    pub(crate) fn post_recv_io(id: &CmIdRef<Self>, n: u32) -> Result {
        let h = id.handler();
        for i in 0..n {
            if h.path.new_rkey() {
                Self::post_rsp_iu(id, i)?;
            } else {
                id.post_recv(|h: &Self| Ok([RecvWr::new(&h.io_cqe, &[])]))?;
            }
        }
        Ok(())
    }

    /// `rtrs_send_path_info()`: posts the INFO_RSP receive and INFO_REQ.
    /// The INFO_REQ message, ready to send, and room for the INFO_RSP of a
    /// server with `qd` chunks: `(tx, rx)` for [`Con::send_info`]. May sleep.
    pub(crate) fn info_bufs(path: &Path, qd: u32) -> Result<(DmaBuf, DmaBuf)> {
        let pd = path.pd().ok_or(ENODEV)?;
        let rx_sz = InfoRsp::wire_size(qd as usize).ok_or(EINVAL)?;
        let rx = DmaBuf::new(pd.device(), rx_sz, DmaDirection::FromDevice)?;
        let mut tx = DmaBuf::new(
            pd.device(),
            rtrs_proto::msg::InfoReq::SIZE,
            DmaDirection::ToDevice,
        )?;
        let msg =
            rtrs_proto::msg::InfoReq::new(path.core.name.as_bytes()).map_err(rtrs_common::kerr)?;
        let mut b = [0u8; rtrs_proto::msg::InfoReq::SIZE];
        msg.encode(&mut b).map_err(rtrs_common::kerr)?;
        tx.write(0, &b)?;
        Ok((tx, rx))
    }

    /// `rtrs_send_path_info()` on the service connection: posts the receive
    /// of INFO_RSP into `rx` and sends INFO_REQ from `tx` (from
    /// [`Con::info_bufs`]). Does not sleep.
    pub(crate) fn send_info(id: &CmIdRef<Self>, (tx, rx): (DmaBuf, DmaBuf)) -> Result {
        let h = id.handler();
        let pd = h.path.pd().ok_or(ENODEV)?;
        let lkey = pd.local_dma_lkey();
        let rx_sge = [Sge::new(rx.dma_addr(0)?, rx.len() as u32, lkey)];
        let tx_sge = [Sge::new(tx.dma_addr(0)?, tx.len() as u32, lkey)];
        *h.info_bufs.lock() = (Some(tx), Some(rx));
        id.post_recv(|h: &Self| Ok([RecvWr::new(&h.info_rsp_cqe, &rx_sge)]))?;
        id.post_send(|h: &Self| {
            Ok([rb_rdma::SendWr::new(
                &h.info_req_cqe,
                rb_rdma::SendOp::Send,
                &tx_sge,
                rb_rdma::SendFlags::SIGNALED,
            )])
        })
    }

    /// `rtrs_clt_rdma_done()`: a completion on `io_cqe`, or on RKEY_RSP
    /// buffer `iu` (then it is posted again). Receives come in RKEY_RSP
    /// buffers exactly when the server sends new rkeys (`post_recv_io`), so
    /// `iu.is_some()` is C's `flags & RTRS_MSG_NEW_RKEY_F` here, without
    /// reading the path's server parameters (a lock) per completion.
    pub(crate) fn rdma_done(&self, id: &CmIdRef<Self>, wc: &Wc<'_>, iu: Option<u32>) {
        let path = &self.path;
        if !wc.is_ok() {
            if !wc.is_flushed() {
                pr_err!("{}: RDMA failed: {}\n", path.name(), wc.status_msg());
                path.error_recovery();
            }
            return;
        }
        path.stats.completion_on(self.cpu);
        let repost = |id: &CmIdRef<Self>| {
            if let Some(i) = iu {
                if let Err(e) = Self::post_rsp_iu(id, i) {
                    pr_err!("{}: post iu failed {}\n", path.name(), e.to_errno());
                    path.error_recovery();
                }
            }
        };
        match wc.opcode() {
            WcOpcode::RecvRdmaWithImm => {
                path.hb_received();
                let mut w_inval = false;
                match Imm::decode(wc.imm_data().unwrap_or(0)) {
                    Imm::IoRsp {
                        msg_id,
                        errno,
                        w_inval: w,
                    } => {
                        w_inval = w;
                        path.io_rsp(id, msg_id, errno, w_inval);
                    }
                    Imm::HbMsg => {
                        path.send_hb(id, Imm::HbAck);
                        if iu.is_some() {
                            return repost(id);
                        }
                    }
                    Imm::HbAck => {
                        path.hb_acked();
                        if iu.is_some() {
                            return repost(id);
                        }
                    }
                    other => pr_warn!("{}: Unknown IMM {:?}\n", path.name(), other),
                }
                // One receive for this immediate, and one for the
                // SEND_WITH_INV that came before it: one post, as C's
                // `rtrs_post_recv_empty_x2()`.
                let posted = if w_inval {
                    id.post_recv(|h: &Self| {
                        Ok([RecvWr::new(&h.io_cqe, &[]), RecvWr::new(&h.io_cqe, &[])])
                    })
                } else {
                    id.post_recv(|h: &Self| Ok([RecvWr::new(&h.io_cqe, &[])]))
                };
                if let Err(e) = posted {
                    pr_err!(
                        "{}: rtrs_post_recv_empty(): {}\n",
                        path.name(),
                        e.to_errno()
                    );
                    path.error_recovery();
                }
            }
            WcOpcode::Recv => {
                // Key invalidations from the server, and new rkeys.
                path.hb_received();
                if iu.is_some() {
                    if wc.invalidated_rkey().is_some() {
                        return repost(id);
                    }
                    if let Some(i) = iu {
                        if self.rkey_rsp(id, wc, i).is_err() {
                            path.error_recovery();
                            return;
                        }
                    }
                    repost(id);
                }
            }
            WcOpcode::RdmaWrite => {}
            other => pr_warn!("{}: Unexpected WC type: {:?}\n", path.name(), other),
        }
    }

    /// `rtrs_clt_rkey_rsp_done()`: the server re-registered a chunk.
    fn rkey_rsp(&self, id: &CmIdRef<Self>, wc: &Wc<'_>, i: u32) -> Result {
        let path = &self.path;
        if (wc.byte_len() as usize) < RkeyRsp::SIZE {
            pr_err!(
                "{}: rkey response is malformed: size {}\n",
                path.name(),
                wc.byte_len()
            );
            return Err(EINVAL);
        }
        let ring = self.rsp.get().ok_or(EINVAL)?;
        let mut b = [0u8; RkeyRsp::SIZE];
        ring.buf.read(i as usize * RkeyRsp::SIZE, &mut b)?;
        let msg = RkeyRsp::decode(&b).map_err(|_| {
            pr_err!("{}: rkey response is malformed\n", path.name());
            EINVAL
        })?;
        if let Imm::IoRsp {
            msg_id,
            errno,
            w_inval,
        } = Imm::decode(wc.imm_data().unwrap_or(0))
        {
            if u32::from(msg.buf_id) != msg_id {
                pr_err!(
                    "{}: rkey response for chunk {} came as the answer to {}\n",
                    path.name(),
                    msg.buf_id,
                    msg_id
                );
                return Err(EINVAL);
            }
            // The connection's request set is the path's (`init_conns`):
            // no need for the path's lock and a reference.
            let slot = self.reqs()?.rbufs.get(msg_id as usize).ok_or_else(|| {
                pr_err!(
                    "{}: rkey response for unknown chunk {}\n",
                    path.name(),
                    msg_id
                );
                EINVAL
            })?;
            slot.rkey.store(msg.rkey, Ordering::Release);
            path.io_rsp(id, msg_id, errno, w_inval);
        }
        Ok(())
    }
}

impl CqeHandler<0> for Con {
    type Conn = Con;

    fn done(&self, conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        self.rdma_done(conn, wc, None);
    }
}

impl CqeHandler<0> for RspIu {
    type Conn = Con;

    fn done(&self, conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        conn.handler().rdma_done(conn, wc, Some(self.idx));
    }
}

impl CqeHandler<1> for Con {
    type Conn = Con;

    /// `rtrs_clt_fast_reg_done()`. REG_MR is posted unsignalled, so this
    /// runs only when it failed; a flush counts too, as in C: the provider
    /// may report the WR that broke the QP as flushed (rxe does), and
    /// nothing else would tell the path that its QP is dead.
    fn done(&self, _conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        if !wc.is_ok() {
            pr_err_ratelimited!(
                "rtrs_clt_fast_reg_done",
                "{}: Failed IB_WR_REG_MR: {}\n",
                self.path.name(),
                wc.status_msg()
            );
            self.path.error_recovery();
        }
    }
}

impl CqeHandler<2> for Con {
    type Conn = Con;

    /// `rtrs_clt_info_req_done()`.
    fn done(&self, _conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        let tx = self.info_bufs.lock().0.take();
        drop(tx);
        if !wc.is_ok() {
            pr_err!(
                "{}: Path info request send failed: {}\n",
                self.path.name(),
                wc.status_msg()
            );
            self.path.set_connecting_err();
        }
    }
}

impl CqeHandler<3> for Con {
    type Conn = Con;

    /// `rtrs_clt_info_rsp_done()`.
    fn done(&self, conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        let rx = self.info_bufs.lock().1.take();
        let ok = match (wc.is_ok(), rx) {
            (true, Some(rx)) => {
                self.path.stats.completion_on(self.cpu);
                self.path.info_rsp(conn, &rx, wc.byte_len() as usize)
            }
            (false, _) => {
                pr_err!(
                    "{}: Path info response recv failed: {}\n",
                    self.path.name(),
                    wc.status_msg()
                );
                Err(EIO)
            }
            _ => Err(EINVAL),
        };
        self.path.info_done(ok.is_ok());
    }
}

impl CmHandler for Con {
    /// `qp_event_handler()` of rtrs.c.
    fn qp_event(&self, ev: &QpEvent) {
        rtrs_common::log_qp_event(&self.path.name(), ev);
    }

    /// `rtrs_clt_rdma_cm_handler()`.
    fn event(&self, id: &CmIdRef<Self>, event: &CmEvent<'_>) {
        if let CmEvent::Disconnected(0) = event {
            self.close_confirmed();
        }
        let err = match event {
            CmEvent::AddrResolved => Self::create_qp(id)
                .inspect_err(|e| {
                    pr_err!(
                        "{}: create_con_cq_qp(), err: {}\n",
                        self.path.name(),
                        e.to_errno()
                    )
                })
                .and_then(|()| id.resolve_route(CONNECT_TIMEOUT_MS))
                .err()
                .map(|e| e.to_errno()),
            CmEvent::RouteResolved => Self::connect(id).err().map(|e| e.to_errno()),
            CmEvent::Established { private_data } => match Self::established(id, private_data) {
                Ok(()) => {
                    self.cm_err.store(1, Ordering::Release);
                    self.close_state.store(1, Ordering::Release);
                    self.path.con_up();
                    None
                }
                Err(e) => Some(e.to_errno()),
            },
            CmEvent::Rejected {
                reason,
                private_data,
            } => Some(self.rejected(*private_data, *reason)),
            // As C: no message for disconnecting.
            CmEvent::Disconnected(_) => Some(rb::errno::ECONNRESET().to_errno()),
            // C has destroyed the CM IDs of a path it closed before their
            // TIMEWAIT_EXIT comes; ours may outlive it, silently then.
            CmEvent::TimewaitExit
                if !matches!(
                    self.path.state(),
                    CltState::Connected | CltState::Connecting
                ) =>
            {
                Some(rb::errno::ECONNRESET().to_errno())
            }
            CmEvent::ConnectError(_)
            | CmEvent::Unreachable(_)
            | CmEvent::AddrChange
            | CmEvent::TimewaitExit => self.cm_error(event, rb::errno::ECONNRESET()),
            CmEvent::AddrError(_) | CmEvent::RouteError(_) => {
                self.cm_error(event, rb::errno::EHOSTUNREACH())
            }
            CmEvent::DeviceRemoval => {
                pr_warn!("{}: CM event: {}\n", self.path.name(), event.name());
                self.path.close_conns(false);
                None
            }
            _ => {
                pr_err!(
                    "{}: Unexpected RDMA CM error (CM event: {}, err: {})\n",
                    self.path.name(),
                    event.name(),
                    event.status()
                );
                Some(rb::errno::ECONNRESET().to_errno())
            }
        };
        if let Some(e) = err {
            // Meaningful while connecting; otherwise the path reconnects.
            self.flag_error(e);
            self.path.error_recovery();
        }
    }
}
