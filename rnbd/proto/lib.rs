// SPDX-License-Identifier: GPL-2.0-or-later

//! Host build of the pure RNBD protocol code.
//!
//! Everything lives in `mod.rs` and its submodules, which the RNBD kernel
//! modules include as `crate::proto`; this file only makes them a `no_std`
//! crate of their own so that `cargo test` (and fuzzing) can reach them.

#![no_std]

#[path = "mod.rs"]
mod proto;

pub use proto::*;
