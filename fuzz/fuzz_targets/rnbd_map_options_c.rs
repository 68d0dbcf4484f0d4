// SPDX-License-Identifier: GPL-2.0-or-later
//! `map_device` against the kernel's own parser: `MapOptions::parse` then
//! `parse_path` on each `path=` (what the Rust client does) accept exactly
//! what `rnbd_clt_parse_map_options()` of Linux 6.12 accepts (with
//! `match_token()`, `match_int()`, `simple_strtol()`, `strim()` and
//! `rtrs_addr_to_sockaddr()`, extracted by fuzz/build.rs), and find
//! the same names, port, access mode, poll queues and addresses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::options::MapOptions;
use rtrs_fuzz::addr::ifindex;
use rtrs_fuzz::{c_str, oracle};
use rtrs_proto::addr::{parse_path, PathAddr};

fuzz_target!(|data: &[u8]| {
    for cpus in [0u32, 1, 4, 1024] {
        let rust = MapOptions::parse(data, cpus).ok().and_then(|o| {
            let paths: Option<Vec<PathAddr>> = o
                .paths()
                .iter()
                .map(|p| parse_path(p.addr, p.port, ifindex).ok())
                .collect();
            paths.map(|p| (o, p))
        });
        let (rc, c) = oracle::map_options(data, cpus);
        let Some((o, paths)) = rust else {
            assert_ne!(rc, 0, "{data:?}: only C accepts ({cpus} CPUs)");
            continue;
        };
        assert_eq!(rc, 0, "{data:?}: only Rust accepts ({cpus} CPUs)");
        assert_eq!(o.sessname, c_str(&c.sessname), "{data:?}");
        assert_eq!(o.device_path, c_str(&c.pathname), "{data:?}");
        assert_eq!(o.dest_port, c.dest_port, "{data:?}");
        assert_eq!(
            i32::from(o.access_mode.to_wire()),
            c.access_mode,
            "{data:?}"
        );
        assert_eq!(o.nr_poll_queues, c.nr_poll_queues, "{data:?}");
        assert_eq!(paths.len(), c.path_cnt, "{data:?}");
        for (p, cp) in paths.iter().zip(c.paths.iter()) {
            assert!(oracle::same_addr(&p.dst, &cp.dst), "{data:?}: {p:?} {cp:?}");
            match &p.src {
                Some(src) => {
                    assert_ne!(cp.has_src, 0, "{data:?}");
                    assert!(oracle::same_addr(src, &cp.src), "{data:?}: {p:?} {cp:?}");
                }
                None => assert_eq!(cp.has_src, 0, "{data:?}"),
            }
        }
    }
});
