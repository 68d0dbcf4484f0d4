// SPDX-License-Identifier: GPL-2.0-or-later
//! `parse_max_reconnect_attempts` (a write to sysfs
//! `max_reconnect_attempts`): `kstrtoint(buf, 10)` in -1..=9999.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_fuzz::{ref_kstrtoint, NumErr};
use rtrs_proto::error::Error;
use rtrs_proto::reconnect::{
    parse_max_reconnect_attempts, reconnect_exhausted, MAX_MAX_RECONN_ATT, MIN_MAX_RECONN_ATT,
};

fuzz_target!(|data: &[u8]| {
    let got = parse_max_reconnect_attempts(data);
    match ref_kstrtoint(data, 10) {
        Ok(v) if (MIN_MAX_RECONN_ATT..=MAX_MAX_RECONN_ATT).contains(&v) => {
            assert_eq!(got, Ok(v));
            // -1 retries forever, 0 never, n after n attempts.
            assert_eq!(reconnect_exhausted(u32::MAX - 1, v), v >= 0);
            assert_eq!(reconnect_exhausted(0, v), v == 0);
        }
        Ok(_) => assert_eq!(got, Err(Error::Inval)),
        Err(NumErr::Inval) => assert_eq!(got, Err(Error::Inval)),
        Err(NumErr::Range) => assert_eq!(got, Err(Error::Range)),
    }
});
