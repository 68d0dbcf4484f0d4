// SPDX-License-Identifier: GPL-2.0-or-later
//! `ConnReq::decode` (the server reading `rdma_connect()` private data):
//! what it accepts satisfies the checks of `rtrs_rdma_connect()` and
//! re-encodes to the same fields.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_proto::error::Error;
use rtrs_proto::msg::{ConnReq, MAGIC, MAX_CONN_NUM, PROTO_VER_MAJOR};

fuzz_target!(|data: &[u8]| {
    let got = ConnReq::decode(data);
    if data.len() < ConnReq::SIZE {
        assert_eq!(got, Err(Error::ConnReset));
        return;
    }
    let Ok(req) = got else {
        assert_eq!(got, Err(Error::ConnReset));
        return;
    };
    assert_eq!(data[2..4], MAGIC.to_le_bytes());
    assert_eq!(req.version >> 8, PROTO_VER_MAJOR);
    assert!(req.cid < req.cid_num && req.cid_num <= MAX_CONN_NUM);
    // Trailing bytes do not matter.
    assert_eq!(ConnReq::decode(&data[..ConnReq::SIZE]), Ok(req));
    let mut buf = [0xa5u8; ConnReq::SIZE + 8];
    assert_eq!(req.encode(&mut buf), Ok(ConnReq::SIZE));
    assert_eq!(buf[ConnReq::SIZE..], [0xa5; 8], "wrote past SIZE");
    // Same fields; CM bytes, reserved bits and bytes zero.
    assert_eq!(buf[..2], [0, 0]);
    assert_eq!(buf[2..44], data[2..44]);
    assert_eq!(buf[44], data[44] & 1);
    assert!(buf[45..ConnReq::SIZE].iter().all(|&b| b == 0));
    assert_eq!(ConnReq::decode(&buf), Ok(req));
    assert_eq!(
        req.encode(&mut buf[..ConnReq::SIZE - 1]),
        Err(Error::MsgSize)
    );
});
