// SPDX-License-Identifier: GPL-2.0-or-later

//! rb-test-wire: our RTRS and RNBD wire encodings against the C headers of
//! the kernel they run on (`rtrs-pri.h`, `rnbd-proto.h`), not against
//! numbers copied from them.
//!
//! Sizes are compared at build time. At load, every message is checked
//! both ways: ours encodes a value with a distinct number in every field and
//! the C struct, laid over those bytes, must read the same numbers; then the
//! C struct is filled field by field and ours must decode it to the same
//! value. Enum values and the IMM encoding are compared with C's constants
//! and static inlines (through `rb_test_wire_c.c`). Each mismatch is a
//! `mismatch:` line; the module refuses to load if there is one, and says
//! `all <n> checks match the C headers` if there is none.

use core::mem::size_of;
use core::ptr::addr_of_mut;
use kernel::prelude::*;

use rb::ffi;
use rnbd_proto::msg as rnbd;
use rtrs_proto::ext;
use rtrs_proto::imm::{Imm, ImmType};
use rtrs_proto::msg as rtrs;

module! {
    type: Test,
    name: "rb_test_wire",
    author: "rtrs-rs developers",
    description: "rust-bindings test: RTRS and RNBD wire formats against the C headers",
    license: "GPL",
}

// The C sizes, at build time.
macro_rules! same_size {
    ($($c:ty => $ours:expr),* $(,)?) => {
        $(const _: () = assert!(size_of::<$c>() == $ours, concat!("size of ", stringify!($c)));)*
    };
}

same_size! {
    ffi::rtrs_sg_desc => rtrs::SgDesc::SIZE,
    ffi::rtrs_msg_conn_req => rtrs::ConnReq::SIZE,
    ffi::rtrs_msg_conn_rsp => rtrs::ConnRsp::SIZE,
    ffi::rtrs_msg_info_req => rtrs::InfoReq::SIZE,
    ffi::rtrs_msg_info_rsp => rtrs::InfoRsp::SIZE,
    ffi::rtrs_msg_rkey_rsp => rtrs::RkeyRsp::SIZE,
    ffi::rtrs_msg_rdma_read => rtrs::RdmaRead::SIZE,
    ffi::rtrs_msg_rdma_write => rtrs::RdmaWrite::SIZE,
    ffi::rnbd_msg_hdr => rnbd::MsgHdr::SIZE,
    ffi::rnbd_msg_sess_info => rnbd::SessInfo::SIZE,
    ffi::rnbd_msg_sess_info_rsp => rnbd::SessInfoRsp::SIZE,
    ffi::rnbd_msg_open => rnbd::Open::SIZE,
    ffi::rnbd_msg_close => rnbd::Close::SIZE,
    ffi::rnbd_msg_open_rsp => rnbd::OpenRsp::SIZE,
    ffi::rnbd_msg_io => rnbd::Io::SIZE,
}

// The IMM helpers of rtrs-pri.h, which are static inlines (rb_test_wire_c.c).
extern "C" {
    fn rb_test_wire_to_io_req_imm(addr: u32) -> u32;
    fn rb_test_wire_to_io_rsp_imm(msg_id: u32, errno: i32, w_inval: bool) -> u32;
    fn rb_test_wire_to_imm(ty: u32, payload: u32) -> u32;
    fn rb_test_wire_from_io_rsp_imm(payload: u32, msg_id: *mut u32, errno: *mut i32);
}

/// A C wire struct: integers and byte arrays only, so that any bytes are a
/// valid value of it.
///
/// # Safety
///
/// Implement only for such structs.
unsafe trait Plain: Sized {}

macro_rules! plain {
    ($($t:ty),* $(,)?) => {
        // SAFETY: bindgen's rendering of the wire structs of rtrs-pri.h and
        // rnbd-proto.h: integers, byte arrays, `uuid_t` (bytes), bitfield
        // units (bytes) and zero-sized flexible arrays.
        $(unsafe impl Plain for $t {})*
    };
}

plain!(
    ffi::rtrs_sg_desc,
    ffi::rtrs_msg_conn_req,
    ffi::rtrs_msg_conn_rsp,
    ffi::rtrs_msg_info_req,
    ffi::rtrs_msg_info_rsp,
    ffi::rtrs_msg_rkey_rsp,
    ffi::rtrs_msg_rdma_read,
    ffi::rtrs_msg_rdma_write,
    ffi::rnbd_msg_sess_info,
    ffi::rnbd_msg_sess_info_rsp,
    ffi::rnbd_msg_open,
    ffi::rnbd_msg_close,
    ffi::rnbd_msg_open_rsp,
    ffi::rnbd_msg_io,
);

/// The C struct `T` as it lies at the start of `bytes` (what a C receiver
/// sees of what we sent).
fn c_view<T: Plain>(bytes: &[u8]) -> T {
    assert!(bytes.len() >= size_of::<T>());
    // SAFETY: `bytes` has `size_of::<T>()` initialised bytes (asserted), any
    // bytes are a `T` (`Plain`), and the read is unaligned.
    unsafe { core::ptr::read_unaligned(bytes.as_ptr().cast::<T>()) }
}

