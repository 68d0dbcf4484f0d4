// SPDX-License-Identifier: GPL-2.0-or-later

//! The client's side of a connection (`struct rtrs_clt_con`): its rdma_cm
//! events (address, route, CON_REQ, CON_RSP), the RKEY_RSP receive
//! buffers, and what its completions mean (IO responses as immediate data,
//! new rkeys, INFO_RSP). The connection itself is `rtrs_common::con::Con`.

use super::abi::Dir;
use super::path::Path;
use super::req::ReqSet;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::once::SetOnce;
use rb_rdma::{CmEvent, CmIdRef, Cqe, CqeHandler, DmaBuf, DmaDirection, RecvWr, Sge, Wc};
use rtrs_common::con::{Rx, Side, WcError};
use rtrs_common::hb::Hb;
use rtrs_proto::con::{CloseConfirm, CmCell, CmOutcome};
use rtrs_proto::ext::{client_offer, ReadRsp, Slot, READ_RSP_NEW_RKEY_F};
use rtrs_proto::imm::Imm;
use rtrs_proto::msg::{ConnReq, ConnRsp, InfoReq, InfoRsp, RkeyRsp, MSG_NEW_RKEY_F, PROTO_VER};
use rtrs_proto::state::{CltState, StateCell};

/// `RTRS_CONNECT_TIMEOUT_MS`.
pub(crate) const CONNECT_TIMEOUT_MS: u32 = 30_000;

/// A connection of a client path.
pub(crate) type Con = rtrs_common::con::Con<Path>;

/// The size of a receive buffer of the ring: room for an RKEY_RSP, and
/// for the READ_RSP of RTRS 2.1.
const RSP_IU_SIZE: usize = if ReadRsp::SIZE > RkeyRsp::SIZE {
    ReadRsp::SIZE
} else {
    RkeyRsp::SIZE
};

/// One receive buffer for RKEY_RSP and READ_RSP messages (`rsp_ius`), all
/// in one mapping per connection.
pub(crate) struct RspIu {
    cqe: Cqe<RspIu>,
    idx: u32,
}
rb_rdma::impl_has_cqe!(impl HasCqe<0> for RspIu { self.cqe });

/// The RKEY_RSP and READ_RSP receive buffers of a connection.
pub(crate) struct RspRing {
    ius: KVec<RspIu>,
    buf: DmaBuf,
    /// The local DMA key of the connection's PD, for reposting without
    /// looking the PD up (a lock and a reference count) on every receive.
    lkey: u32,
}

