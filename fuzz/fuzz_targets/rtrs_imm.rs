// SPDX-License-Identifier: GPL-2.0-or-later
//! The 32-bit IMM: `Imm::decode`/`Imm::encode` round trips both ways,
//! `to_imm`/`from_imm`, `Imm::io_rsp`, `imm_bits`/`imm_fits`,
//! `check_chunk_params` and the `ChunkLayout` split of IO request payloads.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rtrs_proto::error::Error;
use rtrs_proto::imm::*;

#[derive(Arbitrary, Debug)]
struct Input {
    imm: u32,
    ty: u32,
    msg_id: u32,
    errno: i32,
    w_inval: bool,
    queue_depth: u32,
    buf_id: u32,
    off: u32,
    max_chunk_size: u32,
    params: (i32, i32),
}

/// `ilog2(n - 1) + 1` with 32-bit arithmetic, written independently.
fn ref_imm_bits(n: u32) -> u32 {
    let m = n.wrapping_sub(1);
    if m == 0 {
        0
    } else {
        32 - m.leading_zeros()
    }
}

fuzz_target!(|x: Input| {
    // Any IMM decodes, and re-encodes to itself but for a heartbeat's
    // ignored payload.
    let imm = Imm::decode(x.imm);
    let again = imm.encode();
    match imm {
        Imm::HbMsg | Imm::HbAck => assert_eq!(again, x.imm & !MAX_IMM_PAYL_MASK),
        _ => assert_eq!(again, x.imm),
    }
    assert_eq!(Imm::decode(again), imm);
    let (ty, payload) = from_imm(x.imm);
    assert!(ty <= MAX_IMM_TYPE_MASK && payload <= MAX_IMM_PAYL_MASK);
    assert_eq!(to_imm(ty, payload), x.imm);
    assert_eq!(
        from_imm(to_imm(x.ty, x.imm)),
        (x.ty & MAX_IMM_TYPE_MASK, x.imm & MAX_IMM_PAYL_MASK)
    );
    if let Imm::IoRsp { msg_id, errno, .. } = imm {
        assert!(msg_id <= IO_RSP_MSG_ID_MASK);
        assert!(errno <= 0 && errno.unsigned_abs() <= IO_RSP_ERRNO_MAX);
    }
    if let Imm::Unknown { ty, .. } = imm {
        assert!(ImmType::from_u32(ty).is_none());
    }

    // An IO response built from any fields survives the wire as the C
    // helpers mask it.
    let rsp = Imm::io_rsp(x.msg_id, x.errno, x.w_inval);
    assert_eq!(
        rsp,
        Imm::IoRsp {
            msg_id: x.msg_id & IO_RSP_MSG_ID_MASK,
            errno: -((x.errno.unsigned_abs() & IO_RSP_ERRNO_MAX) as i32),
            w_inval: x.w_inval,
        }
    );
    assert_eq!(Imm::decode(rsp.encode()), rsp);
    let raw = Imm::IoRsp {
        msg_id: x.msg_id,
        errno: x.errno,
        w_inval: x.w_inval,
    };
    assert_eq!(Imm::decode(raw.encode()), rsp);
    let unknown = Imm::Unknown {
        ty: x.ty,
        payload: x.imm,
    };
    assert_eq!(unknown.encode(), to_imm(x.ty, x.imm));
    assert_eq!(
        Imm::IoReq { payload: x.imm }.encode(),
        x.imm & MAX_IMM_PAYL_MASK
    );

    // imm_bits and the checks built on it.
    assert_eq!(imm_bits(x.queue_depth), ref_imm_bits(x.queue_depth));
    assert_eq!(
        imm_fits(x.queue_depth, x.max_chunk_size),
        ref_imm_bits(x.queue_depth) + ref_imm_bits(x.max_chunk_size) <= MAX_IMM_PAYL_BITS
    );
    let (depth, chunk) = x.params;
    let ok = (1..=65535).contains(&depth)
        && chunk >= 8192
        && (chunk as u32).is_power_of_two()
        && imm_fits(depth as u32, chunk as u32);
    assert_eq!(check_chunk_params(depth, chunk).is_ok(), ok);

    // The chunk id / offset split of IO request payloads.
    let layout = ChunkLayout::new(x.queue_depth);
    if !(1..=65535).contains(&x.queue_depth) {
        assert_eq!(layout, Err(Error::Inval));
        return;
    }
    let layout = layout.unwrap();
    let mem_bits = layout.mem_bits();
    assert_eq!(mem_bits, MAX_IMM_PAYL_BITS - ref_imm_bits(x.queue_depth));
    // Every chunk id of the session fits its bits.
    assert!(u64::from(x.queue_depth - 1) >> (MAX_IMM_PAYL_BITS - mem_bits) == 0);
    let fits = u64::from(x.buf_id) < 1u64 << (MAX_IMM_PAYL_BITS - mem_bits)
        && u64::from(x.off) < 1u64 << mem_bits;
    match layout.io_req_imm(x.buf_id, x.off) {
        Ok(imm) => {
            assert!(fits);
            let Imm::IoReq { payload } = Imm::decode(imm) else {
                panic!("io_req_imm gave {imm:#x}, not an IO request");
            };
            assert_eq!(layout.split(payload), (x.buf_id, x.off));
            assert_eq!(payload, layout.mem_off(x.buf_id) | x.off);
        }
        Err(e) => {
            assert!(!fits);
            assert_eq!(e, Error::Inval);
        }
    }
    let (buf_id, off) = layout.split(x.imm);
    assert!(u64::from(off) < 1u64 << mem_bits);
    assert_eq!(
        (u64::from(buf_id) << mem_bits) | u64::from(off),
        u64::from(x.imm & MAX_IMM_PAYL_MASK)
    );
    let checked = layout.split_checked(x.imm, x.queue_depth, x.max_chunk_size);
    if buf_id < x.queue_depth && off < x.max_chunk_size {
        assert_eq!(checked, Ok((buf_id, off)));
    } else {
        assert_eq!(checked, Err(Error::Inval));
    }
});
