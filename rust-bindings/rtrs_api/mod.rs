// SPDX-License-Identifier: GPL-2.0-or-later

//! The RTRS kernel API of `rtrs.h`, as the C modules of Linux 6.12 export and
//! use it, so that C RNBD runs on our RTRS and our RNBD on either.
//!
//! Export side: each RTRS module implements a trait (`CoreApi`, ...) and
//! invokes the matching `export_*!` macro, which defines the `#[no_mangle]`
//! C functions (checked against the prototypes bindgen read from the
//! kernel's own `rtrs.h`) and turns their raw arguments into safe Rust. The
//! `EXPORT_SYMBOL` lines are in `rust-bindings/exports-<module>.c`.

pub mod clt;
pub mod core;
pub mod srv;

use crate::rb::ffi;
use ::core::fmt;

/// A `core::fmt::Write` into a C buffer with `scnprintf` semantics: it keeps
/// at most `len - 1` bytes and a NUL, and counts the bytes kept.
pub struct ScnBuf<'a> {
    buf: &'a mut [u8],
    used: usize,
}

impl<'a> ScnBuf<'a> {
    /// A writer into `buf` (nothing is kept if it is empty).
    pub fn new(buf: &'a mut [u8]) -> Self {
        if let Some(b) = buf.first_mut() {
            *b = 0;
        }
        Self { buf, used: 0 }
    }

    /// Bytes written so far, without the NUL: what `scnprintf` returns.
    pub fn len(&self) -> usize {
        self.used
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    /// The rest of the buffer, for a following write (`buf + cnt` in C).
    pub fn rest(&mut self) -> ScnBuf<'_> {
        let start = self.used.min(self.buf.len());
        ScnBuf::new(&mut self.buf[start..])
    }
}

impl fmt::Write for ScnBuf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let cap = self.buf.len().saturating_sub(1);
        let n = s.len().min(cap.saturating_sub(self.used));
        self.buf[self.used..self.used + n].copy_from_slice(&s.as_bytes()[..n]);
        self.used += n;
        if let Some(b) = self.buf.get_mut(self.used) {
            *b = 0;
        }
        Ok(())
    }
}

/// Reads a `sockaddr` the C caller passed.
///
/// # Safety
///
/// `p` points to a valid socket address of its family's size.
pub(crate) unsafe fn read_sockaddr(p: *const ffi::sockaddr) -> crate::rb::rdma::SockAddr {
    // SAFETY: all-zero is a valid storage; we copy as many bytes as the
    // family's structure has (the caller guarantees that many are valid).
    unsafe {
        let family = u32::from((*p).sa_family);
        let len = match family {
            ffi::AF_INET => ::core::mem::size_of::<ffi::sockaddr_in>(),
            ffi::AF_INET6 => ::core::mem::size_of::<ffi::sockaddr_in6>(),
            ffi::AF_IB => ::core::mem::size_of::<ffi::sockaddr_ib>(),
            _ => ::core::mem::size_of::<ffi::sockaddr>(),
        };
        let mut st: ffi::__kernel_sockaddr_storage = ::core::mem::zeroed();
        ::core::ptr::copy_nonoverlapping(
            p.cast::<u8>(),
            ::core::ptr::addr_of_mut!(st).cast::<u8>(),
            len,
        );
        crate::rb::rdma::SockAddr::from_raw(&st)
    }
}