/// A buffer of `N` zero bytes that `fill` writes fields of the C struct
/// `T` into, through raw field pointers (what a C sender puts on the wire;
/// padding stays zero, as no typed copy of `T` is made).
fn c_bytes<T: Plain, const N: usize>(fill: impl FnOnce(*mut T)) -> [u8; N] {
    assert!(N >= size_of::<T>());
    // Over-aligned storage: the fields are written with aligned stores.
    #[repr(C, align(8))]
    struct Buf<const N: usize>([u8; N]);
    let mut buf = Buf([0u8; N]);
    fill(buf.0.as_mut_ptr().cast::<T>());
    buf.0
}

/// Counts checks and reports mismatches.
struct Checker {
    checks: u32,
    failed: u32,
}

impl Checker {
    fn eq<V: PartialEq + core::fmt::Debug>(&mut self, what: &str, field: &str, c: V, ours: V) {
        self.checks += 1;
        if c != ours {
            self.failed += 1;
            pr_err!(
                "mismatch: {} {}: C has {:?}, ours {:?}\n",
                what,
                field,
                c,
                ours
            );
        }
    }

    fn ok<T, E: core::fmt::Debug>(&mut self, what: &str, r: Result<T, E>) -> Option<T> {
        self.checks += 1;
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.failed += 1;
                pr_err!("mismatch: {}: ours fails with {:?}\n", what, e);
                None
            }
        }
    }
}

fn uuid(seed: u8) -> [u8; 16] {
    core::array::from_fn(|i| seed.wrapping_add(i as u8))
}

