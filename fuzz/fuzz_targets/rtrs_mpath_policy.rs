// SPDX-License-Identifier: GPL-2.0-or-later
//! `MpPolicy::parse` (a write to sysfs `mpath_policy`): a policy parsed
//! from a number is that id, one parsed from a name starts with it; each
//! policy's own id, name and abbreviation parse back to it.
#![no_main]

use klib::kstr::kstrtoint;
use libfuzzer_sys::fuzz_target;
use rtrs_fuzz::{c_str, show};
use rtrs_proto::error::Error;
use rtrs_proto::path_sel::MpPolicy;

fuzz_target!(|data: &[u8]| {
    let got = MpPolicy::parse(data);
    let Ok(p) = got else {
        assert_eq!(got, Err(Error::Inval));
        return;
    };
    if let Some(by_id) = kstrtoint(data, 10).ok().and_then(MpPolicy::from_id) {
        assert_eq!(p, by_id);
    } else {
        let s = c_str(data);
        let s = s.strip_suffix(b"\n").unwrap_or(s);
        let lower = s.to_ascii_lowercase();
        assert!(
            c_str(data)
                .to_ascii_lowercase()
                .starts_with(p.name().as_bytes())
                || lower == p.abbrev().to_ascii_lowercase().as_bytes(),
            "{data:?} parsed as {p:?}"
        );
    }
    for text in [
        p.name().to_string(),
        format!("{}\n", p.name()),
        p.abbrev().to_string(),
        p.abbrev().to_ascii_lowercase(),
        p.id().to_string(),
        format!("{}\n", p.id()),
    ] {
        assert_eq!(MpPolicy::parse(text.as_bytes()), Ok(p), "{text:?}");
    }
    assert_eq!(MpPolicy::from_id(p.id()), Some(p));
    assert!(show(&p).starts_with(p.name()));
});
