// SPDX-License-Identifier: GPL-2.0-or-later
//! `parse_add_path` (a write to sysfs `add_path`): the path before the
//! first newline, every error `EINVAL`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_fuzz::addr::{check_path, ifindex};
use rtrs_proto::addr::{parse_add_path, parse_path};
use rtrs_proto::error::Error;

fuzz_target!(|data: &[u8]| {
    let got = parse_add_path(data, 1234, ifindex);
    let line = data.split(|&c| c == b'\n').next().unwrap();
    match parse_path(line, 1234, ifindex) {
        Ok(p) => {
            assert_eq!(got, Ok(p));
            check_path(&p, 1234);
        }
        Err(_) => assert_eq!(got, Err(Error::Inval)),
    }
});
