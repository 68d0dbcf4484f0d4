// SPDX-License-Identifier: GPL-2.0-or-later
//! decode(encode(x)) == x for every RNBD message built from arbitrary
//! fields, encoded into a buffer of arbitrary size.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::msg::*;

#[derive(Arbitrary, Debug)]
enum Msg {
    Hdr(u8),
    SessInfo(u8),
    SessInfoRsp(u8),
    Open(u8, Vec<u8>),
    Close(u32),
    OpenRsp {
        device_id: u32,
        nsectors: u64,
        max_hw_sectors: u32,
        max_write_zeroes_sectors: u32,
        max_discard_sectors: u32,
        discard_granularity: u32,
        discard_alignment: u32,
        physical_block_size: u16,
        logical_block_size: u16,
        max_segments: u16,
        secure_discard: u16,
        cache_policy: u8,
    },
    Io {
        device_id: u32,
        sector: u64,
        op: u8,
        sync: bool,
        fua: bool,
        bi_size: u32,
        prio: u16,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    msg: Msg,
    buf_len: u16,
}

fn encode(
    len: usize,
    size: usize,
    encode: impl FnOnce(&mut [u8]) -> Result<usize, Error>,
) -> Option<Vec<u8>> {
    let mut buf = vec![0xa5u8; len];
    let got = encode(&mut buf);
    if len < size {
        assert_eq!(got, Err(Error::MsgSize));
        assert!(buf.iter().all(|&b| b == 0xa5), "short encode wrote");
        return None;
    }
    assert_eq!(got, Ok(size));
    assert!(
        buf[size..].iter().all(|&b| b == 0xa5),
        "wrote past the message"
    );
    buf.truncate(size);
    Some(buf)
}

const MODES: [AccessMode; 3] = [AccessMode::Ro, AccessMode::Rw, AccessMode::Migration];
const OPS: [Op; 6] = [
    Op::Read,
    Op::Write,
    Op::Flush,
    Op::Discard,
    Op::SecureErase,
    Op::WriteZeroes,
];

fuzz_target!(|input: Input| {
    let len = usize::from(input.buf_len) % 600;
    match input.msg {
        Msg::Hdr(t) => {
            let Ok(msg_type) = MsgType::from_wire(u16::from(t)) else {
                assert!(t > 5);
                return;
            };
            let h = MsgHdr { msg_type };
            if let Some(b) = encode(len, MsgHdr::SIZE, |b| h.encode(b)) {
                assert_eq!(MsgHdr::decode(&b), Ok(h));
            }
        }
        Msg::SessInfo(ver) => {
            let m = SessInfo { ver };
            if let Some(b) = encode(len, SessInfo::SIZE, |b| m.encode(b)) {
                assert_eq!(SessInfo::decode(&b), Ok(m));
                assert_eq!(SessInfoRsp::decode(&b), Err(Error::Inval));
            }
        }
        Msg::SessInfoRsp(ver) => {
            let m = SessInfoRsp { ver };
            if let Some(b) = encode(len, SessInfoRsp::SIZE, |b| m.encode(b)) {
                assert_eq!(SessInfoRsp::decode(&b), Ok(m));
                assert_eq!(SessInfo::decode(&b), Err(Error::Inval));
            }
        }
        Msg::Open(mode, name) => {
            let m = Open {
                access_mode: MODES[usize::from(mode) % 3],
                dev_name: &name,
            };
            if name.len() >= NAME_MAX {
                assert_eq!(m.encode(&mut vec![0u8; len]), Err(Error::NameTooLong));
                return;
            }
            if name.contains(&0) {
                assert_eq!(m.encode(&mut vec![0u8; len]), Err(Error::Inval));
                return;
            }
            if let Some(b) = encode(len, Open::SIZE, |b| m.encode(b)) {
                assert_eq!(Open::decode(&b), Ok(m));
            }
        }
        Msg::Close(device_id) => {
            let m = Close { device_id };
            if let Some(b) = encode(len, Close::SIZE, |b| m.encode(b)) {
                assert_eq!(Close::decode(&b), Ok(m));
            }
        }
        Msg::OpenRsp {
            device_id,
            nsectors,
            max_hw_sectors,
            max_write_zeroes_sectors,
            max_discard_sectors,
            discard_granularity,
            discard_alignment,
            physical_block_size,
            logical_block_size,
            max_segments,
            secure_discard,
            cache_policy,
        } => {
            let m = OpenRsp {
                device_id,
                nsectors,
                max_hw_sectors,
                max_write_zeroes_sectors,
                max_discard_sectors,
                discard_granularity,
                discard_alignment,
                physical_block_size,
                logical_block_size,
                max_segments,
                secure_discard,
                cache_policy: CachePolicy::from_bits(cache_policy),
            };
            if let Some(b) = encode(len, OpenRsp::SIZE, |b| m.encode(b)) {
                let want = if logical_block_size == 0 {
                    Err(Error::Inval)
                } else {
                    Ok(m)
                };
                assert_eq!(OpenRsp::decode(&b), want);
            }
        }
        Msg::Io {
            device_id,
            sector,
            op,
            sync,
            fua,
            bi_size,
            prio,
        } => {
            let mut flags = OpFlags::NONE;
            if sync {
                flags = flags | OpFlags::SYNC;
            }
            if fua {
                flags = flags | OpFlags::FUA;
            }
            let rw = Rw {
                op: OPS[usize::from(op) % OPS.len()],
                flags,
            };
            assert_eq!(Rw::from_wire(rw.to_wire()), Ok(rw));
            let m = Io {
                device_id,
                sector,
                rw,
                bi_size,
                prio,
            };
            if let Some(b) = encode(len, Io::SIZE, |b| m.encode(b)) {
                assert_eq!(Io::decode(&b), Ok(m));
                assert_eq!(m.check_data_len(bi_size as usize), Ok(()));
            }
        }
    }
});
