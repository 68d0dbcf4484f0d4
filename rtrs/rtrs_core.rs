// SPDX-License-Identifier: GPL-2.0-or-later

//! RTRS core: the part of the RDMA transport that client and server share.
//!
//! The C `rtrs-core.ko` holds the IU, CQ/QP and heartbeat helpers and the
//! address parsing that `rtrs-client` and `rtrs-server` (and, for the address
//! helpers, RNBD) call. This module takes its place under the same name and
//! exports the same address functions; the shared transport code is compiled
//! into the client and server modules instead (`rtrs/common/`).

// `unsafe` only in `abi`, the C ABI this module exports.
#![deny(unsafe_code)]

use kernel::prelude::*;

#[path = "core/abi.rs"]
#[allow(unsafe_code)]
mod abi;
#[path = "core/api.rs"]
mod api;

module! {
    type: RtrsCore,
    name: "rtrs_core",
    author: "rtrs-rs developers",
    description: "RDMA Transport Core",
    license: "GPL",
}

// dkms.conf's PACKAGE_VERSION (Kbuild exports it).
rb::module_version!(env!("RTRS_RS_VERSION"));

struct RtrsCore;

impl kernel::Module for RtrsCore {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("loaded (Rust)\n");
        Ok(RtrsCore)
    }
}

impl Drop for RtrsCore {
    fn drop(&mut self) {
        pr_info!("unloaded\n");
    }
}
