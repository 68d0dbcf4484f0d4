// SPDX-License-Identifier: GPL-2.0-or-later
//! `MapOptions::parse` (a write to `map_device`): what it accepts has both
//! mandatory names, within their limits, at most `MAX_PATHS` paths,
//! `nr_poll_queues` within `nr_cpu_ids`; more CPUs never turn an accepted
//! write into a refused one. Each path then goes through the RTRS address
//! parser, as the client does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::error::Error;
use rnbd_proto::options::{MapOptions, MAX_PATHS};
use rtrs_fuzz::addr::{check_path, ifindex};

fuzz_target!(|data: &[u8]| {
    let mut prev: Option<MapOptions<'_>> = None;
    for ncpu in [0u32, 1, 4, 1024, u32::MAX] {
        let got = MapOptions::parse(data, ncpu);
        let opts = match got {
            Ok(o) => o,
            Err(e) => {
                assert!(e == Error::Inval || e == Error::NoMem, "{e:?}");
                assert!(
                    prev.is_none(),
                    "accepted with fewer CPUs, refused with {ncpu}"
                );
                continue;
            }
        };
        for name in [opts.sessname, opts.device_path] {
            assert!(!name.is_empty() && name.len() < 255);
            assert!(!name.contains(&0) && !name.contains(&b' '));
        }
        assert!(opts.nr_poll_queues <= ncpu);
        assert!(opts.paths().len() <= MAX_PATHS);
        for p in opts.paths() {
            assert!(!p.addr.is_empty() && !p.addr.contains(&b' ') && !p.addr.contains(&0));
            if let Ok(path) = rtrs_proto::addr::parse_path(p.addr, p.port, ifindex) {
                check_path(&path, p.port);
            }
        }
        if let Some(p) = &prev {
            assert_eq!(
                (
                    p.sessname,
                    p.device_path,
                    p.access_mode,
                    p.dest_port,
                    p.paths()
                ),
                (
                    opts.sessname,
                    opts.device_path,
                    opts.access_mode,
                    opts.dest_port,
                    opts.paths()
                )
            );
            assert!(p.nr_poll_queues <= opts.nr_poll_queues);
        }
        prev = Some(opts);
    }
});
