// SPDX-License-Identifier: GPL-2.0-or-later

//! A connection of a server path (`struct rtrs_srv_con`): its rdma_cm
//! events and its completions (requests arriving as RDMA writes with
//! immediate data, heartbeats, send-queue credit, INFO_REQ/RSP).

use super::path::Path;
use core::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::kvec::VecExt;
use rb::ratelimit::pr_err_ratelimited;
use rb::sync::{new_spinlock_irq, SpinLockIrq};
use rb_rdma::cq::impl_has_cqe;
use rb_rdma::device::Device;
use rb_rdma::{
    CmEvent, CmHandler, CmIdRef, Cqe, CqeHandler, DmaBuf, DmaDirection, QpEvent, RecvWr, SendFlags,
    SendOp, SendWr, Sge, Wc, WcOpcode,
};
use rtrs_proto::imm::Imm;
use rtrs_proto::msg::InfoReq;
use rtrs_proto::state::SrvState;

#[pin_data]
pub(crate) struct Con {
    pub(crate) path: Arc<Path>,
    pub(crate) cid: u16,
    /// Empty receives for requests and heartbeats, and IO answers.
    pub(crate) io_cqe: Cqe<Con, 0>,
    /// REG_MR of the chunks (only errors complete).
    pub(crate) reg_cqe: Cqe<Con, 1>,
    /// The INFO_REQ receive (connection 0).
    pub(crate) info_req_cqe: Cqe<Con, 2>,
    /// The INFO_RSP send.
    pub(crate) info_rsp_cqe: Cqe<Con, 3>,
    info_req: Option<DmaBuf>,
    #[pin]
    info_rsp: SpinLockIrq<Option<DmaBuf>>,
    /// Free send queue entries.
    sq_wr_avail: AtomicI32,
    /// Sends so far, for signalling every `signal_interval`.
    wr_cnt: AtomicU32,
    /// Answers waiting for room in the send queue.
    #[pin]
    wait_list: SpinLockIrq<KVec<u32>>,
}
impl_has_cqe!(impl HasCqe<0> for Con { self.io_cqe });
impl_has_cqe!(impl HasCqe<1> for Con { self.reg_cqe });
impl_has_cqe!(impl HasCqe<2> for Con { self.info_req_cqe });
impl_has_cqe!(impl HasCqe<3> for Con { self.info_rsp_cqe });

impl Con {
    pub(crate) fn new(
        path: Arc<Path>,
        cid: u16,
        max_send_wr: u32,
        dev: &Device,
    ) -> Result<Arc<Self>> {
        let info_req = if cid == 0 {
            Some(DmaBuf::new(dev, InfoReq::SIZE, DmaDirection::FromDevice)?)
        } else {
            None
        };
        let wait = KVec::with_capacity(path.sess.queue_depth as usize, GFP_KERNEL)?;
        Arc::pin_init(
            pin_init!(Con {
                path,
                cid,
                io_cqe: Cqe::new(),
                reg_cqe: Cqe::new(),
                info_req_cqe: Cqe::new(),
                info_rsp_cqe: Cqe::new(),
                info_req,
                info_rsp <- new_spinlock_irq!(None, "rtrs_srv_info_rsp"),
                sq_wr_avail: AtomicI32::new(max_send_wr as i32),
                wr_cnt: AtomicU32::new(1),
                wait_list <- new_spinlock_irq!(wait, "rtrs_srv_wait_list"),
            }),
            GFP_KERNEL,
        )
    }

    pub(crate) fn next_wr(&self) -> u32 {
        self.wr_cnt.fetch_add(1, Ordering::Relaxed).wrapping_add(1)
    }

