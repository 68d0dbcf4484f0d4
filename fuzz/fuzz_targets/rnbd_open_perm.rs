// SPDX-License-Identifier: GPL-2.0-or-later
//! `OpenPerm` (the server's open-permission rule) over any sequence of
//! opens and closes: never more than two writers, at most one `rw`, and
//! an admitted open always counted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::access::OpenPerm;
use rnbd_proto::error::Error;
use rnbd_proto::msg::AccessMode;

fuzz_target!(|data: &[u8]| {
    let mut perm = OpenPerm::new();
    // The opens we admitted and still hold, by mode.
    let mut held = [0u32; 3];
    for &b in data {
        let Ok(mode) = AccessMode::from_wire(b % 4) else {
            continue;
        };
        let m = usize::from(mode.to_wire());
        if b & 0x80 == 0 {
            let writers = held[1] + held[2];
            let ok = match mode {
                AccessMode::Ro => true,
                AccessMode::Rw => writers == 0,
                AccessMode::Migration => writers < OpenPerm::MAX_WRITERS,
            };
            let got = perm.open(mode);
            assert_eq!(got.is_ok(), ok, "{mode:?} with {held:?}");
            if ok {
                held[m] += 1;
            } else {
                assert_eq!(got, Err(Error::Perm));
            }
        } else if held[m] > 0 {
            perm.close(mode);
            held[m] -= 1;
        }
        assert_eq!(perm.writers(), held[1] + held[2]);
        assert!(perm.writers() <= OpenPerm::MAX_WRITERS && held[1] <= 1);
    }
});