impl RspRing {
    fn new(dev: &rb_rdma::Device, n: u32, lkey: u32) -> Result<Self> {
        let buf = DmaBuf::new(dev, n as usize * RSP_IU_SIZE, DmaDirection::FromDevice)?;
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

/// The client's fields of a connection.
pub(crate) struct ConExt {
    /// The CPU whose IO it carries.
    pub(crate) cpu: u32,
    /// The reconnect count of the connection set it belongs to (CON_REQ's
    /// `recon_cnt`), so the server tells a new set from an old one.
    recon_cnt: u16,
    /// How far it got with rdma_cm (C's `cm_err`).
    pub(crate) cm: CmCell,
    /// Whether the server confirmed the close of the established
    /// connection: until then its QP may still take writes.
    close: StateCell<CloseConfirm>,
    /// The receive buffers, when the server sends new rkeys or READ_RSP
    /// messages (and always on the service connection, made before the
    /// client knows).
    rsp: SetOnce<RspRing>,
    /// The request slots of its connection set, once the path is up.
    reqs: SetOnce<Arc<ReqSet>>,
    /// The version CON_REQ offered (`proto_ext` when it was sent): what
    /// CON_RSP is read against, however `proto_ext` changed since.
    offered: SetOnce<u16>,
    /// The rkey the server's last SEND_WITH_INV invalidated
    /// (`INVAL_SEEN | rkey`; 0: none since the last answer), which the
    /// answer it comes before takes ([`ConExt::take_inval`]).
    inval: AtomicU64,
}

/// [`ConExt::inval`] holds an rkey.
const INVAL_SEEN: u64 = 1 << 32;

impl ConExt {
    /// The fields of connection `cid` of a set with reconnect count
    /// `recon_cnt`.
    pub(crate) fn new(cid: u16, recon_cnt: u16) -> ConExt {
        ConExt {
            // The first two connections go to the first CPU.
            cpu: u32::from(cid).saturating_sub(1) % rb::cpu::nr_cpu_ids(),
            recon_cnt,
            cm: CmCell::new(),
            close: StateCell::new(CloseConfirm::NotEstablished),
            rsp: SetOnce::new(),
            reqs: SetOnce::new(),
            offered: SetOnce::new(),
            inval: AtomicU64::new(0),
        }
    }

    /// A SEND_WITH_INV of the server invalidated `rkey`.
    fn saw_inval(&self, rkey: Option<u32>) {
        if let Some(k) = rkey {
            self.inval
                .store(INVAL_SEEN | u64::from(k), Ordering::Relaxed);
        }
    }

    /// The rkey the SEND_WITH_INV received just before this answer
    /// invalidated, if one did. Completions of a connection are handled
    /// one at a time and in the order of its receive queue, and a server
    /// posts the SEND_WITH_INV and the answer as one chain (C's
    /// `rtrs_srv_send_io_resp_imm()`, ours), so they arrive next to each
    /// other.
    pub(crate) fn take_inval(&self) -> Option<u32> {
        let v = self.inval.swap(0, Ordering::Relaxed);
        (v & INVAL_SEEN != 0).then_some(v as u32)
    }

    /// Whether CON_REQ offered RTRS 2.1.
    pub(crate) fn offered_ext(&self) -> bool {
        self.offered.get().is_some_and(|&v| v != PROTO_VER)
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
}

/// `create_con_cq_qp()`: the QP, its CQ, and the RKEY_RSP buffers.
fn create_qp(id: &CmIdRef<Con>) -> Result {
    let h = id.handler();
    let path = &h.path;
    if h.ext.cm.get() != CmOutcome::Pending {
        return Err(rb::errno::ECONNABORTED());
    }
    let dev = id.device().ok_or(ENODEV)?;
    let wr_limit = dev.attrs().max_qp_wr;
    let (send_wr, recv_wr, send_sge) = if h.cid == 0 {
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
    let max_cqe = dev.attrs().max_cqe;
    if send_wr + recv_wr > max_cqe {
        pr_err!(
            "{}: a queue depth of {} needs {} completion queue entries per connection, the device has {}\n",
            path.name(),
            path.queue_depth(),
            send_wr + recv_wr,
            max_cqe
        );
        return Err(EINVAL);
    }
    let pd = path.pd().ok_or(ENODEV)?;
    if path.rsp_ring() || h.cid == 0 {
        let _ = h
            .ext
            .rsp
            .set(RspRing::new(dev, send_wr + recv_wr, pd.local_dma_lkey())?);
    }
    let sizes = rtrs_common::con::QpSizes {
        send_wr,
        recv_wr,
        send_sge,
        comp_vector: h.ext.cpu % dev.num_comp_vectors(),
        poll: if u32::from(h.cid) >= path.irq_con_num {
            rb_rdma::PollContext::Direct
        } else {
            rb_rdma::PollContext::Softirq
        },
    };
    Con::create_cq_qp(id, &pd, sizes).map(|_| ())
}

/// `rtrs_rdma_route_resolved()`: sends CON_REQ.
fn connect(id: &CmIdRef<Con>) -> Result {
    let h = id.handler();
    let path = &h.path;
    let version = client_offer(super::params::proto_ext());
    let _ = h.ext.offered.set(version);
    let req = ConnReq {
        version,
        cid: h.cid,
        cid_num: path.con_num as u16,
        recon_cnt: h.ext.recon_cnt,
        sess_uuid: path.uuid,
        paths_uuid: path.core.paths_uuid,
        first_conn: path.for_new_clt(),
    };
    let mut msg = [0u8; ConnReq::SIZE];
    req.encode(&mut msg).map_err(rtrs_common::kerr)?;
    id.connect(&rb_rdma::ConnParam {
        private_data: &msg,
        retry_count: 7,
        rnr_retry_count: 7,
        ..Default::default()
    })
}

/// `rtrs_rdma_conn_established()`: checks CON_RSP; the first connection
/// learns the server's parameters.
fn established(id: &CmIdRef<Con>, private_data: &[u8]) -> Result {
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
        if rsp.check_params().is_err() {
            pr_err!(
                "{}: Invalid RTRS connection response: queue depth {}\n",
                h.path.name(),
                rsp.queue_depth
            );
            return Err(rb::errno::ECONNRESET());
        }
        h.path.learn(id, &rsp)?;
    }
    h.sq.set_interval(h.path.signal_interval());
    Ok(())
}

/// `rtrs_rdma_conn_rejected()`: the server's errno, if it sent one.
fn rejected(con: &Con, private_data: Option<&[u8]>, reason: i32) -> i32 {
    let errno = private_data.map_or(0, ConnRsp::reject_errno);
    if errno == -(rb::ffi::EBUSY as i32) {
        pr_err!(
            "{}: Previous session is still exists on the server, please reconnect later\n",
            con.path.name()
        );
    } else if errno != 0 {
        pr_err!(
            "{}: Connect rejected: status {}, rtrs errno {}\n",
            con.path.name(),
            reason,
            errno
        );
    } else {
        pr_err!(
            "{}: Connect rejected but with malformed message: status {}\n",
            con.path.name(),
            reason
        );
    }
    if errno != 0 {
        errno
    } else {
        rb::errno::ECONNRESET().to_errno()
    }
}

/// A CM event that ends the connection: logged as C does.
fn cm_error(con: &Con, event: &CmEvent<'_>, err: Error) -> i32 {
    pr_warn!(
        "{}: CM error (CM event: {}, err: {})\n",
        con.path.name(),
        event.name(),
        event.status()
    );
    err.to_errno()
}

/// `flag_error_on_conn()`: the connection failed with `errno`; an
/// established one is counted no longer.
fn flag_error(con: &Con, errno: i32) {
    con.path.con_failed(&con.ext.cm, errno);
}

/// Before the CM ID is destroyed: no new QP from a late ADDR_RESOLVED, and
/// a connection still counted as established (its end never reported: the
/// server did not answer the disconnect) is counted no longer. No event of
/// it comes after the destruction, and a count left behind would make
/// every later close of the path wait the whole `CONNECT_TIMEOUT_MS` for it
/// (C's `connected_cnt` is left so: after one unanswered disconnect, each
/// close of the path takes 30 s more).
pub(crate) fn retire(con: &Con) {
    flag_error(con, rb::errno::ECONNABORTED().to_errno());
}

/// Posts receive `i` of the ring.
pub(crate) fn post_rsp_iu(id: &CmIdRef<Con>, i: u32) -> Result {
    let h = id.handler();
    let ring = h.ext.rsp.get().ok_or(EINVAL)?;
    let off = i as usize * RSP_IU_SIZE;
    let sge = [Sge::new(
        ring.buf.dma_addr(off)?,
        RSP_IU_SIZE as u32,
        ring.lkey,
    )];
    id.post_recv(|h: &Con| {
        let ring = h.ext.rsp.get().ok_or(EINVAL)?;
        Ok([RecvWr::new(
            &ring.ius.get(i as usize).ok_or(EINVAL)?.cqe,
            &sge,
        )])
    })
}

/// `post_recv_io()`: the receives for IO of this connection, `n` buffers
/// of the ring if `ring` (the server sends messages: RKEY_RSP, READ_RSP),
/// else empty ones.
pub(crate) fn post_recv_io(id: &CmIdRef<Con>, n: u32, ring: bool) -> Result {
    for i in 0..n {
        if ring {
            post_rsp_iu(id, i)?;
        } else {
            Con::post_recv_empty::<1>(id)?;
        }
    }
    Ok(())
}

/// `rtrs_send_path_info()`: the INFO_REQ message, ready to send, and room
/// for the INFO_RSP of a server with `qd` chunks: `(tx, rx)`. May sleep.
pub(crate) fn info_bufs(path: &Path, qd: u32) -> Result<(DmaBuf, DmaBuf)> {
    let pd = path.pd().ok_or(ENODEV)?;
    let rx_sz = InfoRsp::wire_size(qd as usize).ok_or(EINVAL)?;
    let rx = DmaBuf::new(pd.device(), rx_sz, DmaDirection::FromDevice)?;
    let mut tx = DmaBuf::new(pd.device(), InfoReq::SIZE, DmaDirection::ToDevice)?;
    let msg = InfoReq::new(path.core.name.as_bytes()).map_err(rtrs_common::kerr)?;
    let mut b = [0u8; InfoReq::SIZE];
    msg.encode(&mut b).map_err(rtrs_common::kerr)?;
    tx.write(0, &b)?;
    Ok((tx, rx))
}

/// `rtrs_send_path_info()` on the service connection: posts the receive
/// of INFO_RSP into `rx` and sends INFO_REQ from `tx` (from
/// [`info_bufs`]). Does not sleep.
pub(crate) fn send_info(id: &CmIdRef<Con>, (tx, rx): (DmaBuf, DmaBuf)) -> Result {
    let lkey = id.handler().path.pd().ok_or(ENODEV)?.local_dma_lkey();
    let len = tx.len();
    Con::post_info_rx(id, rx, lkey)?;
    Con::post_info_tx(id, tx, len, lkey)
}

/// `rtrs_clt_rkey_rsp_done()`: the server re-registered a chunk.
fn rkey_rsp(con: &Con, id: &CmIdRef<Con>, wc: &Wc<'_>, i: u32) -> Result {
    let path = &con.path;
    if (wc.byte_len() as usize) < RkeyRsp::SIZE {
        pr_err!(
            "{}: rkey response is malformed: size {}\n",
            path.name(),
            wc.byte_len()
        );
        return Err(EINVAL);
    }
    let ring = con.ext.rsp.get().ok_or(EINVAL)?;
    let mut b = [0u8; RkeyRsp::SIZE];
    ring.buf.read(i as usize * RSP_IU_SIZE, &mut b)?;
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
        // The connection's request set is the path's (`init_conns`): no
        // need for the path's lock and a reference.
        let slot = con.ext.reqs()?.rbufs.get(msg_id as usize).ok_or_else(|| {
            pr_err!(
                "{}: rkey response for unknown chunk {}\n",
                path.name(),
                msg_id
            );
            EINVAL
        })?;
        slot.rkey
            .store(msg.rkey, core::sync::atomic::Ordering::Release);
        path.io_rsp(id, msg_id, errno, w_inval);
    }
    Ok(())
}

/// The answer to a READ on a path of RTRS 2.1 with read responses: a
/// READ_RSP in receive buffer `i`, sent with the invalidation of the READ's
/// registration if the SEND was a SEND_WITH_INV. Only an answer that names
/// a READ waiting for it, with a new key exactly when the server
/// re-registers its chunks, and invalidating nothing but that READ's
/// registration, completes it; anything else is an error of the server.
fn read_rsp(con: &Con, id: &CmIdRef<Con>, wc: &Wc<'_>, rs: &ReqSet, i: u32) -> Result {
    let path = &con.path;
    let ring = con.ext.rsp.get().ok_or(EINVAL)?;
    let len = wc.byte_len() as usize;
    let mut b = [0u8; ReadRsp::SIZE];
    let msg = match len {
        ReadRsp::SIZE => {
            ring.buf.read(i as usize * RSP_IU_SIZE, &mut b)?;
            ReadRsp::decode(&b).ok()
        }
        _ => None,
    };
    let Some(msg) = msg else {
        pr_err!(
            "{}: read response is malformed: size {}\n",
            path.name(),
            len
        );
        return Err(EINVAL);
    };
    let req = rs.reqs.get(usize::from(msg.msg_id));
    let new_rkey = rs.srv.flags & MSG_NEW_RKEY_F != 0;
    let checked = msg.check(
        rs.reqs.len() as u32,
        new_rkey,
        wc.invalidated_rkey(),
        |_| {
            let Some(req) = req else {
                return Slot::Idle;
            };
            let st = req.st.lock();
            match (st.in_use && st.pending.is_none(), st.dir) {
                (false, _) => Slot::Idle,
                (true, Dir::Write) => Slot::Write,
                (true, Dir::Read) => Slot::Read {
                    key: (st.need_inval && st.mapped.is_some()).then(|| req.mr.rkey()),
                },
            }
        },
    );
    let (w_inval, req) = match (checked, req) {
        (Ok(w_inval), Some(req)) => (w_inval, req),
        // `check` found the request in range: `req` is there.
        (Ok(_), None) => return Err(EINVAL),
        (Err(fault), _) => {
            pr_err!(
                "{}: read response for request {} refused: {:?}\n",
                path.name(),
                msg.msg_id,
                fault
            );
            return Err(EINVAL);
        }
    };
    if msg.flags & READ_RSP_NEW_RKEY_F != 0 {
        let slot = rs.rbufs.get(usize::from(msg.msg_id)).ok_or(EINVAL)?;
        slot.rkey.store(msg.rkey, Ordering::Release);
    }
    if !req.complete(id, i32::from(msg.errno), true, w_inval) {
        // Answered since `check` looked: a second answer.
        pr_err!(
            "{}: read response for request {}, which is not in flight\n",
            path.name(),
            msg.msg_id
        );
        return Err(EINVAL);
    }
    Ok(())
}

impl CqeHandler<0> for RspIu {
    type Conn = Con;

    fn done(&self, id: &CmIdRef<Con>, wc: &Wc<'_>) {
        id.handler().io_done(id, wc, Rx::Iu(self.idx));
    }
}

impl Side for Path {
    type ConExt = ConExt;

    const REG_MR_FAILED: WcError = WcError {
        site: kernel::c_str!("rtrs_clt_fast_reg_done"),
        what: "Failed IB_WR_REG_MR",
    };
    const REPOST_FIRST: bool = false;

    fn name(&self) -> impl core::fmt::Display + '_ {
        Path::name(self)
    }

    fn hb(&self) -> &Hb {
        &self.hb
    }

    /// `rtrs_rdma_error_recovery()`.
    #[track_caller]
    fn fail(self: &Arc<Self>) {
        self.error_recovery();
    }

    /// `rtrs_clt_update_wc_stats()`.
    fn completed(con: &Con) {
        con.path.stats.completion_on(con.ext.cpu);
    }

    fn io_failed(con: &Con, wc: &Wc<'_>) {
        pr_err!("{}: RDMA failed: {}\n", con.path.name(), wc.status_msg());
    }

    /// Immediate data that came in a buffer of the ring gives it back;
    /// else one empty receive for the immediate, and one for the
    /// SEND_WITH_INV that came before an answer (C's
    /// `rtrs_post_recv_empty_x2()`).
    fn repost(con: &Con, id: &CmIdRef<Con>, rx: Rx, imm: &Imm) -> Result {
        let ret = match (rx, imm) {
            (Rx::Iu(i), _) => post_rsp_iu(id, i),
            (_, Imm::IoRsp { w_inval: true, .. }) => Con::post_recv_empty::<2>(id),
            _ => Con::post_recv_empty::<1>(id),
        };
        ret.inspect_err(|e| {
            pr_err!(
                "{}: rtrs_post_recv_empty(): {}\n",
                con.path.name(),
                e.to_errno()
            )
        })
    }

    /// `process_io_rsp()`.
    fn io_imm(con: &Con, id: &CmIdRef<Con>, _wc: &Wc<'_>, imm: Imm) {
        match imm {
            Imm::IoRsp {
                msg_id,
                errno,
                w_inval,
            } => con.path.io_rsp(id, msg_id, errno, w_inval),
            Imm::FenceAck { path_id, seq } if con.path.srv().ext.fence => {
                con.path.core.fence_acked(path_id, seq)
            }
            other => pr_warn!("{}: Unknown IMM {:?}\n", con.path.name(), other),
        }
    }

    /// Key invalidations from the server (SEND_WITH_INV), new rkeys with
    /// the answer of a request (RKEY_RSP), and on a path with read
    /// responses (RTRS 2.1) every SEND without immediate data, the answer
    /// to a READ; the buffer goes back once read.
    fn recv(con: &Con, id: &CmIdRef<Con>, wc: &Wc<'_>, rx: Rx) {
        let Rx::Iu(i) = rx else {
            con.ext.saw_inval(wc.invalidated_rkey());
            return;
        };
        let ret = match con.ext.reqs() {
            Ok(rs) if rs.srv.ext.read_rsp && wc.imm_data().is_none() => {
                read_rsp(con, id, wc, rs, i)
            }
            _ if wc.invalidated_rkey().is_none() => rkey_rsp(con, id, wc, i),
            _ => {
                con.ext.saw_inval(wc.invalidated_rkey());
                Ok(())
            }
        };
        if ret.is_err() {
            con.path.error_recovery();
            return;
        }
        if let Err(e) = post_rsp_iu(id, i) {
            pr_err!("{}: post iu failed {}\n", con.path.name(), e.to_errno());
            con.path.error_recovery();
        }
    }

    /// `rtrs_clt_info_req_done()`.
    fn info_sent(con: &Con, wc: &Wc<'_>) {
        if !wc.is_ok() {
            pr_err!(
                "{}: Path info request send failed: {}\n",
                con.path.name(),
                wc.status_msg()
            );
            con.path.set_connecting_err();
        }
    }

    /// `rtrs_clt_info_rsp_done()`.
    fn info_received(con: &Con, id: &CmIdRef<Con>, wc: &Wc<'_>, rx: Option<DmaBuf>) {
        let ok = match (wc.is_ok(), rx) {
            (true, Some(rx)) => con.path.info_rsp(id, &rx, wc.byte_len() as usize),
            (false, _) => {
                pr_err!(
                    "{}: Path info response recv failed: {}\n",
                    con.path.name(),
                    wc.status_msg()
                );
                Err(EIO)
            }
            _ => Err(EINVAL),
        };
        con.path.info_done(ok.is_ok());
    }

    /// `rtrs_clt_rdma_cm_handler()`.
    fn cm_event(con: &Con, id: &CmIdRef<Con>, event: &CmEvent<'_>) {
        let path = &con.path;
        if let CmEvent::Disconnected(0) = event {
            // The server confirmed the close: its DREQ, or its DREP to ours.
            if con
                .ext
                .close
                .change_from_to(CloseConfirm::Unconfirmed, CloseConfirm::Confirmed)
            {
                path.con_close_confirmed();
            }
        }
        let err = match event {
            CmEvent::AddrResolved => create_qp(id)
                .inspect_err(|e| {
                    pr_err!(
                        "{}: create_con_cq_qp(), err: {}\n",
                        path.name(),
                        e.to_errno()
                    )
                })
                .and_then(|()| id.resolve_route(CONNECT_TIMEOUT_MS))
                .err()
                .map(|e| e.to_errno()),
            CmEvent::RouteResolved => connect(id).err().map(|e| e.to_errno()),
            CmEvent::Established { private_data } => match established(id, private_data) {
                Ok(()) if path.con_up(&con.ext.cm) => {
                    let _ = con.ext.close.change(CloseConfirm::Unconfirmed);
                    None
                }
                // Failed (retired) meanwhile: no QP of it is used again.
                Ok(()) => None,
                Err(e) => Some(e.to_errno()),
            },
            CmEvent::Rejected {
                reason,
                private_data,
            } => Some(rejected(con, *private_data, *reason)),
            // As C: no message for disconnecting.
            CmEvent::Disconnected(_) => Some(rb::errno::ECONNRESET().to_errno()),
            // C has destroyed the CM IDs of a path it closed before their
            // TIMEWAIT_EXIT comes; ours may outlive it, silently then.
            CmEvent::TimewaitExit
                if !matches!(path.state(), CltState::Connected | CltState::Connecting) =>
            {
                Some(rb::errno::ECONNRESET().to_errno())
            }
            CmEvent::ConnectError(_)
            | CmEvent::Unreachable(_)
            | CmEvent::AddrChange
            | CmEvent::TimewaitExit => Some(cm_error(con, event, rb::errno::ECONNRESET())),
            CmEvent::AddrError(_) | CmEvent::RouteError(_) => {
                Some(cm_error(con, event, rb::errno::EHOSTUNREACH()))
            }
            CmEvent::DeviceRemoval => {
                pr_warn!("{}: CM event: {}\n", path.name(), event.name());
                // No event of this connection comes any more, the server's
                // disconnect neither: the close does not wait for it (C's
                // waits `CONNECT_TIMEOUT_MS`, and the device's removal
                // with it). The close stays unconfirmed, so the chunks of
                // the path's IO are fenced as for a silent server.
                flag_error(con, ENODEV.to_errno());
                path.close_conns(false);
                None
            }
            _ => {
                pr_err!(
                    "{}: Unexpected RDMA CM error (CM event: {}, err: {})\n",
                    path.name(),
                    event.name(),
                    event.status()
                );
                Some(rb::errno::ECONNRESET().to_errno())
            }
        };
        if let Some(e) = err {
            // Meaningful while connecting; otherwise the path reconnects.
            flag_error(con, e);
            path.error_recovery();
        }
    }
}
