// SPDX-License-Identifier: GPL-2.0-or-later

//! Safe Rust over the kernel C APIs that RTRS and RNBD need and that the
//! kernel crate of 6.12 does not cover, shaped like the kernel crate so that
//! they could be proposed for it. This crate is the base: the generated FFI
//! (`ffi`), locks, RCU, workqueues, sysfs, module parameters, networking;
//! the crates beside it build on it (`rb_rdma`: rdma_cm and verbs,
//! `rb_block`: blk-mq, gendisk and bios, `rb_rtrs*`: the `rtrs.h` API as its
//! users call it).
//!
//! Kbuild compiles each of these crates once; a module links a private copy
//! of the crates it uses (`Kbuild`, `Documentation/design/layers.md`). With
//! the ABI modules of the RTRS modules, they hold all the `unsafe` of
//! rtrs-rs.

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
pub mod sync;
pub mod sysfs;
pub mod time;
pub mod trace;
pub mod workqueue;

pub use module::__LOG_PREFIX;