    /// Takes a send queue entry; false (and nothing taken) if none is free.
    pub(crate) fn sq_take(&self) -> bool {
        if self.sq_wr_avail.fetch_sub(1, Ordering::AcqRel) - 1 < 0 {
            self.sq_wr_avail.fetch_add(1, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// Takes a send queue entry if one is free (`atomic_dec_if_positive`).
    pub(crate) fn sq_take_if_positive(&self) {
        let _ = self
            .sq_wr_avail
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                (v > 0).then(|| v - 1)
            });
    }

    pub(crate) fn wait_push(&self, id: u32) {
        // Capacity for every chunk was reserved: this never allocates.
        let _ = self.wait_list.lock().push(id, GFP_ATOMIC);
    }

    pub(crate) fn wait_pop(&self) -> Option<u32> {
        let mut l = self.wait_list.lock();
        if l.is_empty() {
            None
        } else {
            l.swap_remove(0)
        }
    }

    pub(crate) fn set_info_rsp(&self, iu: DmaBuf) {
        let old = self.info_rsp.lock().replace(iu);
        drop(old);
    }

    /// Posts the receive for INFO_REQ (connection 0).
    pub(crate) fn post_info_req_recv(id: &CmIdRef<Self>) -> Result {
        let h = id.handler();
        let buf = h.info_req.as_ref().ok_or(EINVAL)?;
        let sge = [Sge::new(
            buf.dma_addr(0)?,
            InfoReq::SIZE as u32,
            h.path.pd.local_dma_lkey(),
        )];
        id.post_recv(|h: &Self| Ok([RecvWr::new(&h.info_req_cqe, &sge)]))
    }

    /// `rtrs_srv_rdma_done()` for a received immediate.
    fn recv_imm(conn: &CmIdRef<Self>, wc: &Wc<'_>) {
        let h = conn.handler();
        let path = &h.path;
        path.hb_received();
        if let Err(e) = conn.post_recv(|h: &Self| Ok([RecvWr::new(&h.io_cqe, &[])])) {
            pr_err!("{}: rtrs_post_recv(), err: {}\n", path.name(), e.to_errno());
            path.close();
            return;
        }
        let p = path.params();
        match Imm::decode(wc.imm_data().unwrap_or(0)) {
            Imm::IoReq { payload } => {
                let (id, off) = match path.layout.split_checked(
                    payload,
                    path.sess.queue_depth,
                    p.max_chunk_size,
                ) {
                    Ok(v) => v,
                    Err(_) => {
                        let (id, off) = path.layout.split(payload);
                        pr_err!("{}: Wrong msg_id {}, off {}\n", path.name(), id, off);
                        path.close();
                        return;
                    }
                };
                if p.always_invalidate {
                    // Invalidate the client's access to the chunk first.
                    let mr = &path.mrs[id as usize];
                    mr.set_pending(off);
                    let rkey = mr.mr.rkey();
                    let i = id as usize;
                    let ret = conn.post_send(|h: &Self| {
                        Ok([SendWr::new(
                            &h.path.mrs[i].inv_cqe,
                            SendOp::LocalInv(rkey),
                            &[],
                            SendFlags::SIGNALED,
                        )])
                    });
                    if let Err(e) = ret {
                        pr_err!(
                            "{}: posting LOCAL_INV, err: {}\n",
                            path.name(),
                            e.to_errno()
                        );
                        path.close();
                    }
                } else {
                    path.process_io_req(conn, id, off);
                }
            }
            Imm::HbMsg => {
                if let Err(e) = path.post_imm_empty(conn, Imm::HbAck) {
                    pr_err!(
                        "{}: send HB ACK failed, errno: {}\n",
                        path.name(),
                        e.to_errno()
                    );
                    path.close();
                }
            }
            Imm::HbAck => {}
            other => pr_warn!("{}: Unknown IMM {:?}\n", path.name(), other),
        }
    }
}

impl CqeHandler<0> for Con {
    type Conn = Con;

