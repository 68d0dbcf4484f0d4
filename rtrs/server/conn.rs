// SPDX-License-Identifier: GPL-2.0-or-later

//! The server's side of a connection (`struct rtrs_srv_con`): what its
//! completions and rdma_cm events mean (requests arriving as RDMA writes
//! with immediate data, INFO_REQ), and the answers that wait for room in
//! its send queue. The connection itself is `rtrs_common::con::Con`.

use super::fence::FenceJob;
use super::path::Path;
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::kvec::VecExt;
use rb::sync::{new_spinlock_irq, SpinLockIrq};
use rb_rdma::{CmEvent, CmIdRef, DmaBuf, SendFlags, SendOp, SendWr, Wc};
use rtrs_common::con::{Rx, Side, WcError};
use rtrs_common::hb::Hb;
use rtrs_proto::ext::MSG_FENCE_F;
use rtrs_proto::imm::Imm;
use rtrs_proto::msg::InfoReq;
use rtrs_proto::state::SrvState;

/// A connection of a server path.
pub(crate) type Con = rtrs_common::con::Con<Path>;

/// Where [`ConExt::wait_push`] puts an answer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitAt {
    /// A new answer: behind those already waiting.
    Tail,
    /// The oldest answer, back where it was taken from.
    Head,
}

/// The server's fields of a connection.
///
/// # Locking
///
/// `wait_list` is a leaf lock (irq-safe: answers come from any context).
#[pin_data]
pub(crate) struct ConExt {
    /// Answers waiting for room in the send queue (C's `rsp_wr_wait_list`),
    /// oldest first: the chunk of each.
    #[pin]
    wait_list: SpinLockIrq<KVec<u32>>,
}

impl ConExt {
    /// Room to queue an answer for each of `queue_depth` chunks, so that
    /// queueing never allocates.
    pub(crate) fn new(queue_depth: u32) -> impl PinInit<Self, Error> {
        try_pin_init!(ConExt {
            wait_list <- new_spinlock_irq!(
                KVec::with_capacity(queue_depth as usize, GFP_KERNEL)?,
                "rtrs_srv_wait_list"
            ),
        }? Error)
    }

    /// Queues the answer to the IO of chunk `id`: at the tail for a new
    /// answer, back at the head for the oldest one, taken from the list
    /// and still finding no room, so the list stays oldest first.
    pub(crate) fn wait_push(&self, id: u32, at: WaitAt) {
        let mut list = self.wait_list.lock();
        // Capacity for every chunk was reserved: this never allocates.
        let _ = list.push(id, GFP_ATOMIC);
        if at == WaitAt::Head {
            list.rotate_right(1);
        }
    }

    /// The oldest answer waiting, if any.
    pub(crate) fn wait_pop(&self) -> Option<u32> {
        self.wait_list.lock().remove(0)
    }
}

impl Side for Path {
    type ConExt = ConExt;

    const REG_MR_FAILED: WcError = WcError {
        site: kernel::c_str!("rtrs_srv_reg_mr_done"),
        what: "REG MR failed",
    };
    const REPOST_FIRST: bool = true;

