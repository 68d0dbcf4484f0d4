// SPDX-License-Identifier: GPL-2.0-or-later
//! `InfoReq::decode` (the server reading the client's path name): an
//! accepted name is NUL-free, at most `MAX_PATHNAME_LEN` bytes, without
//! `/` or `.`, and round-trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_proto::error::Error;
use rtrs_proto::msg::{check_pathname, InfoReq, MsgType, MAX_PATHNAME_LEN};

fuzz_target!(|data: &[u8]| {
    let got = InfoReq::decode(data);
    if data.len() < InfoReq::SIZE {
        assert_eq!(got, Err(Error::MsgSize));
        return;
    }
    if data[..2] != MsgType::InfoReq.as_u16().to_le_bytes() {
        assert_eq!(got, Err(Error::Inval));
        return;
    }
    let Ok(req) = got else {
        assert_eq!(got, Err(Error::Inval));
        return;
    };
    let name = req.pathname();
    assert!(name.len() <= MAX_PATHNAME_LEN);
    assert!(!name.iter().any(|&c| c == 0 || c == b'/' || c == b'.'));
    assert_eq!(check_pathname(name), Ok(()));
    assert_eq!(name, &data[2..2 + name.len()]);
    assert_eq!(data[2 + name.len()], 0);
    let again = InfoReq::new(name).expect("a decoded name is valid");
    assert_eq!(again.pathname(), name);
    let mut buf = [0xa5u8; InfoReq::SIZE + 2];
    assert_eq!(again.encode(&mut buf), Ok(InfoReq::SIZE));
    assert_eq!(buf[InfoReq::SIZE..], [0xa5; 2], "wrote past SIZE");
    assert!(buf[2 + name.len()..InfoReq::SIZE].iter().all(|&b| b == 0));
    assert_eq!(
        InfoReq::decode(&buf).map(|r| r.pathname() == name),
        Ok(true)
    );
    assert_eq!(
        req.encode(&mut buf[..InfoReq::SIZE - 1]),
        Err(Error::MsgSize)
    );
});
