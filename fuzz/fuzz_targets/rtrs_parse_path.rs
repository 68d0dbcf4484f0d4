// SPDX-License-Identifier: GPL-2.0-or-later
//! `parse_path` (`rtrs_addr_to_sockaddr()`, the RNBD `path=` option):
//! `[src,]dst` or `[src@]dst`. Each end is what `parse_addr` makes of it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_fuzz::addr::{check_path, ifindex};
use rtrs_fuzz::c_str;
use rtrs_proto::addr::{parse_addr, parse_path};
use rtrs_proto::error::Error;

fuzz_target!(|data: &[u8]| {
    let got = parse_path(data, 4321, ifindex);
    let s = c_str(data);
    let sep = s
        .iter()
        .position(|&c| c == b',')
        .or_else(|| s.iter().position(|&c| c == b'@'));
    match sep {
        None => {
            let dst = parse_addr(s, 4321, ifindex);
            assert_eq!(got.map(|p| (p.src, p.dst)), dst.map(|d| (None, d)));
        }
        Some(i) => {
            let src = parse_addr(&s[..i], 0, ifindex);
            let dst = parse_addr(&s[i + 1..], 4321, ifindex);
            match (src, dst) {
                (Err(_), _) => assert_eq!(got, Err(Error::Inval)),
                (Ok(src), Err(e)) => {
                    let _ = src;
                    assert_eq!(got, Err(e));
                }
                (Ok(src), Ok(dst)) => {
                    let p = got.expect("both ends parse");
                    assert_eq!((p.src, p.dst), (Some(src), dst));
                }
            }
        }
    }
    if let Ok(p) = got {
        check_path(&p, 4321);
    }
});