    fn name(&self) -> impl core::fmt::Display + '_ {
        Path::name(self)
    }

    fn hb(&self) -> &Hb {
        &self.hb
    }

    /// `close_path()`.
    #[track_caller]
    fn fail(self: &Arc<Self>) {
        self.close();
    }

    fn io_failed(con: &Con, wc: &Wc<'_>) {
        pr_err!(
            "{}: {} (len: {})\n",
            con.path.name(),
            wc.status_msg(),
            wc.byte_len()
        );
    }

    /// C's server posts the receive again before it handles the request.
    fn repost(con: &Con, id: &CmIdRef<Con>, _rx: Rx, _imm: &Imm) -> Result {
        Con::post_recv_empty::<1>(id).inspect_err(|e| {
            pr_err!(
                "{}: rtrs_post_recv(), err: {}\n",
                con.path.name(),
                e.to_errno()
            )
        })
    }

    /// A request arrived in a chunk (`rtrs_srv_rdma_done()` for
    /// `RTRS_IO_REQ_IMM`).
    fn io_imm(con: &Con, id: &CmIdRef<Con>, _wc: &Wc<'_>, imm: Imm) {
        let path = &con.path;
        let payload = match imm {
            Imm::IoReq { payload } => payload,
            Imm::Fence { path_id, seq } if path.version.1 & MSG_FENCE_F != 0 => {
                return FenceJob::start(path, path_id, seq);
            }
            _ => {
                pr_warn!("{}: Unknown IMM {:?}\n", path.name(), imm);
                return;
            }
        };
        let p = path.params();
        let (chunk, off) =
            match path
                .layout
                .split_checked(payload, path.sess.queue_depth, p.max_chunk_size)
            {
                Ok(v) => v,
                Err(_) => {
                    let (chunk, off) = path.layout.split(payload);
                    pr_err!("{}: Wrong msg_id {}, off {}\n", path.name(), chunk, off);
                    path.close();
                    return;
                }
            };
        if !p.always_invalidate {
            return path.process_io_req(id, chunk, off);
        }
        // Invalidate the client's access to the chunk first; its
        // completion hands the request on.
        let Some(mr) = path.mrs.get(chunk as usize) else {
            return path.close();
        };
        mr.set_pending(off);
        let rkey = mr.mr.rkey();
        let i = chunk as usize;
        let posted = id.post_send(|h: &Con| {
            Ok([SendWr::new(
                &h.path.mrs.get(i).ok_or(EINVAL)?.inv_cqe,
                SendOp::LocalInv(rkey),
                &[],
                SendFlags::SIGNALED,
            )])
        });
        if let Err(e) = posted {
            pr_err!(
                "{}: posting LOCAL_INV, err: {}\n",
                path.name(),
                e.to_errno()
            );
            path.close();
        }
    }

    fn recv(con: &Con, _id: &CmIdRef<Con>, _wc: &Wc<'_>, _rx: Rx) {
        pr_warn!("{}: Unexpected WC type: Recv\n", con.path.name());
    }

    /// Answers that waited for room in the send queue go now.
    fn send_done(con: &Con) {
        con.path.process_wait_list(con);
    }

    /// `rtrs_srv_info_rsp_done()`.
    fn info_sent(con: &Con, wc: &Wc<'_>) {
        if wc.is_ok() {
            return;
        }
        if !wc.is_flushed() {
            pr_err!(
                "{}: Sess info response send failed: {}\n",
                con.path.name(),
                wc.status_msg()
            );
        }
        con.path.close();
    }

    /// `rtrs_srv_info_req_done()`.
    fn info_received(con: &Con, id: &CmIdRef<Con>, wc: &Wc<'_>, rx: Option<DmaBuf>) {
        let path = &con.path;
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
        let read = wc.byte_len() as usize >= InfoReq::SIZE
            && rx.is_some_and(|rx| rx.read(0, &mut buf).is_ok());
        let msg = match read.then(|| InfoReq::decode(&buf)) {
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
        if let Err(e) = path.process_info_req(id, msg.pathname()) {
            pr_err!(
                "{}: process_info_req(), err: {}\n",
                path.name(),
                e.to_errno()
            );
            path.close();
        }
    }

    /// `rtrs_srv_rdma_cm_handler()` for a connection.
    fn cm_event(con: &Con, _id: &CmIdRef<Con>, event: &CmEvent<'_>) {
        let path = &con.path;
        match event {
            CmEvent::Established { .. } => {}
            CmEvent::Rejected { .. } | CmEvent::ConnectError(_) | CmEvent::Unreachable(_) => {
                pr_err!("{}: CM error (CM event: {})\n", path.name(), event.name());
                path.close();
            }
            CmEvent::Disconnected(_)
            | CmEvent::AddrChange
            | CmEvent::TimewaitExit
            | CmEvent::DeviceRemoval => {
                if path.state() == SrvState::Connected {
                    pr_info!(
                        "{}: CM event: {}, closing the path\n",
                        path.name(),
                        event.name()
                    );
                }
                path.close();
            }
            _ => pr_err!("Ignoring unexpected CM event {}\n", event.name()),
        }
    }
}
