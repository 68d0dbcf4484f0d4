// SPDX-License-Identifier: GPL-2.0-or-later

//! Glue every RTRS module shares between the pure protocol code (`proto`)
//! and the kernel abstractions (`rb`). Mounted as `crate::common`.

// Each of the three modules uses a part.
#![allow(dead_code)]

pub mod name;
pub mod sockaddr;

/// A protocol error as a kernel error (same errno).
pub fn kerr(e: crate::proto::error::Error) -> kernel::error::Error {
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
