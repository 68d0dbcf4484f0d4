// SPDX-License-Identifier: GPL-2.0-or-later
//! `kstrtouint` and `kstrtoint` against the kernel's own `lib/kstrtox.c`
//! (Linux 6.12, extracted by fuzz/build.rs), bases 0 to 16.
//!
//! Input: a base selector byte (its value modulo 17), then the text.
#![no_main]

use klib::kstr;
use libfuzzer_sys::fuzz_target;
use rtrs_fuzz::oracle;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, text)) = data.split_first() else {
        return;
    };
    let base = u32::from(sel % 17);
    assert_eq!(
        kstr::kstrtouint(text, base).map_err(|e| e.to_errno()),
        oracle::kstrtouint_c(text, base),
        "kstrtouint({text:?}, {base})"
    );
    assert_eq!(
        kstr::kstrtoint(text, base).map_err(|e| e.to_errno()),
        oracle::kstrtoint_c(text, base),
        "kstrtoint({text:?}, {base})"
    );
});