fn rtrs_messages(k: &mut Checker) {
    // struct rtrs_sg_desc
    let d = rtrs::SgDesc {
        addr: 0x0102_0304_0506_0708,
        key: 0x1112_1314,
        len: 0x2122_2324,
    };
    let mut b = [0u8; 64];
    if k.ok("sg_desc encode", d.encode(&mut b)).is_some() {
        let c: ffi::rtrs_sg_desc = c_view(&b);
        k.eq("sg_desc", "addr", u64::from_le(c.addr), d.addr);
        k.eq("sg_desc", "key", u32::from_le(c.key), d.key);
        k.eq("sg_desc", "len", u32::from_le(c.len), d.len);
    }

    // struct rtrs_msg_conn_req
    let req = rtrs::ConnReq {
        version: 0x0203,
        cid: 0x0405,
        cid_num: 0x0607,
        recon_cnt: 0x0809,
        sess_uuid: uuid(0x10),
        paths_uuid: uuid(0x40),
        first_conn: true,
    };
    if k.ok("conn_req encode", req.encode(&mut b)).is_some() {
        let c: ffi::rtrs_msg_conn_req = c_view(&b);
        k.eq("conn_req", "magic", u16::from_le(c.magic), rtrs::MAGIC);
        k.eq("conn_req", "version", u16::from_le(c.version), req.version);
        k.eq("conn_req", "cid", u16::from_le(c.cid), req.cid);
        k.eq("conn_req", "cid_num", u16::from_le(c.cid_num), req.cid_num);
        k.eq(
            "conn_req",
            "recon_cnt",
            u16::from_le(c.recon_cnt),
            req.recon_cnt,
        );
        k.eq("conn_req", "sess_uuid", c.sess_uuid.b, req.sess_uuid);
        k.eq("conn_req", "paths_uuid", c.paths_uuid.b, req.paths_uuid);
        k.eq("conn_req", "first_conn", c.first_conn(), 1);
    }
    let wire: [u8; 64] = c_bytes(|p: *mut ffi::rtrs_msg_conn_req| {
        // SAFETY: `p` points to a zeroed, 8-aligned buffer of at least the
        // struct's size (`c_bytes`).
        unsafe {
            addr_of_mut!((*p).magic).write(ffi::RTRS_MAGIC as u16);
            addr_of_mut!((*p).version).write(0x0201);
            addr_of_mut!((*p).cid).write(3);
            addr_of_mut!((*p).cid_num).write(9);
            addr_of_mut!((*p).recon_cnt).write(0x0a0b);
            addr_of_mut!((*p).sess_uuid.b).write(uuid(0x20));
            addr_of_mut!((*p).paths_uuid.b).write(uuid(0x60));
            (*p).set_first_conn(1);
        }
    });
    if let Some(r) = k.ok(
        "conn_req decode",
        rtrs::ConnReq::decode(&wire[..rtrs::ConnReq::SIZE]),
    ) {
        k.eq("conn_req decoded", "version", 0x0201, r.version);
        k.eq("conn_req decoded", "cid", 3, r.cid);
        k.eq("conn_req decoded", "cid_num", 9, r.cid_num);
        k.eq("conn_req decoded", "recon_cnt", 0x0a0b, r.recon_cnt);
        k.eq("conn_req decoded", "sess_uuid", uuid(0x20), r.sess_uuid);
        k.eq("conn_req decoded", "paths_uuid", uuid(0x60), r.paths_uuid);
        k.eq("conn_req decoded", "first_conn", true, r.first_conn);
    }

    // struct rtrs_msg_conn_rsp
    let rsp = rtrs::ConnRsp {
        version: 0x0200,
        errno: -0x0102,
        queue_depth: 0x0304,
        max_io_size: 0x0506_0708,
        max_hdr_size: 0x090a_0b0c,
        flags: rtrs::MSG_NEW_RKEY_F,
        // RTRS 2.1's path id lies in 2.0's reserved bytes.
        path_id: 0x1234,
    };
    if k.ok("conn_rsp encode", rsp.encode(&mut b)).is_some() {
        let c: ffi::rtrs_msg_conn_rsp = c_view(&b);
        k.eq("conn_rsp", "magic", u16::from_le(c.magic), rtrs::MAGIC);
        k.eq("conn_rsp", "version", u16::from_le(c.version), rsp.version);
        k.eq("conn_rsp", "errno", u16::from_le(c.errno) as i16, rsp.errno);
        k.eq(
            "conn_rsp",
            "queue_depth",
            u16::from_le(c.queue_depth),
            rsp.queue_depth,
        );
        k.eq(
            "conn_rsp",
            "max_io_size",
            u32::from_le(c.max_io_size),
            rsp.max_io_size,
        );
        k.eq(
            "conn_rsp",
            "max_hdr_size",
            u32::from_le(c.max_hdr_size),
            rsp.max_hdr_size,
        );
        k.eq("conn_rsp", "flags", u32::from_le(c.flags), rsp.flags);
        k.eq(
            "conn_rsp",
            "reserved[0..2] (2.1's path_id)",
            u16::from_le_bytes([c.reserved[0], c.reserved[1]]),
            rsp.path_id,
        );
    }
    let wire: [u8; 64] = c_bytes(|p: *mut ffi::rtrs_msg_conn_rsp| {
        // SAFETY: as for the connection request.
        unsafe {
            addr_of_mut!((*p).magic).write(ffi::RTRS_MAGIC as u16);
            addr_of_mut!((*p).version).write(ffi::RTRS_PROTO_VER as u16);
            addr_of_mut!((*p).errno).write(-12i16 as u16);
            addr_of_mut!((*p).queue_depth).write(512);
            addr_of_mut!((*p).max_io_size).write(0x1f000);
            addr_of_mut!((*p).max_hdr_size).write(0x1000);
            addr_of_mut!((*p).flags).write(ffi::rtrs_msg_flags_RTRS_MSG_NEW_RKEY_F);
        }
    });
    if let Some(r) = k.ok(
        "conn_rsp decode",
        rtrs::ConnRsp::decode(&wire[..rtrs::ConnRsp::SIZE]),
    ) {
        k.eq(
            "conn_rsp decoded",
            "version",
            ffi::RTRS_PROTO_VER as u16,
            r.version,
        );
        k.eq("conn_rsp decoded", "errno", -12, r.errno);
        k.eq("conn_rsp decoded", "queue_depth", 512, r.queue_depth);
        k.eq("conn_rsp decoded", "max_io_size", 0x1f000, r.max_io_size);
        k.eq("conn_rsp decoded", "max_hdr_size", 0x1000, r.max_hdr_size);
        k.eq("conn_rsp decoded", "flags", rtrs::MSG_NEW_RKEY_F, r.flags);
    }

    // struct rtrs_msg_info_req
    let mut big = [0u8; 320];
    let name = b"rs-wire-session";
    if let Some(req) = k.ok("info_req new", rtrs::InfoReq::new(name)) {
        if k.ok("info_req encode", req.encode(&mut big)).is_some() {
            let c: ffi::rtrs_msg_info_req = c_view(&big);
            k.eq(
                "info_req",
                "type",
                u16::from_le(c.type_),
                ffi::rtrs_msg_types_RTRS_MSG_INFO_REQ as u16,
            );
            k.eq("info_req", "pathname", &c.pathname[..name.len()], &name[..]);
            k.eq("info_req", "pathname NUL", c.pathname[name.len()], 0);
        }
    }
    let wire: [u8; 320] = c_bytes(|p: *mut ffi::rtrs_msg_info_req| {
        // SAFETY: as above; the name and its NUL fit the 255 bytes.
        unsafe {
            addr_of_mut!((*p).type_).write(ffi::rtrs_msg_types_RTRS_MSG_INFO_REQ as u16);
            let dst = addr_of_mut!((*p).pathname).cast::<u8>();
            core::ptr::copy_nonoverlapping(name.as_ptr(), dst, name.len());
        }
    });
    if let Some(r) = k.ok(
        "info_req decode",
        rtrs::InfoReq::decode(&wire[..rtrs::InfoReq::SIZE]),
    ) {
        k.eq("info_req decoded", "pathname", &name[..], r.pathname());
    }

    // struct rtrs_msg_info_rsp and its desc[]
    let descs = [
        rtrs::SgDesc {
            addr: 0x1000_2000,
            key: 0x77,
            len: 0x20000,
        },
        rtrs::SgDesc {
            addr: 0x3000_4000,
            key: 0x88,
            len: 0x40000,
        },
    ];
    let info = rtrs::InfoRsp {
        descs: rtrs::SgList::new(&descs),
    };
    if k.ok("info_rsp encode", info.encode(&mut big)).is_some() {
        let c: ffi::rtrs_msg_info_rsp = c_view(&big);
        k.eq(
            "info_rsp",
            "type",
            u16::from_le(c.type_),
            ffi::rtrs_msg_types_RTRS_MSG_INFO_RSP as u16,
        );
        k.eq("info_rsp", "sg_cnt", u16::from_le(c.sg_cnt), 2);
        let off = core::mem::offset_of!(ffi::rtrs_msg_info_rsp, desc);
        for (i, d) in descs.iter().enumerate() {
            let c: ffi::rtrs_sg_desc = c_view(&big[off + i * size_of::<ffi::rtrs_sg_desc>()..]);
            k.eq("info_rsp desc", "addr", u64::from_le(c.addr), d.addr);
            k.eq("info_rsp desc", "key", u32::from_le(c.key), d.key);
            k.eq("info_rsp desc", "len", u32::from_le(c.len), d.len);
        }
    }

    // struct rtrs_msg_rkey_rsp
    let rk = rtrs::RkeyRsp {
        buf_id: 0x0102,
        rkey: 0x0304_0506,
    };
    if k.ok("rkey_rsp encode", rk.encode(&mut b)).is_some() {
        let c: ffi::rtrs_msg_rkey_rsp = c_view(&b);
        k.eq(
            "rkey_rsp",
            "type",
            u16::from_le(c.type_),
            ffi::rtrs_msg_types_RTRS_MSG_RKEY_RSP as u16,
        );
        k.eq("rkey_rsp", "buf_id", u16::from_le(c.buf_id), rk.buf_id);
        k.eq("rkey_rsp", "rkey", u32::from_le(c.rkey), rk.rkey);
    }

    // struct rtrs_msg_rdma_write
    let w = rtrs::RdmaWrite { usr_len: 0x0102 };
    if k.ok("rdma_write encode", w.encode(&mut b)).is_some() {
        let c: ffi::rtrs_msg_rdma_write = c_view(&b);
        k.eq(
            "rdma_write",
            "type",
            u16::from_le(c.type_),
            ffi::rtrs_msg_types_RTRS_MSG_WRITE as u16,
        );
        k.eq("rdma_write", "usr_len", u16::from_le(c.usr_len), w.usr_len);
    }

    // struct rtrs_msg_rdma_read with its one desc
    let one = [rtrs::SgDesc {
        addr: 0xdead_0000,
        key: 0x1234,
        len: 0x8000,
    }];
    let r = rtrs::RdmaRead {
        usr_len: 0x0304,
        flags: rtrs::MSG_NEED_INVAL_F,
        descs: rtrs::SgList::new(&one),
    };
    if k.ok("rdma_read encode", r.encode(&mut b)).is_some() {
        let c: ffi::rtrs_msg_rdma_read = c_view(&b);
        k.eq(
            "rdma_read",
            "type",
            u16::from_le(c.type_),
            ffi::rtrs_msg_types_RTRS_MSG_READ as u16,
        );
        k.eq("rdma_read", "usr_len", u16::from_le(c.usr_len), r.usr_len);
        k.eq(
            "rdma_read",
            "flags",
            u16::from_le(c.flags),
            ffi::rtrs_msg_flags_RTRS_MSG_NEED_INVAL_F as u16,
        );
        k.eq("rdma_read", "sg_cnt", u16::from_le(c.sg_cnt), 1);
        let d: ffi::rtrs_sg_desc =
            c_view(&b[core::mem::offset_of!(ffi::rtrs_msg_rdma_read, desc)..]);
        k.eq("rdma_read desc", "addr", u64::from_le(d.addr), one[0].addr);
        k.eq("rdma_read desc", "key", u32::from_le(d.key), one[0].key);
        k.eq("rdma_read desc", "len", u32::from_le(d.len), one[0].len);
    }
}

