// SPDX-License-Identifier: GPL-2.0-or-later
//! `InfoRsp::decode` and `InfoRsp::map_rbufs` (the client reading the
//! server's buffer list, `process_info_rsp()`): the descriptor view never
//! reaches past the buffer and a successful mapping covers every chunk
//! inside the announced regions.
//!
//! Input: chunk size (4 bytes LE), queue depth (2 bytes LE, at most 4096),
//! then the message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_fuzz::le;
use rtrs_proto::error::Error;
use rtrs_proto::imm::imm_fits;
use rtrs_proto::msg::{InfoRsp, MsgType, Rbuf, SgDesc};

fuzz_target!(|data: &[u8]| {
    if data.len() < 6 {
        return;
    }
    let chunk_size = le(data, 4) as u32;
    let queue_depth = (le(&data[4..], 2) as usize) % 4097;
    let msg = &data[6..];
    let got = InfoRsp::decode(msg);
    if msg.len() < InfoRsp::SIZE {
        assert_eq!(got, Err(Error::MsgSize));
        return;
    }
    if msg[..2] != MsgType::InfoRsp.as_u16().to_le_bytes() {
        assert_eq!(got, Err(Error::Inval));
        return;
    }
    let sg_cnt = usize::from(u16::from_le_bytes([msg[2], msg[3]]));
    let size = InfoRsp::wire_size(sg_cnt).unwrap();
    let Ok(rsp) = got else {
        assert_eq!(got, Err(Error::MsgSize));
        assert!(size > msg.len());
        return;
    };
    assert!(size <= msg.len(), "decoded view longer than the buffer");
    assert_eq!(rsp.descs.len(), sg_cnt);
    assert_eq!(rsp.descs.iter().len(), sg_cnt);
    assert_eq!(rsp.descs.is_empty(), sg_cnt == 0);
    for (i, d) in rsp.descs.iter().enumerate() {
        let off = InfoRsp::SIZE + i * SgDesc::SIZE;
        assert_eq!(SgDesc::decode(&msg[off..]), Ok(d));
        assert_eq!(rsp.descs.get(i), Some(d));
    }
    assert_eq!(rsp.descs.iter().count(), sg_cnt);
    assert_eq!(rsp.descs.get(sg_cnt), None);
    assert_eq!(rsp.descs.get(usize::MAX), None);

    // Re-encoding gives the same bytes, reserved ones zeroed.
    let mut buf = vec![0xa5u8; size + 3];
    assert_eq!(rsp.encode(&mut buf), Ok(size));
    assert_eq!(buf[size..], [0xa5; 3], "wrote past the message");
    assert_eq!(buf[..4], msg[..4]);
    assert_eq!(buf[4..8], [0; 4]);
    assert_eq!(buf[8..size], msg[8..size]);
    assert_eq!(InfoRsp::decode(&buf), Ok(rsp));
    assert_eq!(rsp.encode(&mut buf[..size - 1]), Err(Error::MsgSize));

    let mut rbufs = vec![Rbuf { addr: 1, rkey: 1 }; queue_depth];
    if rsp.map_rbufs(chunk_size, &mut rbufs).is_err() {
        return;
    }
    // Accepted: sg_cnt divides the queue depth, the IMM fits, every region
    // is a whole number of chunks and together they are exactly the chunks.
    assert!(sg_cnt != 0 && queue_depth.is_multiple_of(sg_cnt));
    assert!(imm_fits(sg_cnt as u32, chunk_size));
    let mut slots = rbufs.iter();
    let mut total = 0u64;
    for d in rsp.descs.iter() {
        assert!(d.len != 0 && chunk_size != 0 && d.len % chunk_size == 0);
        total += u64::from(d.len);
        for k in 0..u64::from(d.len / chunk_size) {
            let want = Rbuf {
                addr: d.addr.wrapping_add(k * u64::from(chunk_size)),
                rkey: d.key,
            };
            assert_eq!(slots.next(), Some(&want));
        }
    }
    assert_eq!(slots.next(), None);
    assert_eq!(total, u64::from(chunk_size) * queue_depth as u64);
});
