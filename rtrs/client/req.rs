// SPDX-License-Identifier: GPL-2.0-or-later

//! Request slots (`struct rtrs_clt_io_req`): one per server chunk of a
//! connected path, with the buffer for the user's message and the RTRS
//! message, the MR that registers the user's pages, and the state of the IO
//! in flight.

use super::abi::{ConType, Confirm, Dir, PermitId};
use super::conn::Con;
use super::path::{Path, SrvParams};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::kvec::VecExt;
use rb::ratelimit::pr_err_ratelimited;
use rb::sync::{new_spinlock_irq, SpinLockIrq};
use rb_rdma::cq::impl_has_cqe;
use rb_rdma::{BorrowedSg, MappedSg};
use rb_rdma::{CmIdRef, Cqe, CqeHandler, DmaBuf, DmaDirection, Mr, Pd, Wc};
use rtrs_common::con::{check_wc, Rx, WcError};
use rtrs_proto::msg::Rbuf;

/// What a request slot knows about its IO (while `in_use`: the rest are
/// placeholders when the slot is idle).
pub(crate) struct ReqState {
    /// An IO is in the slot: posted, or about to be.
    pub(crate) in_use: bool,
    /// [`Path::claim`] reserved the slot and is filling it (its MR and
    /// buffer belong to that call until it sets `in_use`).
    pub(crate) building: bool,
    pub(crate) dir: Dir,
    /// The user's permit of the IO in the slot.
    pub(crate) permit: PermitId,
    pub(crate) data_len: usize,
    pub(crate) usr_len: usize,
    pub(crate) con_type: ConType,
    pub(crate) cpu: u32,
    pub(crate) mem_off: u32,
    pub(crate) conf: Option<Confirm>,
    pub(crate) sg: Option<BorrowedSg>,
    pub(crate) mapped: Option<MappedSg>,
    /// The MR still registers the user's pages: invalidate it before the
    /// pages go back (the server did not with SEND_WITH_INV).
    pub(crate) need_inval: bool,
    /// A LOCAL_INV is in flight: `(errno, notify)` of the completion.
    pub(crate) pending: Option<(i32, bool)>,
    /// When the IO was put in the slot (monotonic ns): the age the
    /// heartbeat's deadline rule (`io_deadline_s`) measures.
    pub(crate) posted_ns: i64,
}

impl ReqState {
    fn idle() -> Self {
        Self {
            in_use: false,
            building: false,
            dir: Dir::Read,
            permit: PermitId::default(),
            data_len: 0,
            usr_len: 0,
            con_type: ConType::Io,
            cpu: 0,
            mem_off: 0,
            conf: None,
            sg: None,
            mapped: None,
            need_inval: false,
            pending: None,
            posted_ns: 0,
        }
    }
}

/// One request slot.
///
/// # Locking
///
/// `st` (irq-safe: responses complete from softirq) guards what the slot
/// knows of its IO; `iu` the message buffer, which the submitter writes
/// while the slot is reserved (`st.building`), outside `st`'s section so
/// that interrupts stay on. Neither is held while the other is taken; both
/// are leaves.
pub(crate) struct Req {
    /// RDMA-write completions of the request (and their errors).
    pub(crate) iu_cqe: Cqe<Req, 0>,
    /// Its LOCAL_INV.
    pub(crate) inv_cqe: Cqe<Req, 1>,
    pub(crate) idx: u32,
    /// User message and RTRS message, RDMA-written to the server.
    pub(crate) iu: Pin<KBox<SpinLockIrq<DmaBuf>>>,
    pub(crate) mr: Mr,
    pub(crate) st: Pin<KBox<SpinLockIrq<ReqState>>>,
}
impl_has_cqe!(impl HasCqe<0> for Req { self.iu_cqe });
impl_has_cqe!(impl HasCqe<1> for Req { self.inv_cqe });

