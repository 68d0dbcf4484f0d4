// SPDX-License-Identifier: GPL-2.0-or-later
//! `OpenRsp::decode` (the client reading the device's limits): a zero
//! logical block size is refused, every field is at its C offset, and
//! the message round-trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::msg::{CachePolicy, MsgType, OpenRsp};
use rtrs_fuzz::le;

fuzz_target!(|data: &[u8]| {
    let got = OpenRsp::decode(data);
    if data.len() < OpenRsp::SIZE || data[..2] != MsgType::OpenRsp.to_wire().to_le_bytes() {
        assert_eq!(got, Err(Error::Inval));
        return;
    }
    let Ok(m) = got else {
        assert_eq!(got, Err(Error::Inval));
        assert_eq!(data[38..40], [0, 0]);
        return;
    };
    assert_ne!(m.logical_block_size, 0);
    assert_eq!(u64::from(m.device_id), le(&data[4..], 4));
    assert_eq!(m.nsectors, le(&data[8..], 8));
    assert_eq!(u64::from(m.max_hw_sectors), le(&data[16..], 4));
    assert_eq!(u64::from(m.discard_alignment), le(&data[32..], 4));
    assert_eq!(u64::from(m.secure_discard), le(&data[42..], 2));
    assert_eq!(m.cache_policy, CachePolicy::from_bits(data[45]));
    assert_eq!(
        CachePolicy::from_bits(m.cache_policy.bits()),
        m.cache_policy
    );
    assert_eq!(
        m.secure_erase_sectors(),
        if m.secure_discard != 0 {
            m.max_discard_sectors
        } else {
            0
        }
    );
    let mut buf = [0xa5u8; OpenRsp::SIZE + 1];
    assert_eq!(m.encode(&mut buf), Ok(OpenRsp::SIZE));
    assert_eq!(buf[OpenRsp::SIZE], 0xa5);
    assert_eq!(OpenRsp::decode(&buf), Ok(m));
    assert_eq!(buf[..2], data[..2]);
    assert_eq!(buf[4..44], data[4..44]);
    assert_eq!(buf[44], 0);
    assert_eq!(buf[45], data[45] & 3);
    assert!(buf[46..OpenRsp::SIZE].iter().all(|&b| b == 0));
    assert_eq!(m.encode(&mut buf[..OpenRsp::SIZE - 1]), Err(Error::MsgSize));
});
