// SPDX-License-Identifier: GPL-2.0-or-later

//! Safe Rust over the kernel C APIs that RTRS and RNBD need and that the
//! kernel crate of 6.12 does not cover: rdma_cm, verbs, sysfs, module
//! parameters, blk-mq and bios. This tree holds all the `unsafe` of rtrs-rs.
//!
//! It is not a crate of its own: every module includes it as `crate::rb`
//! (`#[path = "../rust-bindings/lib.rs"] pub mod rb;`), so each `.ko` links a
//! private copy of what it uses.

#![allow(dead_code, unused_imports, unused_macros)]

pub mod block;
pub mod cpu;
pub mod errno;
pub mod ffi;
pub mod global;
pub mod kvec;
pub mod module;
pub mod net;
pub mod once;
pub mod param;
pub mod random;
pub mod ratelimit;
pub mod rcu;
pub mod rdma;
pub mod rtrs_user;
pub mod sync;
pub mod sysfs;
pub mod workqueue;
