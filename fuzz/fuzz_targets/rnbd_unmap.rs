// SPDX-License-Identifier: GPL-2.0-or-later
//! `UnmapMode::parse` (a write to `unmap_device`): `normal` or `force`,
//! surrounding whitespace ignored.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::options::UnmapMode;
use rtrs_fuzz::{c_str, strim};

fuzz_target!(|data: &[u8]| {
    let got = UnmapMode::parse(data);
    let want = match strim(c_str(data)) {
        b"normal" => Ok(UnmapMode::Normal),
        b"force" => Ok(UnmapMode::Force),
        _ => Err(Error::Inval),
    };
    assert_eq!(got, want, "{data:?}");
    if let Ok(m) = got {
        assert_eq!(UnmapMode::parse(m.as_str().as_bytes()), Ok(m));
        assert_eq!(m.is_force(), m == UnmapMode::Force);
    }
});
