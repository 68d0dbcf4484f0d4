// SPDX-License-Identifier: GPL-2.0-or-later

//! What the pure crates (`rtrs_proto`, `rnbd_proto`) reproduce of the
//! kernel itself: the errno values the C modules return ([`Errno`]), and
//! the string and number parsers of `lib/` their sysfs stores and options
//! use ([`kstr`]).
//!
//! Nothing here imports the kernel crate, allocates or panics on input. A
//! crate of its own: Kbuild compiles it once and the modules link it; on
//! the host `cargo test` and the fuzz targets build it.

// Kbuild makes every crate `no_std` itself (`-Zcrate-attr=no_std`, and a
// second `no_std` is an error there); it also passes `--cfg MODULE`.
#![cfg_attr(not(MODULE), no_std)]
#![forbid(unsafe_code)]

pub mod errno;
pub mod kstr;

pub use errno::Errno;
