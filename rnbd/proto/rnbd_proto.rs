// SPDX-License-Identifier: GPL-2.0-or-later

//! The pure RNBD protocol: wire messages, sysfs input parsers and formats,
//! the server's device path resolution and open-permission rules.
//!
//! Nothing here imports the kernel crate, allocates or panics on input. A
//! crate of its own: Kbuild compiles it once and the RNBD client and server
//! modules link it; on the host `cargo test` and the fuzz targets build it.

// Kbuild makes every crate `no_std` itself (`-Zcrate-attr=no_std`, and a
// second `no_std` is an error there); it also passes `--cfg MODULE`.
#![cfg_attr(not(MODULE), no_std)]
#![forbid(unsafe_code)]

pub mod access;
pub mod devname;
pub mod devpath;
pub mod error;
pub mod msg;
pub mod options;
pub mod sysfs;
