// SPDX-License-Identifier: GPL-2.0-or-later
//! `Open::decode` (the server reading a client's open): the device name is
//! the NUL-terminated prefix of its field, the access mode a known one, and
//! the message round-trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::msg::{AccessMode, MsgType, Open, NAME_MAX};

fuzz_target!(|data: &[u8]| {
    let got = Open::decode(data);
    if data.len() < Open::SIZE || data[..2] != MsgType::Open.to_wire().to_le_bytes() {
        assert_eq!(got, Err(Error::Inval));
        return;
    }
    let Ok(m) = got else {
        assert_eq!(got, Err(Error::Inval));
        assert!(AccessMode::from_wire(data[4]).is_err() || !data[6..6 + NAME_MAX].contains(&0));
        return;
    };
    assert_eq!(m.access_mode, AccessMode::from_wire(data[4]).unwrap());
    let n = m.dev_name.len();
    assert!(n < NAME_MAX);
    assert_eq!(m.dev_name, &data[6..6 + n]);
    assert_eq!(data[6 + n], 0);
    assert!(!m.dev_name.contains(&0));
    assert_eq!(
        AccessMode::from_name(m.access_mode.as_str().as_bytes()),
        Ok(m.access_mode)
    );
    let mut buf = [0xa5u8; Open::SIZE + 1];
    assert_eq!(m.encode(&mut buf), Ok(Open::SIZE));
    assert_eq!(buf[Open::SIZE], 0xa5);
    assert_eq!(Open::decode(&buf), Ok(m));
    assert_eq!(buf[..2], data[..2]);
    assert_eq!(buf[4], data[4]);
    assert_eq!(buf[6..7 + n], data[6..7 + n]);
    assert!(buf[7 + n..Open::SIZE].iter().all(|&b| b == 0));
    assert_eq!(m.encode(&mut buf[..Open::SIZE - 1]), Err(Error::MsgSize));
});
