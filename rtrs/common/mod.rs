// SPDX-License-Identifier: GPL-2.0-or-later

//! Glue every RTRS module shares between the pure protocol code (`proto`)
//! and the kernel abstractions (`rb`). Mounted as `crate::common`.

pub mod sockaddr;

/// A protocol error as a kernel error (same errno).
pub fn kerr(e: crate::proto::error::Error) -> kernel::error::Error {
    kernel::error::Error::from_errno(e.to_errno())
}
