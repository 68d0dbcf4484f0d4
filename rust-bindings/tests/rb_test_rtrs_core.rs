// SPDX-License-Identifier: GPL-2.0-or-later

//! rb-test-rtrs-core: calls the address functions of whichever rtrs-core is
//! loaded, ours or the C one, on a table of inputs and logs each result as a
//! `case` line. The selftest `rtrs_core_api.sh` runs it on both and requires
//! the same lines.

use kernel::c_str;
use kernel::prelude::*;

use rb::net::SockAddr;
use rb_rtrs as import;

module! {
    type: Test,
    name: "rb_test_rtrs_core",
    author: "rtrs-rs developers",
    description: "rust-bindings test: the rtrs-core address API",
    license: "GPL",
}

const CASES: &[&CStr] = &[
    c_str!("ip:192.0.2.1"),
    c_str!("192.0.2.1"),
    c_str!("ip:192.0.2.2@ip:192.0.2.1"),
    c_str!("ip:192.0.2.2,ip:192.0.2.1"),
    c_str!("ip:198.51.100.2@198.51.100.1"),
    c_str!("ip:2001:db8::1"),
    c_str!("ip:2001:db8:0:0:1:0:0:1"),
    c_str!("ip:::ffff:192.0.2.1"),
    c_str!("ip:fe80::1%eth0"),
    c_str!("ip:fe80::1%2"),
    c_str!("ip:fe80::1%nosuchif"),
    c_str!("gid:fe80:0000:0000:0000:0002:c903:0010:c0d1"),
    c_str!("gid:fe80::2:c903:10:c0d1@gid:fe80::2:c903:10:c0d2"),
    c_str!("ip:192.0.2.2@gid:fe80::1"),
    c_str!(""),
    c_str!("ip:"),
    c_str!("gid:"),
    c_str!("ip:256.0.0.1"),
    c_str!("ip:1.2.3"),
    c_str!("ip:192.0.2.1 "),
    c_str!("ip:192.0.2.1\n"),
    c_str!("tcp:192.0.2.1"),
    c_str!("@ip:192.0.2.1"),
    c_str!("ip:192.0.2.2@"),
    c_str!("ip:1::2::3"),
    c_str!("ip:192.0.2.1@ip:192.0.2.2@ip:192.0.2.3"),
];

fn text(buf: &[u8]) -> &str {
    let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    core::str::from_utf8(&buf[..n]).unwrap_or("<not utf-8>")
}

fn show(a: &SockAddr) -> ([u8; 80], i32) {
    let mut b = [0u8; 80];
    let n = import::sockaddr_to_str(a, &mut b);
    (b, n)
}

struct Test;

impl kernel::Module for Test {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        for (i, c) in CASES.iter().enumerate() {
            let c = c.to_str().unwrap_or("<not utf-8>");
            match import::addr_to_sockaddr(CASES[i], 1234) {
                Err(e) => pr_info!("case {} {:?}: error {}\n", i, c, e.to_errno()),
                Ok((src, dst)) => {
                    let (d, dn) = show(&dst);
                    let (s, sn) = src.as_ref().map(show).unwrap_or(([0; 80], -1));
                    pr_info!(
                        "case {} {:?}: src {:?} ({}) dst {:?} ({}) {:?}\n",
                        i,
                        c,
                        text(&s),
                        sn,
                        text(&d),
                        dn,
                        dst.kind()
                    );
                    if let Some(src) = src {
                        let mut p = [0u8; 160];
                        let n = import::addr_to_str(&src, &dst, &mut p);
                        pr_info!("case {} path {:?} ({})\n", i, text(&p), n);
                        let mut small = [0u8; 12];
                        let n = import::addr_to_str(&src, &dst, &mut small);
                        pr_info!("case {} path in 12 bytes {:?} ({})\n", i, text(&small), n);
                    }
                    let mut tiny = [0u8; 5];
                    let n = import::sockaddr_to_str(&dst, &mut tiny);
                    pr_info!("case {} dst in 5 bytes {:?} ({})\n", i, text(&tiny), n);
                }
            }
        }
        pr_info!("done, {} cases\n", CASES.len());
        Ok(Test)
    }
}
