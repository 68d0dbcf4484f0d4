// SPDX-License-Identifier: GPL-2.0-or-later
//! `ReadRsp::check` (the client matching a server's answer against the
//! READs it has in flight): the first 12 bytes are the answer, the rest
//! what the client has (queue depth, whether the server sends new keys,
//! the key a SEND_WITH_INV invalidated, the slot). A READ completes only
//! if it is in range, waits there, carries a new key exactly when keys
//! are new, and the only key invalidated is its own.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_proto::ext::{ReadRsp, ReadRspFault, Slot, READ_RSP_NEW_RKEY_F};

fuzz_target!(|data: &[u8]| {
    let Some((msg, rest)) = data.split_at_checked(ReadRsp::SIZE) else {
        return;
    };
    let Ok(rsp) = ReadRsp::decode(msg) else {
        return;
    };
    let mut b = [0u8; 12];
    b[..rest.len().min(12)].copy_from_slice(&rest[..rest.len().min(12)]);
    let qd = u32::from(u16::from_le_bytes([b[0], b[1]]));
    let new_rkey = b[2] & 1 != 0;
    let key = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    let inval = (b[2] & 2 != 0).then_some(u32::from_le_bytes([b[8], b[9], b[10], b[11]]));
    let slot = match b[3] % 4 {
        0 => Slot::Idle,
        1 => Slot::Write,
        2 => Slot::Read { key: None },
        _ => Slot::Read { key: Some(key) },
    };
    let mut looked = false;
    let got = rsp.check(qd, new_rkey, inval, |id| {
        assert_eq!(id, rsp.msg_id);
        looked = true;
        slot
    });
    // The slot is looked at only for a request in range, of an answer
    // whose key is as the server's keys are.
    let has_key = rsp.flags & READ_RSP_NEW_RKEY_F != 0;
    assert_eq!(looked, u32::from(rsp.msg_id) < qd && has_key == new_rkey);
    match got {
        Ok(w_inval) => {
            assert!(u32::from(rsp.msg_id) < qd);
            assert_eq!(has_key, new_rkey);
            assert!(matches!(slot, Slot::Read { .. }));
            assert_eq!(w_inval, inval.is_some());
            if let Some(i) = inval {
                assert_eq!(slot, Slot::Read { key: Some(i) });
            }
        }
        Err(ReadRspFault::NoSuchRequest) => assert!(u32::from(rsp.msg_id) >= qd),
        Err(ReadRspFault::Rkey) => assert_ne!(has_key, new_rkey),
        Err(ReadRspFault::NotInFlight) => assert_eq!(slot, Slot::Idle),
        Err(ReadRspFault::NotARead) => assert_eq!(slot, Slot::Write),
        Err(ReadRspFault::Inval) => assert!(inval.is_some()),
    }
});