fn rtrs_constants(k: &mut Checker) {
    k.eq("rtrs", "RTRS_MAGIC", ffi::RTRS_MAGIC as u16, rtrs::MAGIC);
    k.eq(
        "rtrs",
        "RTRS_PROTO_VER",
        ffi::RTRS_PROTO_VER as u16,
        rtrs::PROTO_VER,
    );
    k.eq(
        "rtrs",
        "RTRS_MSG_NEED_INVAL_F",
        ffi::rtrs_msg_flags_RTRS_MSG_NEED_INVAL_F as u16,
        rtrs::MSG_NEED_INVAL_F,
    );
    k.eq(
        "rtrs",
        "RTRS_MSG_NEW_RKEY_F",
        ffi::rtrs_msg_flags_RTRS_MSG_NEW_RKEY_F,
        rtrs::MSG_NEW_RKEY_F,
    );
    for (c, ours) in [
        (
            ffi::rtrs_msg_types_RTRS_MSG_INFO_REQ,
            rtrs::MsgType::InfoReq,
        ),
        (
            ffi::rtrs_msg_types_RTRS_MSG_INFO_RSP,
            rtrs::MsgType::InfoRsp,
        ),
        (ffi::rtrs_msg_types_RTRS_MSG_WRITE, rtrs::MsgType::Write),
        (ffi::rtrs_msg_types_RTRS_MSG_READ, rtrs::MsgType::Read),
        (
            ffi::rtrs_msg_types_RTRS_MSG_RKEY_RSP,
            rtrs::MsgType::RkeyRsp,
        ),
    ] {
        k.eq("rtrs_msg_types", "value", c as u16, ours.as_u16());
    }
    // RTRS 2.1's message type and CON_RSP flags are none of C's: C's types
    // all come before READ_RSP's, and no C flag is one of ours.
    let c_types = [
        ffi::rtrs_msg_types_RTRS_MSG_INFO_REQ,
        ffi::rtrs_msg_types_RTRS_MSG_INFO_RSP,
        ffi::rtrs_msg_types_RTRS_MSG_WRITE,
        ffi::rtrs_msg_types_RTRS_MSG_READ,
        ffi::rtrs_msg_types_RTRS_MSG_RKEY_RSP,
    ];
    k.eq(
        "rtrs 2.1",
        "MSG_READ_RSP after C's types",
        true,
        c_types.iter().all(|&t| (t as u16) < ext::MSG_READ_RSP),
    );
    let c_flags =
        ffi::rtrs_msg_flags_RTRS_MSG_NEED_INVAL_F | ffi::rtrs_msg_flags_RTRS_MSG_NEW_RKEY_F;
    k.eq(
        "rtrs 2.1",
        "CON_RSP flags apart from C's",
        0,
        c_flags & (ext::MSG_FENCE_F | ext::MSG_READ_RSP_F),
    );
    for (c, ours) in [
        (ffi::rtrs_imm_type_RTRS_IO_REQ_IMM, ImmType::IoReq),
        (ffi::rtrs_imm_type_RTRS_IO_RSP_IMM, ImmType::IoRsp),
        (ffi::rtrs_imm_type_RTRS_IO_RSP_W_INV_IMM, ImmType::IoRspWInv),
        (ffi::rtrs_imm_type_RTRS_HB_MSG_IMM, ImmType::HbMsg),
        (ffi::rtrs_imm_type_RTRS_HB_ACK_IMM, ImmType::HbAck),
    ] {
        k.eq("rtrs_imm_type", "value", c, ours as u32);
    }
}

