// SPDX-License-Identifier: GPL-2.0-or-later

//! The fuzz targets' C oracle (host only, not part of any module): the
//! Linux 6.12 functions listed in `fuzz/oracle/functions`, extracted from
//! the kernel sources and compiled with `fuzz/oracle/shim.h` and
//! `fuzz/oracle/glue.c` by `fuzz/build.rs`, behind safe wrappers that take
//! Rust byte strings.

use core::ffi::{c_char, c_int, c_uint};
use std::ffi::CString;

/// `struct oracle_addr` (`glue.c`): what the targets compare of the
/// `struct sockaddr_storage` that `rtrs_str_to_sockaddr()` fills in.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Addr {
    /// 2 (`AF_INET`), 10 (`AF_INET6`) or 27 (`AF_IB`).
    pub family: c_int,
    /// The port (`sin_port`, host order).
    pub port: u16,
    /// `sin6_scope_id`.
    pub scope_id: u32,
    /// `sib_sid` of a GID, host order.
    pub sid: u64,
    /// The address; IPv4 in the first 4 bytes.
    pub addr: [u8; 16],
}

unsafe extern "C" {
    fn oracle_str_to_sockaddr(addr: *const c_char, len: usize, port: u16, dst: *mut Addr) -> c_int;
    fn kstrtouint(s: *const c_char, base: c_uint, res: *mut c_uint) -> c_int;
    fn kstrtoint(s: *const c_char, base: c_uint, res: *mut c_int) -> c_int;
    fn kstrtoull(s: *const c_char, base: c_uint, res: *mut u64) -> c_int;
    fn oracle_map_options(buf: *const c_char, cpus: c_uint, m: *mut Map) -> c_int;
    fn oracle_mpath_policy_store(buf: *const c_char, policy: *mut c_int) -> c_int;
    fn oracle_max_reconnect_attempts_store(buf: *const c_char, out: *mut c_int) -> c_int;
    fn oracle_full_path(
        param: *const c_char,
        sessname: *const c_char,
        dev_name: *const c_char,
        out: *mut c_char,
        set_rc: *mut c_int,
    ) -> c_int;
}

/// The C client's `mpath_policy_store()` on the C string in `s`: the
/// new policy id, or the negative errno.
pub fn mpath_policy_store(s: &[u8]) -> Result<i32, i32> {
    let cs = c_string(s);
    let mut v: c_int = -1;
    // SAFETY: a NUL-terminated string and a valid out pointer.
    let rc = unsafe { oracle_mpath_policy_store(cs.as_ptr(), &mut v) };
    if rc == 0 {
        Ok(v)
    } else {
        Err(rc)
    }
}

/// The C client's `max_reconnect_attempts_store()` on the C string in
/// `s`: the new value, or the negative errno.
pub fn max_reconnect_attempts_store(s: &[u8]) -> Result<i32, i32> {
    let cs = c_string(s);
    let mut v: c_int = 0;
    // SAFETY: a NUL-terminated string and a valid out pointer.
    let rc = unsafe { oracle_max_reconnect_attempts_store(cs.as_ptr(), &mut v) };
    if rc == 0 {
        Ok(v)
    } else {
        Err(rc)
    }
}

/// The C server loaded with `dev_search_path=param` resolving `dev_name`
/// for `sessname` (each a C string): the set's result, and the path or
/// the negative errno of `process_msg_open()`.
pub fn full_path(param: &[u8], sessname: &[u8], dev_name: &[u8]) -> (i32, Result<Vec<u8>, i32>) {
    let (p, s, d) = (c_string(param), c_string(sessname), c_string(dev_name));
    let mut out = vec![0u8; 4096];
    let mut set_rc: c_int = 0;
    // SAFETY: NUL-terminated strings, a PATH_MAX output buffer (the
    // path is checked shorter than PATH_MAX before it is copied).
    let rc = unsafe {
        oracle_full_path(
            p.as_ptr(),
            s.as_ptr(),
            d.as_ptr(),
            out.as_mut_ptr().cast(),
            &mut set_rc,
        )
    };
    if rc != 0 {
        return (set_rc, Err(rc));
    }
    let n = out.iter().position(|&c| c == 0).unwrap_or(out.len());
    out.truncate(n);
    (set_rc, Ok(out))
}

