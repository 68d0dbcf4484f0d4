// SPDX-License-Identifier: GPL-2.0-or-later

//! The pure RNBD protocol: wire messages, sysfs input parsers and formats,
//! the server's device path resolution and open-permission rules.
//!
//! Nothing here imports the kernel crate, allocates or panics on input: the
//! same files build on the host (`cargo test`, fuzzing) and inside the RNBD
//! client and server modules, which include them as `crate::proto`.

#![forbid(unsafe_code)]

pub mod access;
pub mod devname;
pub mod devpath;
pub mod error;
mod kparse;
pub mod msg;
pub mod options;
pub mod sysfs;
