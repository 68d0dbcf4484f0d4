// SPDX-License-Identifier: GPL-2.0-or-later
//! `kstrtouint`, `kstrtoint`, `sysfs_streq` and `c_str` against reference
//! models written from `lib/kstrtox.c` and `lib/string.c`.
//!
//! Input: a base selector byte (0, 8, 10, 16, 2, or the raw byte for a
//! no-panic run), then the text; `sysfs_streq` compares the two halves of
//! the text split at the first 0xff.
#![no_main]

use klib::kstr;
use libfuzzer_sys::fuzz_target;
use rtrs_fuzz::{c_str, fields, ref_kstrtoint, ref_kstrtouint, NumErr};
use rtrs_proto::error::Error;

fn num_err(e: Error) -> NumErr {
    match e {
        Error::Inval => NumErr::Inval,
        Error::Range => NumErr::Range,
        other => panic!("kstrto* returned {other:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, text)) = data.split_first() else {
        return;
    };
    let base = match sel % 8 {
        0 | 1 => 0,
        2 => 10,
        3 => 16,
        4 => 8,
        5 => 2,
        6 => u32::from(sel >> 3) % 17,
        _ => u32::from(sel) << 24,
    };
    let u = kstr::kstrtouint(text, base).map_err(num_err);
    let i = kstr::kstrtoint(text, base).map_err(num_err);
    if base == 0 || (2..=16).contains(&base) {
        assert_eq!(
            u,
            ref_kstrtouint(text, base),
            "kstrtouint({text:?}, {base})"
        );
        assert_eq!(i, ref_kstrtoint(text, base), "kstrtoint({text:?}, {base})");
    }
    // Decimal without sign or prefix is what std parses too.
    if base == 10 {
        let s = c_str(text);
        let s = s.strip_suffix(b"\n").unwrap_or(s);
        if !s.is_empty() && s.iter().all(u8::is_ascii_digit) {
            let std: Option<u32> = core::str::from_utf8(s).unwrap().parse().ok();
            assert_eq!(u.ok(), std);
        }
    }

    assert_eq!(kstr::c_str(text), c_str(text));
    let [a, b] = fields::<2>(text);
    let eq = kstr::sysfs_streq(a, b);
    assert_eq!(eq, kstr::sysfs_streq(b, a));
    assert!(kstr::sysfs_streq(a, a));
    let (ca, cb) = (c_str(a), c_str(b));
    let want = ca == cb || ca.strip_suffix(b"\n") == Some(cb) || cb.strip_suffix(b"\n") == Some(ca);
    assert_eq!(eq, want);
});
