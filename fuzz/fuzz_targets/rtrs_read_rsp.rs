// SPDX-License-Identifier: GPL-2.0-or-later
//! `ReadRsp::decode` (the client reading the answer to a READ on a 2.1
//! path, from a server it cannot trust): only a message of exactly its
//! size, of its type, with an errno, known flags and a key only with its
//! flag is taken, and what is taken round-trips byte for byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_proto::error::Error;
use rtrs_proto::ext::{ReadRsp, MSG_READ_RSP, READ_RSP_NEW_RKEY_F};

fuzz_target!(|data: &[u8]| {
    let got = ReadRsp::decode(data);
    if data.len() != ReadRsp::SIZE {
        assert_eq!(got, Err(Error::MsgSize));
        return;
    }
    let Ok(msg) = got else {
        assert_eq!(got, Err(Error::Inval));
        return;
    };
    assert_eq!(data[..2], MSG_READ_RSP.to_le_bytes());
    assert!((-4095..=0).contains(&msg.errno));
    assert_eq!(msg.flags & !READ_RSP_NEW_RKEY_F, 0);
    assert!(msg.flags & READ_RSP_NEW_RKEY_F != 0 || msg.rkey == 0);
    let mut buf = [0xa5u8; ReadRsp::SIZE + 1];
    assert_eq!(msg.encode(&mut buf), Ok(ReadRsp::SIZE));
    assert_eq!(buf[..ReadRsp::SIZE], data[..]);
    assert_eq!(buf[ReadRsp::SIZE], 0xa5);
    assert_eq!(
        msg.encode(&mut buf[..ReadRsp::SIZE - 1]),
        Err(Error::MsgSize)
    );
});
