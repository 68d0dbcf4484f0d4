// SPDX-License-Identifier: GPL-2.0-or-later

//! The kernel's monotonic clocks as nanoseconds, beside `kernel::time`'s
//! `Ktime::ktime_get()`.

use crate::ffi;

/// The coarse monotonic clock (`ktime_get_coarse_ns()`): the monotonic
/// time of the last timer tick, read without the clock source, so cheap
/// enough to stamp every completion; at most a tick behind
/// `ktime_get()`.
pub fn coarse_ns() -> i64 {
    // SAFETY: reads the timekeeper under its seqcount; any context.
    let ns = unsafe { ffi::ktime_get_coarse_ns() };
    ns as i64
}
