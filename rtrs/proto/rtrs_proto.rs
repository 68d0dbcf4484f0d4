// SPDX-License-Identifier: GPL-2.0-or-later

//! The pure RTRS protocol (version 2.0, wire-compatible with Linux 6.12):
//! wire messages, IMM encoding, path addresses, multipath policies, the path
//! state machines, heartbeat and reconnect arithmetic, the session's chunks
//! and their fences, sysfs input rules.
//!
//! Nothing here imports the kernel crate, allocates or panics on input. A
//! crate of its own: Kbuild compiles it once and the RTRS modules link it;
//! on the host `cargo test` and the fuzz targets build it.

// Kbuild makes every crate `no_std` itself (`-Zcrate-attr=no_std`, and a
// second `no_std` is an error there); it also passes `--cfg MODULE`.
#![cfg_attr(not(MODULE), no_std)]
#![forbid(unsafe_code)]

pub mod addr;
pub mod chunks;
pub mod con;
pub mod error;
pub mod ext;
pub mod hb;
pub mod imm;
pub mod link;
pub mod mr;
pub mod msg;
pub mod path_sel;
pub mod reconnect;
pub mod state;