/// A server chunk as the client addresses it; the rkey changes with every
/// IO when the server re-registers its chunks.
#[derive(Default)]
pub(crate) struct RbufSlot {
    pub(crate) addr: AtomicU64,
    pub(crate) rkey: AtomicU32,
}

impl RbufSlot {
    pub(crate) fn get(&self) -> Rbuf {
        Rbuf {
            addr: self.addr.load(Ordering::Acquire),
            rkey: self.rkey.load(Ordering::Acquire),
        }
    }

    pub(crate) fn set(&self, r: Rbuf) {
        self.addr.store(r.addr, Ordering::Release);
        self.rkey.store(r.rkey, Ordering::Release);
    }
}

/// The request slots and server chunks of one connected period of a path.
pub(crate) struct ReqSet {
    pub(crate) reqs: KVec<Req>,
    pub(crate) rbufs: KVec<RbufSlot>,
    pub(crate) pd: Arc<Pd>,
    /// What the server told when this set's connections were made.
    pub(crate) srv: SrvParams,
}

impl ReqSet {
    /// `alloc_path_reqs()`.
    pub(crate) fn new(pd: &Arc<Pd>, srv: SrvParams, max_pages_per_mr: u32) -> Result<Arc<Self>> {
        let (queue_depth, max_hdr_size) = (srv.queue_depth, srv.max_hdr_size);
        let mut reqs = KVec::with_capacity(queue_depth as usize, GFP_KERNEL)?;
        let mut rbufs = KVec::with_capacity(queue_depth as usize, GFP_KERNEL)?;
        for idx in 0..queue_depth {
            let iu = DmaBuf::new(pd.device(), max_hdr_size as usize, DmaDirection::ToDevice)?;
            reqs.push(
                Req {
                    iu_cqe: Cqe::new(),
                    inv_cqe: Cqe::new(),
                    idx,
                    iu: KBox::pin_init(new_spinlock_irq!(iu, "rtrs_clt_req_iu"), GFP_KERNEL)?,
                    mr: Mr::new_sg_gaps(pd, max_pages_per_mr)?,
                    st: KBox::pin_init(
                        new_spinlock_irq!(ReqState::idle(), "rtrs_clt_req"),
                        GFP_KERNEL,
                    )?,
                },
                GFP_KERNEL,
            )?;
            rbufs.push(RbufSlot::default(), GFP_KERNEL)?;
        }
        Ok(Arc::new(
            Self {
                reqs,
                rbufs,
                pd: pd.clone(),
                srv,
            },
            GFP_KERNEL,
        )?)
    }
}

impl Req {
    /// `complete_rdma_req()` on the IO path: ends the IO with `errno`,
    /// invalidating the MR first if the server did not; confirms it to the
    /// user if `notify`; `w_inval`: the server invalidated it with
    /// SEND_WITH_INV. False if the slot holds no IO waiting for its answer
    /// (free, being built, or answered and invalidating): the answer is
    /// not for a request in flight, and nothing is done.
    #[must_use]
    pub(crate) fn complete(
        &self,
        conn: &CmIdRef<Con>,
        errno: i32,
        notify: bool,
        w_inval: bool,
    ) -> bool {
        let mut st = self.st.lock();
        if !st.in_use || st.pending.is_some() {
            return false;
        }
        if w_inval {
            st.need_inval = false;
        }
        if st.need_inval && st.mapped.is_some() {
            st.need_inval = false;
            st.pending = Some((errno, notify));
            drop(st);
            let rkey = self.mr.rkey();
            let i = self.idx as usize;
            let posted = conn.post_send(|h: &Con| {
                let r = h.ext.reqs()?.reqs.get(i).ok_or(EINVAL)?;
                Ok([rb_rdma::SendWr::new(
                    &r.inv_cqe,
                    rb_rdma::SendOp::LocalInv(rkey),
                    &[],
                    rb_rdma::SendFlags::SIGNALED,
                )])
            });
            match posted {
                // The invalidation's completion finishes the IO.
                Ok(()) => return true,
                Err(e) => {
                    pr_err!("Send INV WR key={:#x}: {}\n", rkey, e.to_errno());
                    st = self.st.lock();
                    st.pending = None;
                }
            }
        }
        let path = &conn.handler().path;
        Self::finish(st, path, errno, notify);
        true
    }

