// SPDX-License-Identifier: GPL-2.0-or-later
//! `Io::decode` (the server reading an IO request), the op/flag encoding
//! (`Rw`) and its block-layer mappings: a decoded request round-trips,
//! `prio` is read only from a full-size message, `rw` keeps only the known
//! bits, and `to_bio` / `from_request` agree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::msg::{Io, MsgType, Op, OpFlags, ReqOp, Rw, PROTO_VER_MAJOR};
use rtrs_fuzz::le;

fuzz_target!(|data: &[u8]| {
    let got = Io::decode(data);
    if data.len() < Io::MIN_SIZE || data[..2] != MsgType::Io.to_wire().to_le_bytes() {
        assert_eq!(got, Err(Error::Inval));
        return;
    }
    let raw_rw = le(&data[16..], 4) as u32;
    let Ok(m) = got else {
        assert_eq!(got, Err(Error::Inval));
        assert!(Op::from_wire(raw_rw & Rw::OP_MASK).is_err());
        return;
    };
    assert_eq!(u64::from(m.device_id), le(&data[4..], 4));
    assert_eq!(m.sector, le(&data[8..], 8));
    assert_eq!(u64::from(m.bi_size), le(&data[20..], 4));
    if data.len() < Io::SIZE {
        assert_eq!(m.prio, 0);
    } else {
        assert_eq!(u64::from(m.prio), le(&data[24..], 2));
    }
    assert_eq!(m.prio_for_version(PROTO_VER_MAJOR), m.prio);
    assert_eq!(m.prio_for_version(PROTO_VER_MAJOR - 1), 0);
    let known = Rw::OP_MASK | OpFlags::SYNC.bits() | OpFlags::FUA.bits();
    assert_eq!(m.rw.to_wire(), raw_rw & known);
    assert_eq!(Rw::from_wire(m.rw.to_wire()), Ok(m.rw));
    assert_eq!(m.rw.op.to_wire(), raw_rw & Rw::OP_MASK);
    assert_eq!(m.check_data_len(0), Ok(()));
    assert_eq!(m.check_data_len(m.bi_size as usize), Ok(()));
    let len = data.len();
    assert_eq!(
        m.check_data_len(len).is_ok(),
        len == 0 || len as u64 == u64::from(m.bi_size)
    );

    // The op and flags a bio gets, and the request the client would build
    // from that bio, keep the op (a flush op comes back as a write with
    // preflush, which maps back to FLUSH only through the request path).
    let bio = m.rw.to_bio();
    assert_eq!(bio.sync, m.rw.flags.contains(OpFlags::SYNC));
    assert_eq!(bio.fua, m.rw.flags.contains(OpFlags::FUA));
    assert_eq!(bio.preflush, m.rw.op == Op::Flush);
    assert!(ReqOp::from_raw(bio.op.to_raw()).is_ok());
    let back = Rw::from_request(bio);
    if m.rw.op != Op::Flush {
        assert_eq!(back.op, m.rw.op);
    }
    if bio.fua || bio.preflush {
        assert!(back.flags.contains(OpFlags::FUA) && back.flags.contains(OpFlags::SYNC));
    }

    let mut buf = [0xa5u8; Io::SIZE + 1];
    assert_eq!(m.encode(&mut buf), Ok(Io::SIZE));
    assert_eq!(buf[Io::SIZE], 0xa5);
    assert_eq!(Io::decode(&buf), Ok(m));
    assert_eq!(Io::decode(&buf[..Io::MIN_SIZE]), Ok(Io { prio: 0, ..m }));
    assert_eq!(buf[..2], data[..2]);
    assert_eq!(buf[4..16], data[4..16]);
    assert_eq!(buf[20..24], data[20..24]);
    assert!(buf[26..Io::SIZE].iter().all(|&b| b == 0));
    assert_eq!(m.encode(&mut buf[..Io::SIZE - 1]), Err(Error::MsgSize));
});
