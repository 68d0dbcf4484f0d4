// SPDX-License-Identifier: GPL-2.0-or-later

//! RTRS client: the active side of the RDMA transport. A session has one or
//! more paths to a server, each with a connection per CPU (plus the service
//! connection and poll queues); IO goes to a server chunk chosen by its
//! permit, on the path the multipath policy picks, and fails over to another
//! path when one goes down. Wire- and API-compatible with the C
//! `rtrs-client.ko` of Linux 6.12.

// `pin_init!` of a path, with its many fields, recurses deeply.
#![recursion_limit = "512"]
// `unsafe` only in `client::abi`, the C ABI this module exports.
#![deny(unsafe_code)]

use kernel::prelude::*;

#[path = "client/mod.rs"]
mod client;

module! {
    type: RtrsClient,
    name: "rtrs_client",
    author: "rtrs-rs developers",
    description: "RDMA Transport Client",
    license: "GPL",
}

// dkms.conf's PACKAGE_VERSION (Kbuild exports it).
rb::module_version!(env!("RTRS_RS_VERSION"));

struct RtrsClient;

impl kernel::Module for RtrsClient {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!(
            "Loading module rtrs_client, proto {}\n",
            rtrs_proto::msg::PROTO_VER_STRING
        );
        let class = rb::sysfs::Class::new(kernel::c_str!("rtrs-client")).inspect_err(|e| {
            pr_err!("failed to create rtrs-client dev class: {}\n", e.to_errno())
        })?;
        let devs = rtrs_common::dev::DevPool::new()?;
        // The cells are empty: only init sets them, and exit empties them.
        let _ = client::sysfs::CLASS.set(class);
        let _ = client::sess::DEVS.set(devs);
        Ok(RtrsClient)
    }
}

impl Drop for RtrsClient {
    fn drop(&mut self) {
        // Sessions hold the class too; they are gone, since `rnbd-client`
        // (our user) closed them before it could unload.
        drop(client::sysfs::CLASS.take());
        drop(client::sess::DEVS.take());
    }
}
