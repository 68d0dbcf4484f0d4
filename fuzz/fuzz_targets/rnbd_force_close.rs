// SPDX-License-Identifier: GPL-2.0-or-later
//! `parse_force_close` (a write to the server's `force_close`): `1` or
//! `1\n`, nothing else.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::options::parse_force_close;
use rtrs_fuzz::c_str;

fuzz_target!(|data: &[u8]| {
    let want = match c_str(data) {
        b"1" | b"1\n" => Ok(()),
        _ => Err(Error::Inval),
    };
    assert_eq!(parse_force_close(data), want, "{data:?}");
});
