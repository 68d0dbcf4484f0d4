// SPDX-License-Identifier: GPL-2.0-or-later

//! RNBD client: maps block devices of an RNBD server as `/dev/rnbd<N>` over
//! an RTRS session, the Rust drop-in for the C `rnbd-client.ko` of Linux
//! 6.12 (same sysfs files, same wire protocol), on either RTRS client.

#![deny(unsafe_code)]

use kernel::prelude::*;

#[path = "client/mod.rs"]
mod client;

module! {
    type: RnbdClient,
    name: "rnbd_client",
    author: "rtrs-rs developers",
    description: "RDMA Network Block Device Client",
    license: "GPL",
}

// dkms.conf's PACKAGE_VERSION (Kbuild exports it).
rb::module_version!(env!("RTRS_RS_VERSION"));

struct RnbdClient {
    client: Option<client::Module>,
}

impl kernel::Module for RnbdClient {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!(
            "Loading module rnbd_client, proto {}.{}\n",
            rnbd_proto::msg::PROTO_VER_MAJOR,
            rnbd_proto::msg::PROTO_VER_MINOR
        );
        let client = client::Module::new()?;
        Ok(Self {
            client: Some(client),
        })
    }
}

impl Drop for RnbdClient {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            c.destroy();
        }
        pr_info!("Unloading module\n");
    }
}
