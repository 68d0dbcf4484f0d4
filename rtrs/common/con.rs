// SPDX-License-Identifier: GPL-2.0-or-later

//! A connection of a path (C's `struct rtrs_con` and what `rtrs.c` does for
//! both sides): its completion entries and the dispatch of their
//! completions, send signalling, the INFO message buffers, QP and CQ
//! creation, and the posting of empty receives and of empty writes with
//! immediate data. A side (the client's or the server's path, [`Side`])
//! adds its own fields ([`Side::ConExt`]) and says what its messages mean.
//!
//! # Locking
//!
//! A connection's mutable fields are atomics, set-once cells and `info`, a
//! leaf lock held only to put an INFO buffer in or take it out.

use crate::hb::Hb;
use core::fmt::Display;
use core::num::NonZeroU32;
use core::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::Arc;
use rb::sync::{new_spinlock_irq, SpinLockIrq};
use rb_rdma::cm::QpAttr;
use rb_rdma::{
    CmEvent, CmHandler, CmIdRef, Cqe, CqeHandler, DmaBuf, PollContext, QpEvent, RecvWr, SendFlags,
    SendOp, SendWr, Sge, Wc, WcOpcode,
};
use rtrs_proto::imm::Imm;

/// The completion ids of a connection's entries.
pub mod cqe {
    /// Receives of IO messages and heartbeats, and sends (`io_comp_cqe`).
    pub const IO: u64 = 0;
    /// Memory registrations, posted unsignalled: only failures complete
    /// (`fast_reg_cqe`, `local_reg_cqe`).
    pub const REG: u64 = 1;
    /// The INFO message this side sends: the client's INFO_REQ, the
    /// server's INFO_RSP.
    pub const INFO_TX: u64 = 2;
    /// The INFO message this side receives.
    pub const INFO_RX: u64 = 3;
}

/// Where a receive completed: an empty receive (immediate data only), or
/// buffer `i` of a side's receive ring (the client's RKEY_RSP buffers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rx {
    /// An empty receive.
    Empty,
    /// Receive buffer `i`.
    Iu(u32),
}

/// Send queue bookkeeping (C's `wr_cnt` and `sq_wr_avail` of `struct
/// rtrs_con`, and the path's `signal_interval`).
pub struct SendQueue {
    /// Sends so far.
    wr_cnt: AtomicU32,
    /// Free send queue entries: the server queues an answer when there are
    /// none.
    avail: AtomicI32,
    /// Every `interval`-th send is signalled, or the send queue fills with
    /// entries nobody reaps. 0 until known (the client learns it with
    /// CON_RSP): then every send is.
    interval: AtomicU32,
}

impl SendQueue {
    /// A send queue of `avail` entries, signalling every `interval`-th send.
    pub fn new(avail: u32, interval: u32) -> Self {
        Self {
            // As C's `atomic_set(&con->wr_cnt, 1)`.
            wr_cnt: AtomicU32::new(1),
            avail: AtomicI32::new(i32::try_from(avail).unwrap_or(i32::MAX)),
            interval: AtomicU32::new(interval),
        }
    }

    /// Sets the signal interval, once known.
    pub fn set_interval(&self, interval: u32) {
        self.interval.store(interval, Ordering::Relaxed);
    }

    /// Sends so far (C's `wr_cnt`, for trace events).
    pub fn wr_cnt(&self) -> u32 {
        self.wr_cnt.load(Ordering::Relaxed)
    }

    /// The flags of the next send: signalled every `interval`-th time.
    pub fn next_flags(&self) -> SendFlags {
        let n = self.wr_cnt.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        match NonZeroU32::new(self.interval.load(Ordering::Relaxed)) {
            Some(i) if n % i != 0 => SendFlags::empty(),
            _ => SendFlags::SIGNALED,
        }
    }

    /// Takes a free entry; false (and nothing taken) if there is none.
    pub fn take(&self) -> bool {
        if self.avail.fetch_sub(1, Ordering::AcqRel) <= 0 {
            self.avail.fetch_add(1, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// Takes a free entry if there is one (`atomic_dec_if_positive`).
    pub fn take_if_positive(&self) {
        let _ = self
            .avail
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                (v > 0).then(|| v - 1)
            });
    }

    /// A signalled send completed: the entries of the sends before it, up
    /// to the last signalled one, are free again.
    pub fn credit_signalled(&self) {
        let n = self.interval.load(Ordering::Relaxed).max(1);
        self.avail
            .fetch_add(i32::try_from(n).unwrap_or(i32::MAX), Ordering::AcqRel);
    }
}

/// The INFO message buffers of a connection, each owned by the connection
/// from its post until its completion.
#[derive(Default)]
pub struct InfoIus {
    /// The INFO message sent (`INFO_TX`).
    tx: Option<DmaBuf>,
    /// Room for the INFO message received (`INFO_RX`).
    rx: Option<DmaBuf>,
}

/// What a failed memory registration or invalidation logs: the site that
/// limits its rate and C's message.
pub struct WcError {
    /// The rate limit site (C's function).
    pub site: &'static CStr,
    /// What C logs before the status.
    pub what: &'static str,
}

/// A side of the transport: the client's or the server's path, which owns
/// its connections and says what their completions and events mean.
/// Everything here runs in the context of a completion or a CM event.
pub trait Side: Send + Sync + Sized + 'static {
    /// The side's fields of a connection.
    type ConExt: Send + Sync;

