// SPDX-License-Identifier: GPL-2.0-or-later

//! RTRS server: the passive side of the RDMA transport. It lends each client
//! session `sess_queue_depth` chunks of memory, which the client RDMA-writes
//! its requests into; it hands them to the upper layer (RNBD) through the
//! `rtrs.h` API and answers with immediate data, RDMA-writing read data back.
//! Wire- and API-compatible with the C `rtrs-server.ko` of Linux 6.12.

// `pin_init!` of a path, with its many fields, recurses deeply.
#![recursion_limit = "256"]
// `unsafe` only in `server::abi`, the C ABI this module exports.
#![deny(unsafe_code)]

use kernel::prelude::*;

#[path = "server/mod.rs"]
mod server;

module! {
    type: RtrsServer,
    name: "rtrs_server",
    author: "rtrs-rs developers",
    description: "RDMA Transport Server",
    license: "GPL",
}

// dkms.conf's PACKAGE_VERSION (Kbuild exports it).
rb::module_version!(env!("RTRS_RS_VERSION"));

struct RtrsServer;

impl kernel::Module for RtrsServer {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let p = server::params::Params::get();
        pr_info!(
            "Loading module rtrs_server, proto {}: (max_chunk_size: {} (pure IO {}, headers {}) , sess_queue_depth: {}, always_invalidate: {})\n",
            rtrs_proto::msg::PROTO_VER_STRING,
            p.max_chunk_size,
            p.max_chunk_size - server::params::MAX_HDR_SIZE,
            server::params::MAX_HDR_SIZE,
            p.queue_depth,
            p.always_invalidate as u8,
        );
        p.check()?;
        let class = rb::sysfs::Class::new(kernel::c_str!("rtrs-server")).inspect_err(|e| {
            pr_err!("failed to create rtrs-server dev class: {}\n", e.to_errno())
        })?;
        let devs = rtrs_common::dev::DevPool::new()?;
        // The cells are empty: only init sets them, and exit empties them.
        let _ = server::sysfs::CLASS.set(class);
        let _ = server::path::DEVS.set(devs);
        Ok(RtrsServer)
    }
}

impl Drop for RtrsServer {
    fn drop(&mut self) {
        // Sessions hold the class too; they are gone, since `rnbd-server`
        // (our user) closed its context before it could unload.
        drop(server::sysfs::CLASS.take());
        drop(server::path::DEVS.take());
    }
}