    /// `rtrs_srv_rdma_done()`.
    fn done(&self, conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        if !wc.is_ok() {
            if !wc.is_flushed() {
                pr_err!(
                    "{}: {} (len: {})\n",
                    self.path.name(),
                    wc.status_msg(),
                    wc.byte_len()
                );
                self.path.close();
            }
            return;
        }
        match wc.opcode() {
            WcOpcode::RecvRdmaWithImm => Self::recv_imm(conn, wc),
            WcOpcode::RdmaWrite | WcOpcode::Send => {
                // A signalled send: `signal_interval` entries are free again.
                self.sq_wr_avail
                    .fetch_add(self.path.signal_interval as i32, Ordering::AcqRel);
                if !self.wait_list.lock().is_empty() {
                    self.path.process_wait_list(self);
                }
            }
            other => pr_warn!("{}: Unexpected WC type: {:?}\n", self.path.name(), other),
        }
    }
}

impl CqeHandler<1> for Con {
    type Conn = Con;

    /// `rtrs_srv_reg_mr_done()`.
    fn done(&self, _conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        // Flushed too, as in C: rxe reports a REG_MR that broke the QP as
        // flushed (Documentation/rtrs.md).
        if !wc.is_ok() {
            pr_err_ratelimited!(
                "rtrs_srv_reg_mr_done",
                "{}: REG MR failed: {}\n",
                self.path.name(),
                wc.status_msg()
            );
            self.path.close();
        }
    }
}

impl CqeHandler<2> for Con {
    type Conn = Con;

    /// `rtrs_srv_info_req_done()`.
    fn done(&self, conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        let path = &self.path;
        if !wc.is_ok() {
            if !wc.is_flushed() {
                pr_err!(
                    "{}: Sess info request receive failed: {}\n",
                    path.name(),
                    wc.status_msg()
                );
            }
            path.close();
            return;
        }
        let mut buf = [0u8; InfoReq::SIZE];
        let ok = wc.byte_len() as usize >= InfoReq::SIZE
            && self
                .info_req
                .as_ref()
                .is_some_and(|b| b.read(0, &mut buf).is_ok());
        let msg = match ok.then(|| InfoReq::decode(&buf)) {
            Some(Ok(m)) => m,
            _ => {
                pr_err!(
                    "{}: Sess info request is malformed: size {}\n",
                    path.name(),
                    wc.byte_len()
                );
                path.close();
                return;
            }
        };
        if let Err(e) = path.process_info_req(conn, msg.pathname()) {
            pr_err!(
                "{}: process_info_req(), err: {}\n",
                path.name(),
                e.to_errno()
            );
            path.close();
        }
    }
}

impl CqeHandler<3> for Con {
    type Conn = Con;

    /// `rtrs_srv_info_rsp_done()`.
    fn done(&self, _conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        let iu = self.info_rsp.lock().take();
        drop(iu);
        if !wc.is_ok() {
            if !wc.is_flushed() {
                pr_err!(
                    "{}: Sess info response send failed: {}\n",
                    self.path.name(),
                    wc.status_msg()
                );
            }
            self.path.close();
        }
    }
}

impl CmHandler for Con {
    /// `qp_event_handler()` of rtrs.c.
    fn qp_event(&self, ev: &QpEvent) {
        rtrs_common::log_qp_event(&self.path.name(), ev);
    }

    /// `rtrs_srv_rdma_cm_handler()` for a connection.
    fn event(&self, _id: &CmIdRef<Self>, event: &CmEvent<'_>) {
        match event {
            CmEvent::Established { .. } => {}
            CmEvent::Rejected { .. } | CmEvent::ConnectError(_) | CmEvent::Unreachable(_) => {
                pr_err!(
                    "{}: CM error (CM event: {})\n",
                    self.path.name(),
                    event.name()
                );
                self.path.close();
            }
            CmEvent::Disconnected(_)
            | CmEvent::AddrChange
            | CmEvent::TimewaitExit
            | CmEvent::DeviceRemoval => {
                if self.path.state() == SrvState::Connected {
                    pr_info!(
                        "{}: CM event: {}, closing the path\n",
                        self.path.name(),
                        event.name()
                    );
                }
                self.path.close();
            }
            _ => pr_err!("Ignoring unexpected CM event {}\n", event.name()),
        }
    }
}
