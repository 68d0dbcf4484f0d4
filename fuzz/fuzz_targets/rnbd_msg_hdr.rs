// SPDX-License-Identifier: GPL-2.0-or-later
//! `MsgHdr::decode` and `MsgType::from_wire`: the type of any RNBD message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::msg::{MsgHdr, MsgType};
use rtrs_fuzz::le;

fuzz_target!(|data: &[u8]| {
    let got = MsgHdr::decode(data);
    if data.len() < MsgHdr::SIZE {
        assert_eq!(got, Err(Error::Inval));
        return;
    }
    let ty = le(data, 2) as u16;
    assert_eq!(got.map(|h| h.msg_type), MsgType::from_wire(ty));
    if let Ok(h) = got {
        assert_eq!(h.msg_type.to_wire(), ty);
        let mut buf = [0xa5u8; MsgHdr::SIZE + 1];
        assert_eq!(h.encode(&mut buf), Ok(MsgHdr::SIZE));
        assert_eq!(buf[..2], data[..2]);
        assert_eq!(buf[2..], [0, 0, 0xa5]);
        assert_eq!(h.encode(&mut buf[..MsgHdr::SIZE - 1]), Err(Error::MsgSize));
    }
});
