// SPDX-License-Identifier: GPL-2.0-or-later
//! `parse_resize` (a write to `resize`): `kstrtoul(buf, 0)`, checked
//! against the reference `kstrtoull`, the kernel's own (fuzz/oracle) and,
//! for plain decimal, std.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::options::parse_resize;
use rtrs_fuzz::{c_str, oracle, ref_kstrtoull, NumErr};

fuzz_target!(|data: &[u8]| {
    let got = parse_resize(data);
    let want = ref_kstrtoull(c_str(data), 0).map_err(|e| match e {
        NumErr::Inval => Error::Inval,
        NumErr::Range => Error::Range,
    });
    assert_eq!(got, want, "{data:?}");
    assert_eq!(got.map_err(|e| e.to_errno()), oracle::kstrtoull_c(data, 0));
    let s = c_str(data);
    let s = s.strip_suffix(b"\n").unwrap_or(s);
    if !s.is_empty() && s[0] != b'0' && s.iter().all(u8::is_ascii_digit) {
        let std: Result<u64, _> = core::str::from_utf8(s).unwrap().parse();
        assert_eq!(got.ok(), std.ok());
    }
});
