// SPDX-License-Identifier: GPL-2.0-or-later

//! The `rtrs.h` API as its users call it, whichever RTRS modules are
//! loaded (ours or the C ones: the symbols are the same). This crate has
//! the path address helpers of `rtrs-core`, which RTRS' own modules call
//! too; `rb_rtrs_clt` and `rb_rtrs_srv` the client and the server API. They
//! are three crates because a module depends on every module whose symbols
//! the crates it links refer to: RNBD's server must not need
//! `rtrs-client`. (What our RTRS modules export is in each one's `abi`
//! module.)

use kernel::prelude::*;
use rb::ffi;
use rb::net::SockAddr;

/// `rtrs_addr_to_sockaddr`: `(src, dst)` of a path string. A `CStr`,
/// since the C implementation looks for separators with `strchr`.
pub fn addr_to_sockaddr(s: &CStr, port: u16) -> Result<(Option<SockAddr>, SockAddr)> {
    // SAFETY: all-zero is a valid storage.
    let mut src: ffi::__kernel_sockaddr_storage = unsafe { core::mem::zeroed() };
    // SAFETY: as above.
    let mut dst: ffi::__kernel_sockaddr_storage = unsafe { core::mem::zeroed() };
    let mut addr = ffi::rtrs_addr {
        src: &mut src,
        dst: &mut dst,
    };
    // SAFETY: `s` is NUL-terminated with `s.len()` bytes before the NUL;
    // `addr` points to two writable storages; the callee keeps none.
    let ret = unsafe { ffi::rtrs_addr_to_sockaddr(s.as_char_ptr(), s.len(), port, &mut addr) };
    kernel::error::to_result(ret)?;
    // SAFETY: the callee filled in `dst`, and `src` unless it cleared it.
    unsafe {
        let src = (!addr.src.is_null()).then(|| SockAddr::from_raw(&src));
        Ok((src, SockAddr::from_raw(&dst)))
    }
}

/// [`addr_to_sockaddr`] of `addr`, which is not NUL-terminated (a part
/// of a `map_device` line or of a sysfs write): parses a NUL-terminated
/// copy, as C's `strchr` would read on past `addr`. An `addr` with a NUL
/// inside is `EINVAL`.
pub fn addr_bytes_to_sockaddr(addr: &[u8], port: u16) -> Result<(Option<SockAddr>, SockAddr)> {
    let mut s = KVec::with_capacity(addr.len() + 1, GFP_KERNEL)?;
    s.extend_from_slice(addr, GFP_KERNEL)?;
    s.push(0, GFP_KERNEL)?;
    addr_to_sockaddr(CStr::from_bytes_with_nul(&s).map_err(|_| EINVAL)?, port)
}

/// `sockaddr_to_str` into `buf`; returns its result (bytes written).
pub fn sockaddr_to_str(a: &SockAddr, buf: &mut [u8]) -> i32 {
    let mut a = *a;
    // SAFETY: `a` is a valid address, `buf` has `buf.len()` bytes.
    unsafe { ffi::sockaddr_to_str(a.as_mut_ptr(), buf.as_mut_ptr(), buf.len()) }
}

/// `rtrs_addr_to_str` of `src@dst` into `buf`; returns its result.
pub fn addr_to_str(src: &SockAddr, dst: &SockAddr, buf: &mut [u8]) -> i32 {
    let (mut s, mut d) = (*src, *dst);
    let addr = ffi::rtrs_addr {
        src: s.as_mut_ptr().cast(),
        dst: d.as_mut_ptr().cast(),
    };
    // SAFETY: both addresses are valid, `buf` has `buf.len()` bytes.
    unsafe { ffi::rtrs_addr_to_str(&addr, buf.as_mut_ptr(), buf.len()) }
}
