// SPDX-License-Identifier: GPL-2.0-or-later

//! What `rtrs-core` exports: path address parsing and formatting
//! (`rtrs_addr_to_sockaddr`, `sockaddr_to_str`, `rtrs_addr_to_str`).

use super::ScnBuf;
use crate::rb::rdma::SockAddr;
use kernel::prelude::*;

/// The address functions of `rtrs-core`, implemented by the module.
pub trait CoreApi {
    /// Parses `[src@|src,]dst` (at most `len` bytes, up to a NUL), the
    /// destination with `port`. Errors are returned to C as negative errnos.
    fn addr_to_sockaddr(s: &[u8], port: u16) -> Result<(Option<SockAddr>, SockAddr)>;

    /// Writes `addr` as RTRS prints it (`ip:1.2.3.4`, `gid:...`).
    fn sockaddr_to_str(addr: &SockAddr, out: &mut ScnBuf<'_>);
}

/// Defines the exported C functions of `rtrs-core` on `$api: CoreApi`.
macro_rules! export_rtrs_core {
    ($api:ty) => {
        /// `int rtrs_addr_to_sockaddr(const char *str, size_t len, u16 port,
        /// struct rtrs_addr *addr)`: on success `*addr->dst` is set and
        /// `*addr->src` too, or `addr->src` becomes NULL if `str` has none.
        ///
        /// # Safety
        ///
        /// C callers pass `len` readable bytes at `str` and an `addr` whose
        /// non-null `src` and `dst` point to writable `sockaddr_storage`s.
        #[no_mangle]
        pub unsafe extern "C" fn rtrs_addr_to_sockaddr(
            s: *const ::kernel::ffi::c_char,
            len: usize,
            port: u16,
            addr: *mut $crate::rb::ffi::rtrs_addr,
        ) -> ::kernel::ffi::c_int {
            if s.is_null() || addr.is_null() {
                return -(::kernel::bindings::EINVAL as i32);
            }
            // SAFETY: `len` readable bytes at `s` (function contract).
            let bytes = unsafe { ::core::slice::from_raw_parts(s.cast::<u8>(), len) };
            match <$api as $crate::rb::rtrs_api::core::CoreApi>::addr_to_sockaddr(bytes, port) {
                Err(e) => e.to_errno(),
                // SAFETY: `addr`, and its non-null members, are valid for
                // writes (function contract).
                Ok((src, dst)) => unsafe {
                    if (*addr).dst.is_null() {
                        return -(::kernel::bindings::EINVAL as i32);
                    }
                    *(*addr).dst.cast::<$crate::rb::rdma::SockAddr>() = dst;
                    match src {
                        Some(src) if !(*addr).src.is_null() => {
                            *(*addr).src.cast::<$crate::rb::rdma::SockAddr>() = src;
                        }
                        Some(_) => return -(::kernel::bindings::EINVAL as i32),
                        None => (*addr).src = ::core::ptr::null_mut(),
                    }
                    0
                },
            }
        }

        /// `int sockaddr_to_str(const struct sockaddr *addr, char *buf,
        /// size_t len)`, with `scnprintf`'s return value.
        ///
        /// # Safety
        ///
        /// `addr` is a valid socket address, `buf` has `len` writable bytes.
        #[no_mangle]
        pub unsafe extern "C" fn sockaddr_to_str(
            addr: *const $crate::rb::ffi::sockaddr,
            buf: *mut ::kernel::ffi::c_char,
            len: usize,
        ) -> ::kernel::ffi::c_int {
            if buf.is_null() || len == 0 {
                return 0;
            }
            // SAFETY: `len` writable bytes (function contract).
            let out = unsafe { ::core::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
            let mut w = $crate::rb::rtrs_api::ScnBuf::new(out);
            // SAFETY: `addr` is a valid socket address (function contract).
            let a = unsafe { $crate::rb::rtrs_api::read_sockaddr(addr) };
            <$api as $crate::rb::rtrs_api::core::CoreApi>::sockaddr_to_str(&a, &mut w);
            w.len() as ::kernel::ffi::c_int
        }

        /// `int rtrs_addr_to_str(const struct rtrs_addr *addr, char *buf,
        /// size_t len)`: `src@dst`. Like the C, it returns the length of
        /// `src@` only.
        ///
        /// # Safety
        ///
        /// `addr` and its members are valid, `buf` has `len` writable bytes.
        #[no_mangle]
        pub unsafe extern "C" fn rtrs_addr_to_str(
            addr: *const $crate::rb::ffi::rtrs_addr,
            buf: *mut ::kernel::ffi::c_char,
            len: usize,
        ) -> ::kernel::ffi::c_int {
            use ::core::fmt::Write;
            if addr.is_null() || buf.is_null() || len == 0 {
                return 0;
            }
            // SAFETY: `len` writable bytes; `addr`'s members are valid socket
            // addresses (function contract).
            unsafe {
                let out = ::core::slice::from_raw_parts_mut(buf.cast::<u8>(), len);
                let mut w = $crate::rb::rtrs_api::ScnBuf::new(out);
                let src = $crate::rb::rtrs_api::read_sockaddr((*addr).src.cast());
                let dst = $crate::rb::rtrs_api::read_sockaddr((*addr).dst.cast());
                <$api as $crate::rb::rtrs_api::core::CoreApi>::sockaddr_to_str(&src, &mut w);
                let _ = w.write_str("@");
                let cnt = w.len();
                <$api as $crate::rb::rtrs_api::core::CoreApi>::sockaddr_to_str(&dst, &mut w.rest());
                cnt as ::kernel::ffi::c_int
            }
        }

        // The definitions above have exactly the prototypes of the kernel's
        // `rtrs.h` (as bindgen read them): assigning them to pointers of the
        // declared types only compiles if they do.
        const _: () = {
            #[allow(unused_assignments, dead_code)]
            fn check() {
                let mut a =
                    $crate::rb::ffi::rtrs_addr_to_sockaddr as unsafe extern "C" fn(_, _, _, _) -> _;
                a = rtrs_addr_to_sockaddr;
                let mut b = $crate::rb::ffi::sockaddr_to_str as unsafe extern "C" fn(_, _, _) -> _;
                b = sockaddr_to_str;
                let mut c = $crate::rb::ffi::rtrs_addr_to_str as unsafe extern "C" fn(_, _, _) -> _;
                c = rtrs_addr_to_str;
                let _ = (a, b, c);
            }
        };
    };
}
pub(crate) use export_rtrs_core;

/// Calls into whichever `rtrs-core` is loaded (ours or the C one): what RNBD
/// and the tests use. `#[inline]`, so that only modules that call them get
/// the symbol references (and the dependency on `rtrs-core`).
pub mod import {
    use crate::rb::ffi;
    use crate::rb::rdma::SockAddr;
    use kernel::prelude::*;

    /// `rtrs_addr_to_sockaddr`: `(src, dst)` of a path string. A `CStr`,
    /// since the C implementation looks for separators with `strchr`.
    #[inline]
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
    #[inline]
    pub fn addr_bytes_to_sockaddr(addr: &[u8], port: u16) -> Result<(Option<SockAddr>, SockAddr)> {
        let mut s = KVec::with_capacity(addr.len() + 1, GFP_KERNEL)?;
        s.extend_from_slice(addr, GFP_KERNEL)?;
        s.push(0, GFP_KERNEL)?;
        addr_to_sockaddr(CStr::from_bytes_with_nul(&s).map_err(|_| EINVAL)?, port)
    }

    /// `sockaddr_to_str` into `buf`; returns its result (bytes written).
    #[inline]
    pub fn sockaddr_to_str(a: &SockAddr, buf: &mut [u8]) -> i32 {
        let mut a = *a;
        // SAFETY: `a` is a valid address, `buf` has `buf.len()` bytes.
        unsafe { ffi::sockaddr_to_str(a.as_mut_ptr(), buf.as_mut_ptr(), buf.len()) }
    }

    /// `rtrs_addr_to_str` of `src@dst` into `buf`; returns its result.
    #[inline]
    pub fn addr_to_str(src: &SockAddr, dst: &SockAddr, buf: &mut [u8]) -> i32 {
        let (mut s, mut d) = (*src, *dst);
        let addr = ffi::rtrs_addr {
            src: s.as_mut_ptr().cast(),
            dst: d.as_mut_ptr().cast(),
        };
        // SAFETY: both addresses are valid, `buf` has `buf.len()` bytes.
        unsafe { ffi::rtrs_addr_to_str(&addr, buf.as_mut_ptr(), buf.len()) }
    }
}