/// `struct oracle_path`: one `path=` as the C client converted it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Path {
    /// Whether a source address was given.
    pub has_src: c_int,
    /// The source, if `has_src`.
    pub src: Addr,
    /// The destination.
    pub dst: Addr,
}

/// `struct oracle_map`: what `rnbd_clt_map_device_store()` gets from
/// `rnbd_clt_parse_map_options()`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Map {
    /// `sessname`, NUL-terminated.
    pub sessname: [u8; 255],
    /// `pathname` (`device_path=`), NUL-terminated.
    pub pathname: [u8; 255],
    /// `dest_port` as it was at the end.
    pub dest_port: u16,
    /// `enum rnbd_access_mode`.
    pub access_mode: c_int,
    /// `nr_poll_queues`.
    pub nr_poll_queues: u32,
    /// The number of paths.
    pub path_cnt: usize,
    /// The paths.
    pub paths: [Path; 6],
}

/// The C client's `map_device` parser on the C string in `s`, with
/// `cpus` as `nr_cpu_ids`: 0 or the negative errno, and what it parsed.
pub fn map_options(s: &[u8], cpus: u32) -> (i32, Box<Map>) {
    let cs = c_string(s);
    let mut m = Box::new(Map {
        sessname: [0; 255],
        pathname: [0; 255],
        dest_port: 0,
        access_mode: 0,
        nr_poll_queues: 0,
        path_cnt: 0,
        paths: [Path::default(); 6],
    });
    // SAFETY: a NUL-terminated string and a valid `struct oracle_map`.
    let rc = unsafe { oracle_map_options(cs.as_ptr(), cpus, &mut *m) };
    (rc, m)
}

/// Whether the Rust `SockAddr` is the C address `c`.
pub fn same_addr(a: &rtrs_proto::addr::SockAddr, c: &Addr) -> bool {
    use rtrs_proto::addr::Addr as A;
    a.port == c.port
        && match a.addr {
            A::Ipv4(v4) => c.family == 2 && v4 == c.addr[..4],
            A::Ipv6 { addr, scope_id } => {
                c.family == 10 && addr == c.addr && scope_id == c.scope_id
            }
            A::Gid(gid) => c.family == 27 && gid == c.addr,
        }
}

fn c_string(s: &[u8]) -> CString {
    CString::new(crate::c_str(s)).expect("c_str has no NUL")
}

/// `rtrs_str_to_sockaddr()` on the C string in `s`: the address, or
/// the negative errno.
pub fn str_to_sockaddr(s: &[u8], port: u16) -> Result<Addr, i32> {
    let cs = c_string(s);
    let mut out = Addr::default();
    let len = cs.as_bytes().len();
    // SAFETY: `cs` is NUL-terminated and `len` is its strlen; `out` is
    // a valid `struct oracle_addr` the function only writes.
    let rc = unsafe { oracle_str_to_sockaddr(cs.as_ptr(), len, port, &mut out) };
    if rc == 0 {
        Ok(out)
    } else {
        Err(rc)
    }
}

/// The kernel's `kstrtouint()` on the C string in `s`.
pub fn kstrtouint_c(s: &[u8], base: u32) -> Result<u32, i32> {
    let cs = c_string(s);
    let mut v: c_uint = 0;
    // SAFETY: a NUL-terminated string and a valid out pointer.
    let rc = unsafe { kstrtouint(cs.as_ptr(), base, &mut v) };
    if rc == 0 {
        Ok(v)
    } else {
        Err(rc)
    }
}

/// The kernel's `kstrtoint()` on the C string in `s`.
pub fn kstrtoint_c(s: &[u8], base: u32) -> Result<i32, i32> {
    let cs = c_string(s);
    let mut v: c_int = 0;
    // SAFETY: a NUL-terminated string and a valid out pointer.
    let rc = unsafe { kstrtoint(cs.as_ptr(), base, &mut v) };
    if rc == 0 {
        Ok(v)
    } else {
        Err(rc)
    }
}

/// The kernel's `kstrtoull()` on the C string in `s`.
pub fn kstrtoull_c(s: &[u8], base: u32) -> Result<u64, i32> {
    let cs = c_string(s);
    let mut v = 0u64;
    // SAFETY: a NUL-terminated string and a valid out pointer.
    let rc = unsafe { kstrtoull(cs.as_ptr(), base, &mut v) };
    if rc == 0 {
        Ok(v)
    } else {
        Err(rc)
    }
}
