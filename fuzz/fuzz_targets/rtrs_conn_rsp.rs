// SPDX-License-Identifier: GPL-2.0-or-later
//! `ConnRsp::decode` and `ConnRsp::reject_errno` (the client reading the
//! private data of `rdma_accept()` / `rdma_reject()`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_proto::error::Error;
use rtrs_proto::msg::{ConnRsp, MAGIC, MSG_NEW_RKEY_F, PROTO_VER_MAJOR};

fuzz_target!(|data: &[u8]| {
    let errno = ConnRsp::reject_errno(data);
    if data.len() < ConnRsp::SIZE {
        assert_eq!(errno, Error::ConnReset.to_errno());
        assert_eq!(ConnRsp::decode(data), Err(Error::ConnReset));
        return;
    }
    assert_eq!(errno, i32::from(i16::from_le_bytes([data[4], data[5]])));
    let Ok(rsp) = ConnRsp::decode(data) else {
        assert!(data[..2] != MAGIC.to_le_bytes() || data[3] != PROTO_VER_MAJOR as u8);
        return;
    };
    assert_eq!(data[..2], MAGIC.to_le_bytes());
    assert_eq!(rsp.version >> 8, PROTO_VER_MAJOR);
    assert_eq!(i32::from(rsp.errno), errno);
    assert_eq!(rsp.check_accepted().is_ok(), rsp.errno == 0);
    assert_eq!(rsp.new_rkey(), rsp.flags & MSG_NEW_RKEY_F != 0);
    assert_eq!(
        u64::from(rsp.chunk_size()),
        (u64::from(rsp.max_io_size) + u64::from(rsp.max_hdr_size)) & 0xffff_ffff
    );
    let mut buf = [0xa5u8; ConnRsp::SIZE + 4];
    assert_eq!(rsp.encode(&mut buf), Ok(ConnRsp::SIZE));
    assert_eq!(buf[ConnRsp::SIZE..], [0xa5; 4], "wrote past SIZE");
    assert_eq!(buf[..20], data[..20]);
    assert!(buf[20..ConnRsp::SIZE].iter().all(|&b| b == 0));
    assert_eq!(ConnRsp::decode(&buf[..ConnRsp::SIZE]), Ok(rsp));
    assert_eq!(
        rsp.encode(&mut buf[..ConnRsp::SIZE - 1]),
        Err(Error::MsgSize)
    );
});
