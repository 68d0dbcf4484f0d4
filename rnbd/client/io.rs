// SPDX-License-Identifier: GPL-2.0-or-later

//! The IO path: blk-mq requests of a mapped device become RNBD IO messages
//! sent with an RTRS permit; the RTRS confirmation completes them.

use super::device::DevIo;
use kernel::prelude::*;
use rb::ratelimit::{pr_err_ratelimited, pr_info_ratelimited};
use rb_block::mq::{Busy, Geometry, HwCtx, Operations, Status};
use rb_block::request::{ReqOp, Request};
use rb_rtrs_clt::{ConType, IoConfirm, IoPdu, Permit};
use rnbd_proto::msg::{BlkOpf, Io, ReqOp as ProtoOp, Rw};
use rnbd_proto::sysfs::DevState;

/// The blk-mq driver of rnbd-client.
pub(crate) struct RnbdMq;

/// Per-request data (C's `struct rnbd_iu`): the permit and the result.
pub(crate) struct Iu {
    permit: Option<Permit>,
    errno: i32,
}

impl IoPdu for Iu {
    fn permit(&self) -> Option<&Permit> {
        self.permit.as_ref()
    }
}

/// Milliseconds before a queue that ran out of permits runs again.
const RETRY_MS: u32 = 10;

/// Scatterlist entries in each request's PDU (`RNBD_INLINE_SG_CNT`); a
/// request with more segments chains pooled ones while it is mapped.
pub(crate) const INLINE_SG: u32 = 2;

/// The RNBD op and flags of a request (`rq_to_rnbd_flags`).
fn rnbd_rw(rq: &Request<RnbdMq>) -> Option<Rw> {
    let op = match rq.op() {
        ReqOp::Read => ProtoOp::Read,
        ReqOp::Write => ProtoOp::Write,
        ReqOp::Flush => ProtoOp::Flush,
        ReqOp::Discard => ProtoOp::Discard,
        ReqOp::SecureErase => ProtoOp::SecureErase,
        ReqOp::WriteZeroes => ProtoOp::WriteZeroes,
        ReqOp::Other(_) => return None,
    };
    let f = rq.flags();
    Some(Rw::from_request(BlkOpf {
        op,
        sync: f.sync,
        fua: f.fua,
        preflush: f.preflush,
    }))
}

#[vtable]
impl Operations for RnbdMq {
    type QueueData = DevIo;
    type Pdu = Iu;

    fn new_pdu() -> Iu {
        Iu {
            permit: None,
            errno: 0,
        }
    }

    fn queue_rq(
        dev: &DevIo,
        hctx: &HwCtx,
        mut rq: Request<Self>,
        _last: bool,
    ) -> core::result::Result<(), Busy<Self>> {
        if dev.state() != DevState::Mapped {
            return Err(Busy {
                rq,
                status: Status::IOERR,
            });
        }
        let Some(rw) = rnbd_rw(&rq) else {
            pr_err!("unsupported request op {}\n", rq.op_raw());
            return Err(Busy {
                rq,
                status: Status::IOERR,
            });
        };
        let Some(permit) = dev.clt.get_permit(ConType::Io, false) else {
            hctx.delay_run(RETRY_MS);
            return Err(Busy {
                rq,
                status: Status::RESOURCE,
            });
        };
        // The PDU holds two entries; a request with more segments chains
        // pooled ones, which may run out for a moment (atomic).
        let (sg_cnt, len) = match rq.map_sg() {
            Ok(m) => m,
            Err(e) => {
                pr_err_ratelimited!(
                    "rnbd_queue_rq",
                    "{} sg_alloc_table_chained ret={}\n",
                    dev.tag(),
                    e.to_errno()
                );
                hctx.delay_run(RETRY_MS);
                return Err(Busy {
                    rq,
                    status: Status::RESOURCE,
                });
            }
        };
        rq.pdu_mut().permit = Some(permit);
        rq.pdu_mut().errno = 0;
        rq.start();
        let msg = Io {
            device_id: dev.device_id(),
            sector: Io::wire_sector(rq.sector(), rq.bytes()),
            rw,
            bi_size: rq.bytes(),
            prio: rq.ioprio(),
        };
        let mut buf = [0u8; Io::SIZE];
        if msg.encode(&mut buf).is_err() {
            rq.pdu_mut().permit = None;
            return Err(Busy {
                rq,
                status: Status::IOERR,
            });
        }
        match dev.clt.request(rq, sg_cnt, len, &buf) {
            Ok(()) => Ok(()),
            Err((mut rq, e)) => {
                rq.pdu_mut().permit = None;
                pr_err!(
                    "{} RTRS failed to transfer IO, err: {}\n",
                    dev.tag(),
                    e.to_errno()
                );
                let status = if e == EAGAIN || e == ENOMEM {
                    hctx.delay_run(RETRY_MS);
                    Status::RESOURCE
                } else {
                    Status::IOERR
                };
                Err(Busy { rq, status })
            }
        }
    }

    fn complete(dev: &DevIo, mut rq: Request<Self>) {
        let errno = rq.pdu().errno;
        if errno != 0 {
            // As C's msg_io_conf().
            let rw = if rq.is_write() { "write" } else { "read" };
            pr_info_ratelimited!(
                "msg_io_conf",
                "{} {} I/O failed with err: {}\n",
                dev.tag(),
                rw,
                errno
            );
        }
        drop(rq.pdu_mut().permit.take());
        rq.end(Status::from_errno(errno));
    }

    fn poll(dev: &DevIo, hctx: &HwCtx) -> i32 {
        dev.clt.cq_direct(hctx.queue_num())
    }

    fn open(dev: &DevIo, write: bool) -> Result {
        if dev.read_only && write {
            return Err(EPERM);
        }
        dev.get_opener()
    }

    fn release(dev: &DevIo) {
        dev.put_opener();
    }

    /// `rnbd_client_getgeo()`.
    fn getgeo(_dev: &DevIo, capacity: u64) -> Geometry {
        Geometry {
            heads: 4,
            sectors: 16,
            cylinders: (capacity >> 6) as u16,
            start: 0,
        }
    }
}

impl IoConfirm for RnbdMq {
    fn confirm(mut rq: Request<Self>, errno: i32) {
        rq.pdu_mut().errno = errno;
        rq.complete();
    }
}
