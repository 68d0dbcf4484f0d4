// SPDX-License-Identifier: GPL-2.0-or-later

//! The part of RTRS that `rtrs-client` and `rtrs-server` share (C's
//! `rtrs.c`), between the pure protocol code (`rtrs_proto`) and the kernel
//! abstractions (`rb`, `rb_rdma`). A crate of its own, compiled once and
//! linked by the RTRS modules.

#![deny(unsafe_code)]

use rb::__LOG_PREFIX;

pub mod con;
pub mod dev;
pub mod hb;
pub mod name;
pub mod slots;
pub mod sockaddr;
pub mod sysfs;

/// The monotonic clock in nanoseconds (`ktime_get()`).
pub fn now_ns() -> i64 {
    kernel::time::Ktime::ktime_get().to_ns()
}

/// A protocol error as a kernel error (same errno).
pub fn kerr(e: rtrs_proto::error::Error) -> kernel::error::Error {
    kernel::error::Error::from_errno(e.to_errno())
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