    /// Ends the IO: frees the slot, unmaps the user's pages (outside the
    /// slot's lock, as C unmaps with no lock held), confirms.
    fn finish(
        mut st: kernel::sync::lock::Guard<'_, ReqState, rb::sync::SpinLockIrqBackend>,
        path: &Path,
        errno: i32,
        notify: bool,
    ) {
        let mapped = st.mapped.take();
        let sg = st.sg.take();
        st.in_use = false;
        let conf = st.conf.take();
        let dir = st.dir;
        drop(st);
        // The pages are unmapped before the user hears of the IO.
        drop(mapped);
        drop(sg);
        path.inflight_dec();
        if errno != 0 {
            // C's line (complete_rdma_req()), which operators grep for.
            let (hca, port) = path.hca();
            pr_err_ratelimited!(
                "complete_rdma_req",
                "<{}>: IO {} request failed: error={} path={} [{}:{}] notify={}\n",
                kernel::str::BStr::from_bytes(path.core.name.as_bytes()),
                if dir == Dir::Write { "write" } else { "read" },
                errno,
                path.dir_name(),
                hca,
                port,
                notify as u8
            );
        }
        if notify {
            if let Some(c) = conf {
                c.confirm(errno);
            }
        }
    }

    /// Takes an in-flight IO out of the slot for failover, without
    /// confirming it (`complete_rdma_req(req, -ECONNABORTED, false, true)`
    /// with the QP already drained, so no invalidation is needed: the MR
    /// goes away with the slot). Returns it and the user's message.
    pub(crate) fn take_for_failover(
        &self,
        path: &Path,
        usr: &mut KVec<u8>,
    ) -> Option<super::path::Submit> {
        let mut st = self.st.lock();
        if !st.in_use {
            return None;
        }
        let mapped = st.mapped.take();
        st.in_use = false;
        st.pending = None;
        let parts = super::path::Submit {
            dir: st.dir,
            permit: st.permit,
            idx: self.idx,
            con_type: st.con_type,
            cpu: st.cpu,
            mem_off: st.mem_off,
            data_len: st.data_len,
            usr_len: st.usr_len,
            conf: st.conf.take(),
            sg: st.sg.take(),
        };
        let usr_len = st.usr_len;
        drop(st);
        drop(mapped);
        path.inflight_dec();
        usr.clear();
        if usr.extend_with(usr_len, 0, GFP_KERNEL).is_ok() {
            let _ = self.iu.lock().read(0, usr);
        }
        Some(parts)
    }
}

impl CqeHandler<0> for Req {
    type Conn = Con;

    /// An RDMA write of the request completed (only errors matter).
    fn done(&self, conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        conn.handler().io_done(conn, wc, Rx::Empty);
    }
}

impl CqeHandler<1> for Req {
    type Conn = Con;

    /// `rtrs_clt_inv_rkey_done()`.
    fn done(&self, conn: &CmIdRef<Con>, wc: &Wc<'_>) {
        const INV_FAILED: WcError = WcError {
            site: kernel::c_str!("rtrs_clt_inv_rkey_done"),
            what: "Failed IB_WR_LOCAL_INV",
        };
        let path = &conn.handler().path;
        // Flushed too: the MR may still be valid, so the path goes through
        // recovery before the slot registers it again. The IO ends anyway.
        check_wc(path, wc, &INV_FAILED);
        let mut st = self.st.lock();
        let Some((errno, notify)) = st.pending.take() else {
            return;
        };
        if !st.in_use {
            return;
        }
        st.need_inval = false;
        Self::finish(st, path, errno, notify);
    }
}