/// The IMM encoding against C's static inlines, over edge and spread values.
fn rtrs_imm(k: &mut Checker) {
    let ids = [0u32, 1, 0x7fff, 0x7ffff, 0x80000, 0x0abc_def0, u32::MAX];
    let errnos = [0i32, -1, -5, -12, -110, -511, -512, -4095, 17, i32::MIN + 1];
    let mut bad = 0u32;
    for &id in &ids {
        // SAFETY: the shims only compute on their arguments.
        let c = unsafe { rb_test_wire_to_io_req_imm(id) };
        if c != (Imm::IoReq { payload: id }).encode() {
            bad += 1;
            pr_err!(
                "mismatch: io_req_imm({:#x}): C {:#x}, ours {:#x}\n",
                id,
                c,
                Imm::IoReq { payload: id }.encode()
            );
        }
        for &errno in &errnos {
            for w_inval in [false, true] {
                // SAFETY: as above.
                let c = unsafe { rb_test_wire_to_io_rsp_imm(id, errno, w_inval) };
                let ours = Imm::io_rsp(id, errno, w_inval).encode();
                if c != ours {
                    bad += 1;
                    pr_err!(
                        "mismatch: io_rsp_imm({:#x}, {}, {}): C {:#x}, ours {:#x}\n",
                        id,
                        errno,
                        w_inval,
                        c,
                        ours
                    );
                }
                // And back: what C decodes from its IMM, ours must too.
                let (mut c_id, mut c_errno) = (0u32, 0i32);
                // SAFETY: both out pointers are valid locals.
                unsafe {
                    rb_test_wire_from_io_rsp_imm(
                        c & ffi::rtrs_imm_const_MAX_IMM_PAYL_MASK,
                        &mut c_id,
                        &mut c_errno,
                    )
                };
                let want_ty = if w_inval {
                    ImmType::IoRspWInv
                } else {
                    ImmType::IoRsp
                };
                let dec = Imm::decode(c);
                if dec
                    != (Imm::IoRsp {
                        msg_id: c_id,
                        errno: c_errno,
                        w_inval,
                    })
                    || (c >> 28) != want_ty as u32
                {
                    bad += 1;
                    pr_err!(
                        "mismatch: decode {:#x}: C ({:#x}, {}), ours {:?}\n",
                        c,
                        c_id,
                        c_errno,
                        dec
                    );
                }
            }
        }
    }
    for (ty, ours) in [
        (ffi::rtrs_imm_type_RTRS_HB_MSG_IMM, Imm::HbMsg),
        (ffi::rtrs_imm_type_RTRS_HB_ACK_IMM, Imm::HbAck),
    ] {
        // SAFETY: as above.
        let c = unsafe { rb_test_wire_to_imm(ty, 0) };
        if c != ours.encode() || Imm::decode(c) != ours {
            bad += 1;
            pr_err!(
                "mismatch: heartbeat imm {}: C {:#x}, ours {:#x}\n",
                ty,
                c,
                ours.encode()
            );
        }
    }
    k.checks += 1;
    if bad != 0 {
        k.failed += 1;
    }
}

