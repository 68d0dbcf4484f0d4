// SPDX-License-Identifier: GPL-2.0-or-later
//! The RTRS client's sysfs stores against the kernel's own code:
//! `MpPolicy::parse` and `parse_max_reconnect_attempts` accept what
//! `mpath_policy_store()` and `max_reconnect_attempts_store()` of Linux
//! 6.12 accept (extracted by fuzz/build.rs), with the same value or errno.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_fuzz::oracle;
use rtrs_proto::path_sel::MpPolicy;
use rtrs_proto::reconnect::parse_max_reconnect_attempts;

fuzz_target!(|data: &[u8]| {
    assert_eq!(
        MpPolicy::parse(data)
            .map(MpPolicy::id)
            .map_err(|e| e.to_errno()),
        oracle::mpath_policy_store(data),
        "mpath_policy {data:?}"
    );
    assert_eq!(
        parse_max_reconnect_attempts(data).map_err(|e| e.to_errno()),
        oracle::max_reconnect_attempts_store(data),
        "max_reconnect_attempts {data:?}"
    );
});
