// SPDX-License-Identifier: GPL-2.0-or-later

//! Rate limiting of log lines that a peer can trigger at will (a client's
//! bad IO), as C's `printk_ratelimit()` and the `pr_*_ratelimited` it backs.

use crate::ffi;
use kernel::str::CStr;

/// Whether a rate-limited message may be printed now (the kernel-wide
/// `printk_ratelimit_state`: bursts of 10 per 5 s); when messages were
/// suppressed, the kernel says so, naming `site`.
pub fn printk_ratelimit(site: &'static CStr) -> bool {
    // SAFETY: `site` is a static NUL-terminated string, which the function
    // only reads (and may print).
    unsafe { ffi::__printk_ratelimit(site.as_char_ptr()) != 0 }
}

/// `pr_err!` at most at the kernel's printk rate (C's `pr_err_ratelimited`),
/// for what a peer or a broken link can trigger at will; `site` (a string
/// literal) names the caller when the kernel reports suppressed messages:
/// `pr_err_ratelimited!("rtrs_clt_fast_reg_done", "{}: ...\n", name)`.
#[macro_export]
macro_rules! pr_err_ratelimited {
    ($site:literal, $($arg:tt)*) => {
        if $crate::ratelimit::printk_ratelimit(::kernel::c_str!($site)) {
            ::kernel::pr_err!($($arg)*);
        }
    };
}
pub use crate::pr_err_ratelimited;

/// `pr_info!` at most at the kernel's printk rate (C's
/// `pr_info_ratelimited`), as [`pr_err_ratelimited!`].
#[macro_export]
macro_rules! pr_info_ratelimited {
    ($site:literal, $($arg:tt)*) => {
        if $crate::ratelimit::printk_ratelimit(::kernel::c_str!($site)) {
            ::kernel::pr_info!($($arg)*);
        }
    };
}
pub use crate::pr_info_ratelimited;