fn rnbd_messages(k: &mut Checker) {
    let mut b = [0u8; 300];

    // struct rnbd_msg_sess_info{,_rsp}
    let si = rnbd::SessInfo { ver: 0x42 };
    if k.ok("sess_info encode", si.encode(&mut b)).is_some() {
        let c: ffi::rnbd_msg_sess_info = c_view(&b);
        k.eq(
            "sess_info",
            "type",
            u16::from_le(c.hdr.type_),
            ffi::rnbd_msg_type_RNBD_MSG_SESS_INFO as u16,
        );
        k.eq("sess_info", "ver", c.ver, si.ver);
    }
    let wire: [u8; 64] = c_bytes(|p: *mut ffi::rnbd_msg_sess_info_rsp| {
        // SAFETY: `p` points to a zeroed, 8-aligned buffer of at least the
        // struct's size (`c_bytes`).
        unsafe {
            addr_of_mut!((*p).hdr.type_).write(ffi::rnbd_msg_type_RNBD_MSG_SESS_INFO_RSP as u16);
            addr_of_mut!((*p).ver).write(0x24);
        }
    });
    if let Some(r) = k.ok(
        "sess_info_rsp decode",
        rnbd::SessInfoRsp::decode(&wire[..rnbd::SessInfoRsp::SIZE]),
    ) {
        k.eq("sess_info_rsp decoded", "ver", 0x24, r.ver);
    }

    // struct rnbd_msg_open
    let name = b"nullb0";
    let open = rnbd::Open {
        access_mode: rnbd::AccessMode::Migration,
        dev_name: name,
    };
    if k.ok("open encode", open.encode(&mut b)).is_some() {
        let c: ffi::rnbd_msg_open = c_view(&b);
        k.eq(
            "open",
            "type",
            u16::from_le(c.hdr.type_),
            ffi::rnbd_msg_type_RNBD_MSG_OPEN as u16,
        );
        k.eq(
            "open",
            "access_mode",
            u32::from(c.access_mode),
            ffi::rnbd_access_mode_RNBD_ACCESS_MIGRATION,
        );
        let cname: [u8; 7] = core::array::from_fn(|i| c.dev_name[i] as u8);
        k.eq("open", "dev_name", &cname[..], b"nullb0\0");
    }
    let wire: [u8; 300] = c_bytes(|p: *mut ffi::rnbd_msg_open| {
        // SAFETY: as above; the name and its NUL fit.
        unsafe {
            addr_of_mut!((*p).hdr.type_).write(ffi::rnbd_msg_type_RNBD_MSG_OPEN as u16);
            addr_of_mut!((*p).access_mode).write(ffi::rnbd_access_mode_RNBD_ACCESS_RO as u8);
            let dst = addr_of_mut!((*p).dev_name).cast::<u8>();
            core::ptr::copy_nonoverlapping(name.as_ptr(), dst, name.len());
        }
    });
    if let Some(r) = k.ok("open decode", rnbd::Open::decode(&wire[..rnbd::Open::SIZE])) {
        k.eq(
            "open decoded",
            "access_mode",
            rnbd::AccessMode::Ro,
            r.access_mode,
        );
        k.eq("open decoded", "dev_name", &name[..], r.dev_name);
    }

    // struct rnbd_msg_close
    let close = rnbd::Close {
        device_id: 0x0102_0304,
    };
    if k.ok("close encode", close.encode(&mut b)).is_some() {
        let c: ffi::rnbd_msg_close = c_view(&b);
        k.eq(
            "close",
            "type",
            u16::from_le(c.hdr.type_),
            ffi::rnbd_msg_type_RNBD_MSG_CLOSE as u16,
        );
        k.eq(
            "close",
            "device_id",
            u32::from_le(c.device_id),
            close.device_id,
        );
    }

    // struct rnbd_msg_open_rsp
    let rsp = rnbd::OpenRsp {
        device_id: 0x0102_0304,
        nsectors: 0x0506_0708_090a_0b0c,
        max_hw_sectors: 0x1112_1314,
        max_write_zeroes_sectors: 0x2122_2324,
        max_discard_sectors: 0x3132_3334,
        discard_granularity: 0x4142_4344,
        discard_alignment: 0x5152_5354,
        physical_block_size: 0x6162,
        logical_block_size: 0x7172,
        max_segments: 0x8182,
        secure_discard: 0x9192,
        cache_policy: rnbd::CachePolicy {
            fua: true,
            writeback: true,
        },
    };
    if k.ok("open_rsp encode", rsp.encode(&mut b)).is_some() {
        let c: ffi::rnbd_msg_open_rsp = c_view(&b);
        k.eq(
            "open_rsp",
            "type",
            u16::from_le(c.hdr.type_),
            ffi::rnbd_msg_type_RNBD_MSG_OPEN_RSP as u16,
        );
        k.eq(
            "open_rsp",
            "device_id",
            u32::from_le(c.device_id),
            rsp.device_id,
        );
        k.eq(
            "open_rsp",
            "nsectors",
            u64::from_le(c.nsectors),
            rsp.nsectors,
        );
        k.eq(
            "open_rsp",
            "max_hw_sectors",
            u32::from_le(c.max_hw_sectors),
            rsp.max_hw_sectors,
        );
        k.eq(
            "open_rsp",
            "max_write_zeroes_sectors",
            u32::from_le(c.max_write_zeroes_sectors),
            rsp.max_write_zeroes_sectors,
        );
        k.eq(
            "open_rsp",
            "max_discard_sectors",
            u32::from_le(c.max_discard_sectors),
            rsp.max_discard_sectors,
        );
        k.eq(
            "open_rsp",
            "discard_granularity",
            u32::from_le(c.discard_granularity),
            rsp.discard_granularity,
        );
        k.eq(
            "open_rsp",
            "discard_alignment",
            u32::from_le(c.discard_alignment),
            rsp.discard_alignment,
        );
        k.eq(
            "open_rsp",
            "physical_block_size",
            u16::from_le(c.physical_block_size),
            rsp.physical_block_size,
        );
        k.eq(
            "open_rsp",
            "logical_block_size",
            u16::from_le(c.logical_block_size),
            rsp.logical_block_size,
        );
        k.eq(
            "open_rsp",
            "max_segments",
            u16::from_le(c.max_segments),
            rsp.max_segments,
        );
        k.eq(
            "open_rsp",
            "secure_discard",
            u16::from_le(c.secure_discard),
            rsp.secure_discard,
        );
        k.eq(
            "open_rsp",
            "cache_policy",
            u32::from(c.cache_policy),
            ffi::rnbd_cache_policy_RNBD_FUA | ffi::rnbd_cache_policy_RNBD_WRITEBACK,
        );
    }
    let wire: [u8; 64] = c_bytes(|p: *mut ffi::rnbd_msg_open_rsp| {
        // SAFETY: as above.
        unsafe {
            addr_of_mut!((*p).hdr.type_).write(ffi::rnbd_msg_type_RNBD_MSG_OPEN_RSP as u16);
            addr_of_mut!((*p).device_id).write(7);
            addr_of_mut!((*p).nsectors).write(2097152);
            addr_of_mut!((*p).max_hw_sectors).write(248);
            addr_of_mut!((*p).max_write_zeroes_sectors).write(11);
            addr_of_mut!((*p).max_discard_sectors).write(12);
            addr_of_mut!((*p).discard_granularity).write(13);
            addr_of_mut!((*p).discard_alignment).write(14);
            addr_of_mut!((*p).physical_block_size).write(4096);
            addr_of_mut!((*p).logical_block_size).write(512);
            addr_of_mut!((*p).max_segments).write(128);
            addr_of_mut!((*p).secure_discard).write(1);
            addr_of_mut!((*p).cache_policy).write(ffi::rnbd_cache_policy_RNBD_WRITEBACK as u8);
        }
    });
    if let Some(r) = k.ok(
        "open_rsp decode",
        rnbd::OpenRsp::decode(&wire[..rnbd::OpenRsp::SIZE]),
    ) {
        let want = rnbd::OpenRsp {
            device_id: 7,
            nsectors: 2097152,
            max_hw_sectors: 248,
            max_write_zeroes_sectors: 11,
            max_discard_sectors: 12,
            discard_granularity: 13,
            discard_alignment: 14,
            physical_block_size: 4096,
            logical_block_size: 512,
            max_segments: 128,
            secure_discard: 1,
            cache_policy: rnbd::CachePolicy {
                fua: false,
                writeback: true,
            },
        };
        k.eq("open_rsp decoded", "all fields", want, r);
    }

    // struct rnbd_msg_io
    let io = rnbd::Io {
        device_id: 0x0102_0304,
        sector: 0x0506_0708_090a_0b0c,
        rw: rnbd::Rw {
            op: rnbd::Op::Write,
            flags: rnbd::OpFlags::FUA | rnbd::OpFlags::SYNC,
        },
        bi_size: 0x1112_1314,
        prio: 0x2122,
    };
    if k.ok("io encode", io.encode(&mut b)).is_some() {
        let c: ffi::rnbd_msg_io = c_view(&b);
        k.eq(
            "io",
            "type",
            u16::from_le(c.hdr.type_),
            ffi::rnbd_msg_type_RNBD_MSG_IO as u16,
        );
        k.eq("io", "device_id", u32::from_le(c.device_id), io.device_id);
        k.eq("io", "sector", u64::from_le(c.sector), io.sector);
        k.eq(
            "io",
            "rw",
            u32::from_le(c.rw),
            ffi::rnbd_io_flags_RNBD_OP_WRITE
                | ffi::rnbd_io_flags_RNBD_F_FUA
                | ffi::rnbd_io_flags_RNBD_F_SYNC,
        );
        k.eq("io", "bi_size", u32::from_le(c.bi_size), io.bi_size);
        k.eq("io", "prio", u16::from_le(c.prio), io.prio);
    }
    let wire: [u8; 64] = c_bytes(|p: *mut ffi::rnbd_msg_io| {
        // SAFETY: as above.
        unsafe {
            addr_of_mut!((*p).hdr.type_).write(ffi::rnbd_msg_type_RNBD_MSG_IO as u16);
            addr_of_mut!((*p).device_id).write(3);
            addr_of_mut!((*p).sector).write(0x1234_5678_9abc);
            addr_of_mut!((*p).rw).write(ffi::rnbd_io_flags_RNBD_OP_WRITE_ZEROES);
            addr_of_mut!((*p).bi_size).write(65536);
            addr_of_mut!((*p).prio).write(0x4003);
        }
    });
    if let Some(r) = k.ok("io decode", rnbd::Io::decode(&wire[..rnbd::Io::SIZE])) {
        k.eq("io decoded", "device_id", 3, r.device_id);
        k.eq("io decoded", "sector", 0x1234_5678_9abc, r.sector);
        k.eq(
            "io decoded",
            "rw",
            rnbd::Rw {
                op: rnbd::Op::WriteZeroes,
                flags: rnbd::OpFlags::NONE,
            },
            r.rw,
        );
        k.eq("io decoded", "bi_size", 65536, r.bi_size);
        k.eq("io decoded", "prio", 0x4003, r.prio);
    }
}

