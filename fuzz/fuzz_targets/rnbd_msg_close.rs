// SPDX-License-Identifier: GPL-2.0-or-later
//! `Close::decode`: round-trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::msg::{Close, MsgType};

fuzz_target!(|data: &[u8]| {
    let got = Close::decode(data);
    if data.len() < Close::SIZE || data[..2] != MsgType::Close.to_wire().to_le_bytes() {
        assert_eq!(got, Err(Error::Inval));
        return;
    }
    let m = got.expect("a Close of the right size and type decodes");
    assert_eq!(m.device_id.to_le_bytes(), data[4..8]);
    let mut buf = [0xa5u8; Close::SIZE + 1];
    assert_eq!(m.encode(&mut buf), Ok(Close::SIZE));
    assert_eq!(buf[..2], data[..2]);
    assert_eq!(buf[2..4], [0, 0]);
    assert_eq!(buf[4..], [data[4], data[5], data[6], data[7], 0xa5]);
    assert_eq!(m.encode(&mut buf[..Close::SIZE - 1]), Err(Error::MsgSize));
});
