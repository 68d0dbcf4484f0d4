// SPDX-License-Identifier: GPL-2.0-or-later

//! The C ABI that `rtrs-core` exports (`rtrs.h`): `rtrs_addr_to_sockaddr`,
//! `sockaddr_to_str` and `rtrs_addr_to_str`, the path address helpers that
//! `rtrs-client`, `rtrs-server` and RNBD (ours or C's) call.
//!
//! The one place of this module with `unsafe`: each entry point turns its C
//! caller's pointers into safe values under the contract its `# Safety`
//! section states, then calls [`super::api`]. The `EXPORT_SYMBOL` lines are
//! in `exports.c` beside this file.

use super::api;
use core::fmt::{self, Write};
use kernel::ffi::{c_char, c_int};
use rb::ffi;
use rb::net::SockAddr;

/// A `core::fmt::Write` into a C buffer with `scnprintf` semantics: it keeps
/// at most `len - 1` bytes and a NUL, and counts the bytes kept.
pub(crate) struct ScnBuf<'a> {
    buf: &'a mut [u8],
    used: usize,
}

impl<'a> ScnBuf<'a> {
    /// A writer into `buf` (nothing is kept if it is empty).
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        if let Some(b) = buf.first_mut() {
            *b = 0;
        }
        Self { buf, used: 0 }
    }

    /// Bytes written so far, without the NUL: what `scnprintf` returns.
    pub(crate) fn len(&self) -> usize {
        self.used
    }

    /// The rest of the buffer, for a following write (`buf + cnt` in C).
    pub(crate) fn rest(&mut self) -> ScnBuf<'_> {
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

/// `int rtrs_addr_to_sockaddr(const char *str, size_t len, u16 port,
/// struct rtrs_addr *addr)`: on success `*addr->dst` is set and `*addr->src`
/// too, or `addr->src` becomes NULL if `str` has no source.
///
/// # Safety
///
/// C callers pass `len` readable bytes at `s` and an `addr` whose non-null
/// `src` and `dst` point to writable `sockaddr_storage`s.
#[no_mangle]
unsafe extern "C" fn rtrs_addr_to_sockaddr(
    s: *const c_char,
    len: usize,
    port: u16,
    addr: *mut ffi::rtrs_addr,
) -> c_int {
    if s.is_null() || addr.is_null() {
        return kernel::error::code::EINVAL.to_errno();
    }
    // SAFETY: `len` readable bytes at `s` (function contract).
    let bytes = unsafe { core::slice::from_raw_parts(s.cast::<u8>(), len) };
    let (src, dst) = match api::addr_to_sockaddr(bytes, port) {
        Ok(v) => v,
        Err(e) => return e.to_errno(),
    };
    // SAFETY: `addr` is valid for reads and writes (function contract).
    let addr = unsafe { &mut *addr };
    if addr.dst.is_null() {
        return kernel::error::code::EINVAL.to_errno();
    }
    // SAFETY: a non-null `dst` points to a writable `sockaddr_storage`
    // (function contract), which a `SockAddr` is (`repr(transparent)`).
    unsafe { *addr.dst.cast::<SockAddr>() = dst };
    match src {
        Some(src) if !addr.src.is_null() => {
            // SAFETY: as for `dst`.
            unsafe { *addr.src.cast::<SockAddr>() = src };
        }
        Some(_) => return kernel::error::code::EINVAL.to_errno(),
        None => addr.src = core::ptr::null_mut(),
    }
    0
}

/// `int sockaddr_to_str(const struct sockaddr *addr, char *buf, size_t len)`,
/// with `scnprintf`'s return value.
///
/// # Safety
///
/// `addr` is a valid socket address, `buf` has `len` writable bytes.
#[no_mangle]
unsafe extern "C" fn sockaddr_to_str(
    addr: *const ffi::sockaddr,
    buf: *mut c_char,
    len: usize,
) -> c_int {
    if addr.is_null() || buf.is_null() || len == 0 {
        return 0;
    }
    // SAFETY: `len` writable bytes (function contract).
    let out = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
    let mut w = ScnBuf::new(out);
    // SAFETY: a valid socket address (function contract).
    let a = unsafe { SockAddr::from_c(addr) };
    api::sockaddr_to_str(&a, &mut w);
    w.len() as c_int
}

/// `int rtrs_addr_to_str(const struct rtrs_addr *addr, char *buf, size_t
/// len)`: `src@dst`. Like C's, it returns the length of `src@` only.
///
/// # Safety
///
/// `addr` and its members are valid, `buf` has `len` writable bytes.
#[no_mangle]
unsafe extern "C" fn rtrs_addr_to_str(
    addr: *const ffi::rtrs_addr,
    buf: *mut c_char,
    len: usize,
) -> c_int {
    if addr.is_null() || buf.is_null() || len == 0 {
        return 0;
    }
    // SAFETY: `addr` is valid for reads, and so are its members, which
    // point to socket addresses (function contract).
    let (src, dst) = unsafe {
        let a = &*addr;
        (
            SockAddr::from_c(a.src.cast()),
            SockAddr::from_c(a.dst.cast()),
        )
    };
    // SAFETY: `len` writable bytes (function contract).
    let out = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
    let mut w = ScnBuf::new(out);
    api::sockaddr_to_str(&src, &mut w);
    let _ = w.write_str("@");
    let cnt = w.len();
    api::sockaddr_to_str(&dst, &mut w.rest());
    cnt as c_int
}

// The definitions above have exactly the prototypes of the kernel's
// `rtrs.h` (as bindgen read them): assigning them to pointers of the
// declared types only compiles if they do.
const _: () = {
    #[allow(unused_assignments, dead_code)]
    fn check() {
        let mut a = ffi::rtrs_addr_to_sockaddr as unsafe extern "C" fn(_, _, _, _) -> _;
        a = rtrs_addr_to_sockaddr;
        let mut b = ffi::sockaddr_to_str as unsafe extern "C" fn(_, _, _) -> _;
        b = sockaddr_to_str;
        let mut c = ffi::rtrs_addr_to_str as unsafe extern "C" fn(_, _, _) -> _;
        c = rtrs_addr_to_str;
        let _ = (a, b, c);
    }
};
