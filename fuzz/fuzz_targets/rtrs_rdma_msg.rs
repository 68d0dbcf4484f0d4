// SPDX-License-Identifier: GPL-2.0-or-later
//! The server reading an IO request: `MsgType::peek`, `RdmaMsg::decode`,
//! `RdmaWrite::decode`, `RdmaRead::decode`, `SgDesc::decode` and the
//! `data_len` arithmetic. The variants agree with each other, a read's
//! descriptor lies inside the buffer, accepted messages round-trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_fuzz::le;
use rtrs_proto::error::Error;
use rtrs_proto::msg::{MsgType, RdmaMsg, RdmaRead, RdmaWrite, SgDesc, MSG_NEED_INVAL_F};

fuzz_target!(|data: &[u8]| {
    let peek = MsgType::peek(data);
    if data.len() < 2 {
        assert_eq!(peek, Err(Error::MsgSize));
    } else {
        assert_eq!(peek.ok(), MsgType::from_u16(le(data, 2) as u16));
    }
    match SgDesc::decode(data) {
        Ok(d) => {
            let mut b = [0u8; SgDesc::SIZE];
            assert_eq!(d.encode(&mut b), Ok(SgDesc::SIZE));
            assert_eq!(b[..], data[..SgDesc::SIZE]);
        }
        Err(e) => assert!(e == Error::MsgSize && data.len() < SgDesc::SIZE),
    }

    let off = data.len() as u32;
    let msg = RdmaMsg::decode(data);
    let write = RdmaWrite::decode(data);
    let read = RdmaRead::decode(data);
    match msg {
        Ok(RdmaMsg::Write(w)) => {
            assert_eq!(write, Ok(w));
            assert!(read.is_err());
            assert!(data.len() >= RdmaWrite::SIZE);
            assert_eq!(w.usr_len, le(&data[2..], 2) as u16);
            assert_eq!(w.data_len(off).ok(), off.checked_sub(u32::from(w.usr_len)));
            let mut b = [0xa5u8; RdmaWrite::SIZE + 1];
            assert_eq!(w.encode(&mut b), Ok(RdmaWrite::SIZE));
            assert_eq!(b[..RdmaWrite::SIZE], data[..RdmaWrite::SIZE]);
            assert_eq!(b[RdmaWrite::SIZE], 0xa5);
            assert_eq!(w.encode(&mut b[..RdmaWrite::SIZE - 1]), Err(Error::MsgSize));
        }
        Ok(RdmaMsg::Read(r)) => {
            assert_eq!(read, Ok(r));
            assert!(write.is_err());
            let size = RdmaRead::wire_size(r.descs.len()).unwrap();
            assert!(r.descs.len() <= RdmaRead::MAX_SG_CNT);
            assert!(size <= data.len(), "descriptor past the buffer");
            assert_eq!(r.descs.len(), le(&data[6..], 2) as usize);
            assert_eq!(r.need_inval(), r.flags & MSG_NEED_INVAL_F != 0);
            assert_eq!(r.data_len(off).ok(), off.checked_sub(u32::from(r.usr_len)));
            if let Some(d) = r.descs.get(0) {
                assert_eq!(SgDesc::decode(&data[RdmaRead::SIZE..]), Ok(d));
            }
            let mut b = vec![0xa5u8; size + 1];
            assert_eq!(r.encode(&mut b), Ok(size));
            assert_eq!(b[..size], data[..size]);
            assert_eq!(b[size], 0xa5);
            assert_eq!(RdmaRead::decode(&b), Ok(r));
            assert_eq!(r.encode(&mut b[..size - 1]), Err(Error::MsgSize));
        }
        Err(e) => {
            // Neither decoder accepts it under its own type.
            match peek {
                Ok(MsgType::Write) => assert_eq!(write, Err(e)),
                Ok(MsgType::Read) => assert_eq!(read, Err(e)),
                _ => {
                    assert!(write.is_err() && read.is_err());
                }
            }
        }
    }
});
