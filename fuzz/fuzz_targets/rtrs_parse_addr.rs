// SPDX-License-Identifier: GPL-2.0-or-later
//! `parse_addr` (`rtrs_str_to_sockaddr()`): `ip:` / `gid:` addresses.
//! Accepted addresses print and parse back; whatever std's strict
//! parsers accept, the kernel's lenient ones accept with the same value.
#![no_main]

use core::net::{Ipv4Addr, Ipv6Addr};

use libfuzzer_sys::fuzz_target;
use rtrs_fuzz::addr::{check_reparse, ifindex};
use rtrs_fuzz::c_str;
use rtrs_proto::addr::{parse_addr, Addr, INET6_ADDRSTRLEN, INET_ADDRSTRLEN};
use rtrs_proto::error::Error;

fuzz_target!(|data: &[u8]| {
    let got = parse_addr(data, 1234, ifindex);
    let s = c_str(data);
    match &got {
        Ok(a) => {
            assert_eq!(a.port, 1234);
            check_reparse(a);
            match a.addr {
                Addr::Gid(_) => assert!(s.starts_with(b"gid:")),
                Addr::Ipv4(_) => assert!(s.starts_with(b"ip:") && s.len() - 3 <= INET_ADDRSTRLEN),
                Addr::Ipv6 { addr, scope_id } => {
                    assert!(s.starts_with(b"ip:") && s.len() - 3 <= INET6_ADDRSTRLEN);
                    if scope_id != 0 {
                        assert!(s.contains(&b'%'));
                        assert!(addr[0] == 0xfe || addr[0] == 0xff);
                    }
                }
            }
        }
        Err(Error::ProtoNoSupport) => {
            assert!(!s.starts_with(b"ip:") && !s.starts_with(b"gid:"));
        }
        Err(e) => assert_eq!(*e, Error::Inval),
    }

    // Differential: std's strict parsers accept a subset of the kernel's.
    let Ok(text) = core::str::from_utf8(s) else {
        return;
    };
    if let Some(ip) = text.strip_prefix("ip:") {
        if let Ok(v4) = ip.parse::<Ipv4Addr>() {
            assert_eq!(got.map(|a| a.addr), Ok(Addr::Ipv4(v4.octets())), "{text:?}");
        } else if let Ok(v6) = ip.parse::<Ipv6Addr>() {
            assert_eq!(
                got.map(|a| a.addr),
                Ok(Addr::Ipv6 {
                    addr: v6.octets(),
                    scope_id: 0
                }),
                "{text:?}"
            );
        }
    } else if let Some(gid) = text.strip_prefix("gid:") {
        if let Ok(v6) = gid.parse::<Ipv6Addr>() {
            assert_eq!(got.map(|a| a.addr), Ok(Addr::Gid(v6.octets())), "{text:?}");
        }
    }
});
