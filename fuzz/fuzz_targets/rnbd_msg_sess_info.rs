// SPDX-License-Identifier: GPL-2.0-or-later
//! `SessInfo::decode` and `SessInfoRsp::decode` (the version handshake),
//! and `negotiate_version`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::msg::{negotiate_version, MsgType, SessInfo, SessInfoRsp, PROTO_VER_MAJOR};

fuzz_target!(|data: &[u8]| {
    let info = SessInfo::decode(data);
    let rsp = SessInfoRsp::decode(data);
    if data.len() < SessInfo::SIZE {
        assert_eq!(info, Err(Error::Inval));
        assert_eq!(rsp, Err(Error::Inval));
        return;
    }
    assert!(info.is_err() || rsp.is_err());
    let ty = MsgType::from_wire(u16::from_le_bytes([data[0], data[1]]));
    assert_eq!(info.is_ok(), ty == Ok(MsgType::SessInfo));
    assert_eq!(rsp.is_ok(), ty == Ok(MsgType::SessInfoRsp));
    let mut buf = [0xa5u8; SessInfo::SIZE + 1];
    if let Ok(m) = info {
        assert_eq!(m.ver, data[4]);
        assert_eq!(m.encode(&mut buf), Ok(SessInfo::SIZE));
        assert_eq!(SessInfo::decode(&buf), Ok(m));
        assert_eq!(buf[..2], data[..2]);
        assert!(buf[5..SessInfo::SIZE].iter().all(|&b| b == 0));
        assert_eq!(buf[SessInfo::SIZE], 0xa5);
        let v = negotiate_version(m.ver);
        assert!(v <= PROTO_VER_MAJOR && v <= m.ver);
    }
    if let Ok(m) = rsp {
        assert_eq!(m.ver, data[4]);
        assert_eq!(m.encode(&mut buf), Ok(SessInfoRsp::SIZE));
        assert_eq!(SessInfoRsp::decode(&buf), Ok(m));
        assert_eq!(buf[..2], data[..2]);
        assert_eq!(
            m.encode(&mut buf[..SessInfoRsp::SIZE - 1]),
            Err(Error::MsgSize)
        );
    }
});
