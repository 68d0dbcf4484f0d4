// SPDX-License-Identifier: GPL-2.0-or-later
//! `parse_remap` (a write to `remap_device`): `1`, surrounding whitespace
//! ignored.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::options::parse_remap;
use rtrs_fuzz::{c_str, strim};

fuzz_target!(|data: &[u8]| {
    let want = if strim(c_str(data)) == b"1" {
        Ok(())
    } else {
        Err(Error::Inval)
    };
    assert_eq!(parse_remap(data), want, "{data:?}");
});
