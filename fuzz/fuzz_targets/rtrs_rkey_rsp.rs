// SPDX-License-Identifier: GPL-2.0-or-later
//! `RkeyRsp::decode` (the client reading a refreshed rkey): accepted
//! messages round-trip byte for byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_proto::error::Error;
use rtrs_proto::msg::{MsgType, RkeyRsp};

fuzz_target!(|data: &[u8]| {
    let got = RkeyRsp::decode(data);
    if data.len() < RkeyRsp::SIZE {
        assert_eq!(got, Err(Error::MsgSize));
        return;
    }
    let Ok(msg) = got else {
        assert_eq!(got, Err(Error::Inval));
        assert_ne!(data[..2], MsgType::RkeyRsp.as_u16().to_le_bytes());
        return;
    };
    let mut buf = [0xa5u8; RkeyRsp::SIZE + 1];
    assert_eq!(msg.encode(&mut buf), Ok(RkeyRsp::SIZE));
    assert_eq!(buf[..RkeyRsp::SIZE], data[..RkeyRsp::SIZE]);
    assert_eq!(buf[RkeyRsp::SIZE], 0xa5);
    assert_eq!(
        msg.encode(&mut buf[..RkeyRsp::SIZE - 1]),
        Err(Error::MsgSize)
    );
});
