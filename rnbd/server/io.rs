// SPDX-License-Identifier: GPL-2.0-or-later

//! What a client sends (`rnbd_srv_rdma_ev`): SESS_INFO, OPEN and CLOSE,
//! answered at once, and block IO (`process_rdma`), submitted as a bio over
//! the chunk RTRS received it in and answered from its completion.

use super::device::Target;
use super::session::Session;
use super::trace;
use super::Handler;
use rb_block::bio::{self, BioDone, BioOp, BioReq};
use rb_rtrs_srv::SrvIo;
use rnbd_proto::msg::{
    negotiate_version, Close, Io, MsgHdr, MsgType, Open, ReqOp, SessInfo, SessInfoRsp, NAME_MAX,
    PROTO_VER_MAJOR,
};

/// An IO of ours.
type ClientIo = SrvIo<Handler>;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{Arc, ArcBorrow};

/// Handles one message of session `sess`; answers `io` (now or later).
pub(crate) fn dispatch(sess: ArcBorrow<'_, Session>, mut io: ClientIo, usr: &[u8]) {
    let hdr = match MsgHdr::decode(usr) {
        Ok(hdr) => hdr,
        Err(_) => {
            let ty = usr.get(..2).map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
            pr_warn!(
                "Received unexpected message type {} from session {}\n",
                ty,
                sess.name()
            );
            io.respond(Err(EINVAL));
            return;
        }
    };
    let res = match hdr.msg_type {
        MsgType::Io => return process_io(&sess, io, usr),
        MsgType::SessInfo => sess_info(&sess, usr, io.data_mut()),
        MsgType::Open => open(&sess.into(), usr, io.data_mut()),
        MsgType::Close => {
            // The C server answers a CLOSE with success whatever it finds.
            if let Ok(msg) = Close::decode(usr) {
                trace::process_msg_close(msg.device_id, sess.name_cstr());
                sess.close(msg.device_id);
            }
            Ok(())
        }
        MsgType::SessInfoRsp | MsgType::OpenRsp => {
            pr_warn!(
                "Received unexpected message type {} from session {}\n",
                hdr.msg_type.to_wire(),
                sess.name()
            );
            Err(EINVAL)
        }
    };
    io.respond(res);
}

/// `process_msg_sess_info`: agree on a version and answer with it.
fn sess_info(sess: &Session, usr: &[u8], rsp: &mut [u8]) -> Result {
    let msg = SessInfo::decode(usr).map_err(super::errno)?;
    let ver = negotiate_version(msg.ver);
    sess.set_ver(ver);
    trace::process_msg_sess_info(ver, msg.ver, PROTO_VER_MAJOR, sess.name_cstr());
    SessInfoRsp { ver }.encode(rsp).map_err(super::errno)?;
    Ok(())
}

/// `process_msg_open`.
fn open(sess: &Arc<Session>, usr: &[u8], rsp: &mut [u8]) -> Result {
    let msg = Open::decode(usr).map_err(|e| {
        pr_err!("Session {}: malformed OPEN message\n", sess.name());
        super::errno(e)
    })?;
    if trace::process_msg_open_enabled() {
        let mut dev = [0u8; NAME_MAX];
        let n = msg.dev_name.len().min(NAME_MAX - 1);
        dev[..n].copy_from_slice(&msg.dev_name[..n]);
        let dev = CStr::from_bytes_with_nul(&dev[..=n]).unwrap_or(kernel::c_str!(""));
        trace::process_msg_open(msg.access_mode.to_wire(), sess.name_cstr(), dev);
    }
    sess.open(&msg, rsp)
}

/// The completion of a client's IO: answer it, count it out.
struct IoDone {
    target: Arc<Target>,
}

impl BioDone<ClientIo> for IoDone {
    fn done(self, io: ClientIo, status: Result) {
        io.respond(status);
        self.target.end_io();
    }
}

/// `process_rdma`: one block IO.
fn process_io(sess: &Session, io: ClientIo, usr: &[u8]) {
    let msg = match Io::decode(usr) {
        Ok(msg) => msg,
        Err(_) => {
            pr_err_rl!("Session {}: malformed IO message\n", sess.name());
            io.respond(Err(EINVAL));
            return;
        }
    };
    if trace::process_rdma_enabled() {
        // C's `id->dir`: RTRS reads for RNBD's reads only.
        let dir = if msg.rw.to_bio().op == ReqOp::Read {
            0
        } else {
            1
        };
        trace::process_rdma(
            sess.name_cstr(),
            dir,
            sess.ver(),
            msg.device_id,
            msg.sector,
            msg.rw.to_wire(),
            msg.bi_size,
            msg.prio,
            io.data_len() as u32,
            usr.len(),
        );
    }
    let Some(target) = sess.start_io(msg.device_id) else {
        pr_err_rl!(
            "Got I/O request on session {} for unknown device id {}\n",
            sess.name(),
            msg.device_id
        );
        io.respond(Err(rb::errno::ENOTCONN()));
        return;
    };
    let opf = msg.rw.to_bio();
    let op = match opf.op {
        ReqOp::Read => BioOp::Read,
        ReqOp::Write | ReqOp::Flush => BioOp::Write,
        ReqOp::Discard => BioOp::Discard,
        ReqOp::SecureErase => BioOp::SecureErase,
        ReqOp::WriteZeroes => BioOp::WriteZeroes,
    };
    // An empty flush changes nothing; anything else but a read does.
    let empty_flush = opf.preflush && msg.bi_size == 0 && io.data_len() == 0;
    if target.read_only && op != BioOp::Read && !empty_flush {
        // The C server relies on the client for this; we refuse too.
        pr_err_rl!(
            "Session {}: write to read-only device id {}\n",
            sess.name(),
            msg.device_id
        );
        io.respond(Err(EROFS));
        target.end_io();
        return;
    }
    let req = BioReq {
        op,
        preflush: opf.preflush,
        fua: opf.fua,
        sync: opf.sync,
        sector: msg.bio_sector(),
        size: msg.bi_size,
        prio: msg.prio_for_version(sess.ver()),
    };
    let bdev = target.file.bdev();
    let done = IoDone {
        target: target.clone(),
    };
    if let Err((io, done, e)) = bio::submit(bdev, &req, io, done) {
        pr_err_rl!(
            "Session {}: IO on device id {} refused (op {:?}, {} bytes of data, bi_size {}), err: {}\n",
            sess.name(),
            msg.device_id,
            op,
            io.data_len(),
            msg.bi_size,
            e.to_errno()
        );
        io.respond(Err(e));
        done.target.end_io();
    }
}
