// SPDX-License-Identifier: GPL-2.0-or-later
//! `parse_addr` against the kernel's own code: `rtrs_str_to_sockaddr()`,
//! `inet_pton_with_scope()`, `in4_pton()`, `in6_pton()` and
//! `__ipv6_addr_type()` of Linux 6.12, extracted by fuzz/build.rs.
//! Same acceptance, same errno, same address, scope and port.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtrs_fuzz::addr::ifindex;
use rtrs_fuzz::oracle;
use rtrs_proto::addr::{parse_addr, Addr};

fuzz_target!(|data: &[u8]| {
    // A port from the first two bytes when the input is long enough to
    // spare them, so that both halves of the u16 range are reached.
    for port in [
        1234u16,
        u16::from_le_bytes([data.first().copied().unwrap_or(0), 0x80]),
    ] {
        let rust = parse_addr(data, port, ifindex);
        let c = oracle::str_to_sockaddr(data, port);
        match (rust, c) {
            (Err(e), Err(errno)) => assert_eq!(e.to_errno(), errno, "{data:?}"),
            (Ok(a), Ok(c)) => {
                assert_eq!(a.port, c.port, "{data:?}");
                match a.addr {
                    Addr::Ipv4(v4) => {
                        assert_eq!(c.family, 2, "{data:?}");
                        assert_eq!(v4, c.addr[..4], "{data:?}");
                    }
                    Addr::Ipv6 { addr, scope_id } => {
                        assert_eq!(c.family, 10, "{data:?}");
                        assert_eq!((addr, scope_id), (c.addr, c.scope_id), "{data:?}");
                    }
                    Addr::Gid(gid) => {
                        assert_eq!(c.family, 27, "{data:?}");
                        assert_eq!(gid, c.addr, "{data:?}");
                        // The C client passes the port as a `short`: from
                        // 32768 on it sign-extends over the whole service
                        // id (a C quirk; the C server, like us, uses the
                        // u16 port: RDMA_IB_IP_PS_IB | port).
                        let c_want = if port < 0x8000 {
                            a.ib_service_id()
                        } else {
                            0xffff_ffff_ffff_0000 | u64::from(port)
                        };
                        assert_eq!(c.sid, c_want, "{data:?}");
                        assert_eq!(a.ib_service_id(), 0x013f_0000 | u64::from(port));
                    }
                }
            }
            (rust, c) => panic!("{data:?}: Rust {rust:?}, C {c:?}"),
        }
    }
});
