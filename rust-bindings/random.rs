// SPDX-License-Identifier: GPL-2.0-or-later

//! Randomness and sleeping, as far as RTRS needs them.

use crate::ffi;

/// A random (version 4) uuid (`uuid_gen`).
pub fn uuid() -> [u8; 16] {
    // SAFETY: all-zero is a valid `uuid_t`.
    let mut u: ffi::uuid_t = unsafe { core::mem::zeroed() };
    // SAFETY: `u` is writable.
    unsafe { ffi::uuid_gen(&mut u) };
    u.b
}

/// A random number in `0..ceil` (0 if `ceil` is 0).
pub fn below(ceil: u32) -> u32 {
    if ceil == 0 {
        return 0;
    }
    // SAFETY: always safe to call.
    unsafe { ffi::__get_random_u32_below(ceil) }
}

/// Sleeps for `ms` milliseconds (`msleep`).
pub fn msleep(ms: u32) {
    // SAFETY: may sleep; the caller is in process context (it is only used
    // from work items).
    unsafe { ffi::msleep(ms) };
}
