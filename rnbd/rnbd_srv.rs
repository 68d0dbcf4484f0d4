// SPDX-License-Identifier: GPL-2.0-or-later

//! RNBD server: exports local block devices to RNBD clients over RTRS.
//! Clients open devices by path (under `dev_search_path`) in `ro`, `rw` or
//! `migration` mode, and send block IO, which the server submits as bios.
//! Wire-, parameter- and sysfs-compatible with the C `rnbd-server.ko` of
//! Linux 6.12.

#![deny(unsafe_code)]

use kernel::prelude::*;

#[path = "server/mod.rs"]
mod server;

module! {
    type: RnbdServer,
    name: "rnbd_server",
    author: "rtrs-rs developers",
    description: "RDMA Network Block Device Server",
    license: "GPL",
}

// dkms.conf's PACKAGE_VERSION (Kbuild exports it).
rb::module_version!(env!("RTRS_RS_VERSION"));

/// The loaded module: the RTRS server we listen with and our sysfs.
struct RnbdServer {
    // Dropped first: closing RTRS disconnects every session, which closes
    // their devices and removes their sysfs entries.
    _rtrs: rb_rtrs_srv::SrvCtx<server::Handler>,
    _server: server::ServerRef,
}

impl kernel::Module for RnbdServer {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let srv = server::ServerRef::new()
            .inspect_err(|e| pr_err!("rnbd_srv_create_sysfs_files(), err: {}\n", e.to_errno()))?;
        let port = server::params::PORT_NR.value();
        let rtrs = rb_rtrs_srv::SrvCtx::open(port)
            .inspect_err(|e| pr_err!("rtrs_srv_open(), err: {}\n", e.to_errno()))?;
        Ok(RnbdServer {
            _rtrs: rtrs,
            _server: srv,
        })
    }
}
