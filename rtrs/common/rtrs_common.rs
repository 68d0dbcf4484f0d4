// SPDX-License-Identifier: GPL-2.0-or-later

//! The part of RTRS that `rtrs-client` and `rtrs-server` share (C's
//! `rtrs.c`), between the pure protocol code (`rtrs_proto`) and the kernel
//! abstractions (`rb`, `rb_rdma`). A crate of its own, compiled once and
//! linked by the RTRS modules.

#![deny(unsafe_code)]

use rb::__LOG_PREFIX;

pub mod con;
pub mod hb;
pub mod name;
pub mod slots;
pub mod sockaddr;
pub mod sysfs;

/// A protocol error as a kernel error (same errno).
pub fn kerr(e: rtrs_proto::error::Error) -> kernel::error::Error {
    kernel::error::Error::from_errno(e.to_errno())
}

/// `a / b`, 0 if `b` is 0. Checked arithmetic: a plain division by a runtime
/// value leaves a panic path that 6.12's objtool does not know.
pub fn div(a: u32, b: u32) -> u32 {
    a.checked_div(b).unwrap_or(0)
}

/// `a % b`, 0 if `b` is 0 (see [`div`]).
pub fn rem(a: u32, b: u32) -> u32 {
    a.checked_rem(b).unwrap_or(0)
}

/// `a / b` rounded up, 0 if `b` is 0 (see [`div`]).
pub fn div_ceil(a: u32, b: u32) -> u32 {
    match b {
        0 => 0,
        _ => div(a, b) + (rem(a, b) != 0) as u32,
    }
}

/// Where a `#[track_caller]` function was called from, as `file.rs:line`
/// (the build directory left out), for log lines that say why.
pub struct CallSite(&'static core::panic::Location<'static>);

impl CallSite {
    /// The caller of the enclosing `#[track_caller]` function.
    #[track_caller]
    pub fn here() -> Self {
        Self(core::panic::Location::caller())
    }
}

impl core::fmt::Display for CallSite {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The last two components: `server/conn.rs`.
        let file = self.0.file();
        let cut = file.rmatch_indices('/').nth(1).map_or(0, |(i, _)| i + 1);
        write!(f, "{}:{}", file.get(cut..).unwrap_or(file), self.0.line())
    }
}
