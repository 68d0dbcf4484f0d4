// SPDX-License-Identifier: GPL-2.0-or-later

//! Rate limiting of log lines that a peer can trigger at will (a client's
//! bad IO), as C's `printk_ratelimit()` and the `pr_*_ratelimited` it backs.

use crate::rb::ffi;
use kernel::str::CStr;

/// Whether a rate-limited message may be printed now (the kernel-wide
/// `printk_ratelimit_state`: bursts of 10 per 5 s); when messages were
/// suppressed, the kernel says so, naming `site`.
pub fn printk_ratelimit(site: &'static CStr) -> bool {
    // SAFETY: `site` is a static NUL-terminated string, which the function
    // only reads (and may print).
    unsafe { ffi::__printk_ratelimit(site.as_char_ptr()) != 0 }
}