    /// What a failed REG_MR logs (`rtrs_clt_fast_reg_done()`,
    /// `rtrs_srv_reg_mr_done()`).
    const REG_MR_FAILED: WcError;

    /// The path's name in log lines.
    fn name(&self) -> impl Display + '_;

    /// The path's heartbeat.
    fn hb(&self) -> &Hb;

    /// The path failed (a completion error, a heartbeat missed): the client
    /// reconnects it, the server closes it (C's `hb_err_handler`).
    #[track_caller]
    fn fail(self: &Arc<Self>);

    /// A completion of `con` succeeded (the client counts where it ran).
    fn completed(_con: &Con<Self>) {}

    /// A work request on `io_cqe` failed, other than flushed: logs it.
    fn io_failed(con: &Con<Self>, wc: &Wc<'_>);

    /// Whether the receive(s) of immediate data are posted again before it
    /// is handled. The server does (C's `rtrs_srv_rdma_done()`): a request
    /// that comes when its path cannot take the next one is not started.
    /// The client does after (`rtrs_clt_rdma_done()`): an answer to an IO
    /// the server has executed is never thrown away.
    const REPOST_FIRST: bool;

    /// Posts again the receive(s) that immediate data `imm` arrived in;
    /// logs a failure.
    fn repost(con: &Con<Self>, id: &CmIdRef<Con<Self>>, rx: Rx, imm: &Imm) -> Result;

    /// An IO message arrived as immediate data (the server's IO_REQ and
    /// FENCE, the client's IO_RSP and FENCE_ACK).
    fn io_imm(con: &Con<Self>, id: &CmIdRef<Con<Self>>, wc: &Wc<'_>, imm: Imm);

    /// A receive without immediate data completed (the client's RKEY_RSP or
    /// SEND_WITH_INV).
    fn recv(con: &Con<Self>, id: &CmIdRef<Con<Self>>, wc: &Wc<'_>, rx: Rx);

    /// A signalled send completed (the server sends answers that waited for
    /// room in the send queue).
    fn send_done(_con: &Con<Self>) {}

    /// The INFO message sent completed (`ok`: successfully).
    fn info_sent(con: &Con<Self>, wc: &Wc<'_>);

    /// The INFO message arrived (`rx`, if the completion found it; check
    /// `wc` for its status and length).
    fn info_received(con: &Con<Self>, id: &CmIdRef<Con<Self>>, wc: &Wc<'_>, rx: Option<DmaBuf>);

    /// An rdma_cm event of the connection.
    fn cm_event(con: &Con<Self>, id: &CmIdRef<Con<Self>>, event: &CmEvent<'_>);
}

/// A connection of a path of side `S`.
#[pin_data]
pub struct Con<S: Side> {
    /// The path it belongs to.
    pub path: Arc<S>,
    /// Its connection id: 0 the service connection, then one per CPU, then
    /// the poll queues.
    pub cid: u16,
    /// Receives of IO messages and heartbeats, and sends.
    pub io_cqe: Cqe<Self, { cqe::IO }>,
    /// Memory registrations (only failures complete).
    pub reg_cqe: Cqe<Self, { cqe::REG }>,
    /// The INFO message sent.
    pub info_tx_cqe: Cqe<Self, { cqe::INFO_TX }>,
    /// The INFO message received.
    pub info_rx_cqe: Cqe<Self, { cqe::INFO_RX }>,
    #[pin]
    info: SpinLockIrq<InfoIus>,
    /// Send signalling and free entries.
    pub sq: SendQueue,
    /// The side's fields.
    #[pin]
    pub ext: S::ConExt,
}
rb_rdma::impl_has_cqe!(impl{S: Side} HasCqe<{ cqe::IO }> for Con<S> { self.io_cqe });
rb_rdma::impl_has_cqe!(impl{S: Side} HasCqe<{ cqe::REG }> for Con<S> { self.reg_cqe });
rb_rdma::impl_has_cqe!(impl{S: Side} HasCqe<{ cqe::INFO_TX }> for Con<S> { self.info_tx_cqe });
rb_rdma::impl_has_cqe!(impl{S: Side} HasCqe<{ cqe::INFO_RX }> for Con<S> { self.info_rx_cqe });

/// The sizes of a connection's QP and CQ (C's `rtrs_cq_qp_create()`
/// arguments), before they are bounded by the device.
pub struct QpSizes {
    /// Send queue entries.
    pub send_wr: u32,
    /// Receive queue entries.
    pub recv_wr: u32,
    /// SGEs per send.
    pub send_sge: u32,
    /// The CQ's completion vector.
    pub comp_vector: u32,
    /// How the CQ is polled.
    pub poll: PollContext,
}

impl<S: Side> Con<S> {
    /// Connection `cid` of `path`, with a send queue of `sq` and the side's
    /// fields `ext`.
    pub fn new(
        path: Arc<S>,
        cid: u16,
        sq: SendQueue,
        ext: impl PinInit<S::ConExt, Error>,
    ) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Con {
                path,
                cid,
                io_cqe: Cqe::new(),
                reg_cqe: Cqe::new(),
                info_tx_cqe: Cqe::new(),
                info_rx_cqe: Cqe::new(),
                info <- new_spinlock_irq!(InfoIus::default(), "rtrs_con_info"),
                sq,
                ext <- ext,
            }? Error),
            GFP_KERNEL,
        )
    }

    /// `rtrs_cq_qp_create()`: the QP and its CQ, with the queues bounded by
    /// the device (`max_qp_wr`) and a CQ entry for each of their entries.
    /// Returns the attributes it created them with.
    pub fn create_cq_qp(id: &CmIdRef<Self>, pd: &Arc<rb_rdma::Pd>, s: QpSizes) -> Result<QpAttr> {
        let dev = id.device().ok_or(ENODEV)?;
        let max_wr = dev.attrs().max_qp_wr;
        let (max_send_wr, max_recv_wr) = (s.send_wr.min(max_wr), s.recv_wr.min(max_wr));
        let attr = QpAttr {
            max_send_wr,
            max_recv_wr,
            max_send_sge: s.send_sge,
            max_recv_sge: 1,
            nr_cqe: max_send_wr + max_recv_wr,
            comp_vector: s.comp_vector,
            poll: s.poll,
        };
        id.create_qp(pd, &attr)?;
        Ok(attr)
    }

    /// `rtrs_post_recv_empty()`: `N` receives without a buffer, in one post
    /// (immediate data only; the client posts two for an answer that came
    /// with a SEND_WITH_INV before it).
    pub fn post_recv_empty<const N: usize>(id: &CmIdRef<Self>) -> Result {
        id.post_recv(|h: &Self| Ok([(); N].map(|()| RecvWr::new(&h.io_cqe, &[]))))
    }

    /// `rtrs_post_rdma_write_imm_empty()`: an RDMA write without data, with
    /// immediate data `imm` (heartbeats and their acks); takes a send queue
    /// entry if there is one.
    pub fn post_imm_empty(id: &CmIdRef<Self>, imm: Imm) -> Result {
        let h = id.handler();
        h.sq.take_if_positive();
        let flags = h.sq.next_flags();
        let op = SendOp::RdmaWriteWithImm {
            remote_addr: 0,
            rkey: 0,
            imm: imm.encode(),
        };
        id.post_send(|h: &Self| Ok([SendWr::new(&h.io_cqe, op, &[], flags)]))
    }

    /// `rtrs_iu_post_recv()` of the INFO message: a receive into `rx`,
    /// which the connection keeps until it completes.
    pub fn post_info_rx(id: &CmIdRef<Self>, rx: DmaBuf, lkey: u32) -> Result {
        let sge = [Sge::new(rx.dma_addr(0)?, rx.len() as u32, lkey)];
        id.handler().info.lock().rx = Some(rx);
        id.post_recv(|h: &Self| Ok([RecvWr::new(&h.info_rx_cqe, &sge)]))
    }

    /// `rtrs_iu_post_send()` of the INFO message: the first `len` bytes of
    /// `tx`, signalled; the connection keeps `tx` until it completes.
    pub fn post_info_tx(id: &CmIdRef<Self>, tx: DmaBuf, len: usize, lkey: u32) -> Result {
        let sge = [Sge::new(tx.dma_addr(0)?, len as u32, lkey)];
        id.handler().info.lock().tx = Some(tx);
        id.post_send(|h: &Self| {
            Ok([SendWr::new(
                &h.info_tx_cqe,
                SendOp::Send,
                &sge,
                SendFlags::SIGNALED,
            )])
        })
    }

    /// `rtrs_clt_rdma_done()` and `rtrs_srv_rdma_done()`: a completion of
    /// `io_cqe` (or of a receive buffer `rx` of the side's ring, or of a
    /// side's request whose completion comes here). Heartbeats are answered
    /// here; IO messages go to the side, their receives posted again as
    /// [`Side::REPOST_FIRST`] says.
    pub fn io_done(&self, id: &CmIdRef<Self>, wc: &Wc<'_>, rx: Rx) {
        if !wc.is_ok() {
            if !wc.is_flushed() {
                S::io_failed(self, wc);
                self.path.fail();
            }
            return;
        }
        S::completed(self);
        match wc.opcode() {
            WcOpcode::RecvRdmaWithImm => {
                self.path.hb().seen();
                let imm = Imm::decode(wc.imm_data().unwrap_or(0));
                if S::REPOST_FIRST && S::repost(self, id, rx, &imm).is_err() {
                    self.path.fail();
                    return;
                }
                match imm {
                    // `rtrs_send_hb_ack()`.
                    Imm::HbMsg => {
                        if let Err(e) = Self::post_imm_empty(id, Imm::HbAck) {
                            pr_err!(
                                "{}: send HB ACK failed, errno: {}\n",
                                self.path.name(),
                                e.to_errno()
                            );
                            self.path.fail();
                        }
                    }
                    Imm::HbAck => self.path.hb().acked(),
                    Imm::IoReq { .. }
                    | Imm::IoRsp { .. }
                    | Imm::Fence { .. }
                    | Imm::FenceAck { .. } => S::io_imm(self, id, wc, imm),
                    other => pr_warn!("{}: Unknown IMM {:?}\n", self.path.name(), other),
                }
                if !S::REPOST_FIRST && S::repost(self, id, rx, &imm).is_err() {
                    self.path.fail();
                }
            }
            WcOpcode::Recv => {
                self.path.hb().seen();
                S::recv(self, id, wc, rx);
            }
            WcOpcode::RdmaWrite | WcOpcode::Send => {
                self.sq.credit_signalled();
                S::send_done(self);
            }
            other => pr_warn!("{}: Unexpected WC type: {:?}\n", self.path.name(), other),
        }
    }
}

/// Logs a failed registration or invalidation, rate-limited (a peer or a
/// broken link can cause many), and fails the path: flushed ones too, as
/// in C, since the provider may report the work request that broke the QP
/// as flushed (rxe does), and the key may still be valid. Returns whether
/// `wc` failed.
#[track_caller]
pub fn check_wc<S: Side>(path: &Arc<S>, wc: &Wc<'_>, e: &WcError) -> bool {
    if wc.is_ok() {
        return false;
    }
    if rb::ratelimit::printk_ratelimit(e.site) {
        pr_err!("{}: {}: {}\n", path.name(), e.what, wc.status_msg());
    }
    path.fail();
    true
}

impl<S: Side> CqeHandler<{ cqe::IO }> for Con<S> {
    type Conn = Con<S>;

    fn done(&self, id: &CmIdRef<Self>, wc: &Wc<'_>) {
        self.io_done(id, wc, Rx::Empty);
    }
}

impl<S: Side> CqeHandler<{ cqe::REG }> for Con<S> {
    type Conn = Con<S>;

    /// `rtrs_clt_fast_reg_done()`, `rtrs_srv_reg_mr_done()`: REG_MR is
    /// posted unsignalled, so this runs only when it failed.
    fn done(&self, _id: &CmIdRef<Self>, wc: &Wc<'_>) {
        check_wc(&self.path, wc, &S::REG_MR_FAILED);
    }
}

impl<S: Side> CqeHandler<{ cqe::INFO_TX }> for Con<S> {
    type Conn = Con<S>;

    /// `rtrs_clt_info_req_done()`, `rtrs_srv_info_rsp_done()`.
    fn done(&self, _id: &CmIdRef<Self>, wc: &Wc<'_>) {
        let tx = self.info.lock().tx.take();
        drop(tx);
        S::info_sent(self, wc);
    }
}

impl<S: Side> CqeHandler<{ cqe::INFO_RX }> for Con<S> {
    type Conn = Con<S>;

    /// `rtrs_clt_info_rsp_done()`, `rtrs_srv_info_req_done()`.
    fn done(&self, id: &CmIdRef<Self>, wc: &Wc<'_>) {
        let rx = self.info.lock().rx.take();
        if wc.is_ok() {
            S::completed(self);
        }
        S::info_received(self, id, wc, rx);
    }
}

impl<S: Side> CmHandler for Con<S> {
    /// `qp_event_handler()`: every QP event is logged, `COMM_EST` as seen,
    /// the rest as unhandled.
    fn qp_event(&self, ev: &QpEvent) {
        let what = if ev.is_comm_est() { "" } else { "Unhandled " };
        pr_info!(
            "{}: {}QP event {} ({}) received\n",
            self.path.name(),
            what,
            ev.name(),
            ev.code()
        );
    }

    fn event(&self, id: &CmIdRef<Self>, event: &CmEvent<'_>) {
        S::cm_event(self, id, event);
    }
}
