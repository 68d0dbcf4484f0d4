// SPDX-License-Identifier: GPL-2.0-or-later

//! The pure RTRS protocol (version 2.0, wire-compatible with Linux 6.12):
//! wire messages, IMM encoding, path addresses, multipath policies, the path
//! state machines, heartbeat and reconnect arithmetic, sysfs input rules.
//!
//! Nothing here imports the kernel crate, allocates or panics on input: the
//! same files build on the host (`cargo test`, fuzzing) and inside the RTRS
//! modules, which include them as `crate::proto`.

#![forbid(unsafe_code)]

pub mod addr;
pub mod error;
pub mod hb;
pub mod imm;
pub mod kstr;
pub mod link;
pub mod msg;
pub mod path_sel;
pub mod reconnect;
pub mod state;