fn rnbd_constants(k: &mut Checker) {
    k.eq(
        "rnbd",
        "RNBD_PROTO_VER_MAJOR",
        ffi::RNBD_PROTO_VER_MAJOR as u8,
        rnbd::PROTO_VER_MAJOR,
    );
    k.eq(
        "rnbd",
        "RNBD_PROTO_VER_MINOR",
        ffi::RNBD_PROTO_VER_MINOR as u8,
        rnbd::PROTO_VER_MINOR,
    );
    for (c, ours) in [
        (
            ffi::rnbd_msg_type_RNBD_MSG_SESS_INFO,
            rnbd::MsgType::SessInfo,
        ),
        (
            ffi::rnbd_msg_type_RNBD_MSG_SESS_INFO_RSP,
            rnbd::MsgType::SessInfoRsp,
        ),
        (ffi::rnbd_msg_type_RNBD_MSG_OPEN, rnbd::MsgType::Open),
        (ffi::rnbd_msg_type_RNBD_MSG_OPEN_RSP, rnbd::MsgType::OpenRsp),
        (ffi::rnbd_msg_type_RNBD_MSG_IO, rnbd::MsgType::Io),
        (ffi::rnbd_msg_type_RNBD_MSG_CLOSE, rnbd::MsgType::Close),
    ] {
        k.eq("rnbd_msg_type", "value", c as u16, ours as u16);
    }
    for (c, ours) in [
        (ffi::rnbd_access_mode_RNBD_ACCESS_RO, rnbd::AccessMode::Ro),
        (ffi::rnbd_access_mode_RNBD_ACCESS_RW, rnbd::AccessMode::Rw),
        (
            ffi::rnbd_access_mode_RNBD_ACCESS_MIGRATION,
            rnbd::AccessMode::Migration,
        ),
    ] {
        k.eq("rnbd_access_mode", "value", c as u8, ours.to_wire());
    }
    for (c, ours) in [
        (ffi::rnbd_io_flags_RNBD_OP_READ, rnbd::Op::Read),
        (ffi::rnbd_io_flags_RNBD_OP_WRITE, rnbd::Op::Write),
        (ffi::rnbd_io_flags_RNBD_OP_FLUSH, rnbd::Op::Flush),
        (ffi::rnbd_io_flags_RNBD_OP_DISCARD, rnbd::Op::Discard),
        (
            ffi::rnbd_io_flags_RNBD_OP_SECURE_ERASE,
            rnbd::Op::SecureErase,
        ),
        (
            ffi::rnbd_io_flags_RNBD_OP_WRITE_ZEROES,
            rnbd::Op::WriteZeroes,
        ),
    ] {
        k.eq("rnbd_io_flags op", "value", c, ours.to_wire());
    }
    k.eq(
        "rnbd_io_flags",
        "RNBD_F_SYNC",
        ffi::rnbd_io_flags_RNBD_F_SYNC,
        rnbd::OpFlags::SYNC.bits(),
    );
    k.eq(
        "rnbd_io_flags",
        "RNBD_F_FUA",
        ffi::rnbd_io_flags_RNBD_F_FUA,
        rnbd::OpFlags::FUA.bits(),
    );
    k.eq(
        "rnbd_cache_policy",
        "RNBD_FUA",
        ffi::rnbd_cache_policy_RNBD_FUA as u8,
        rnbd::CachePolicy::FUA,
    );
    k.eq(
        "rnbd_cache_policy",
        "RNBD_WRITEBACK",
        ffi::rnbd_cache_policy_RNBD_WRITEBACK as u8,
        rnbd::CachePolicy::WRITEBACK,
    );
}

struct Test;

impl kernel::Module for Test {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let mut k = Checker {
            checks: 0,
            failed: 0,
        };
        rtrs_messages(&mut k);
        rtrs_constants(&mut k);
        rtrs_imm(&mut k);
        rnbd_messages(&mut k);
        rnbd_constants(&mut k);
        if k.failed != 0 {
            pr_err!(
                "{} of {} checks differ from the C headers\n",
                k.failed,
                k.checks
            );
            return Err(EINVAL);
        }
        pr_info!("all {} checks match the C headers\n", k.checks);
        Ok(Test)
    }
}
