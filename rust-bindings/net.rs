// SPDX-License-Identifier: GPL-2.0-or-later

//! Networking, as far as RTRS needs it: socket addresses as rdma_cm takes
//! them (IPv4, IPv6 and native IB: `AF_IB`, a GID and an RDMA service id,
//! in a `sockaddr_storage`), and an interface index by name, for IPv6
//! link-local scopes (`fe80::1%eth0`).

use crate::ffi;

/// The index of the network interface `name` in the initial namespace.
pub fn ifindex_by_name(name: &[u8]) -> Option<u32> {
    let mut buf = [0u8; ffi::IFNAMSIZ as usize];
    if name.is_empty() || name.len() >= buf.len() || name.contains(&0) {
        return None;
    }
    buf[..name.len()].copy_from_slice(name);
    // SAFETY: `buf` is NUL-terminated; `init_net` is static; a non-null
    // result holds a reference we drop right after reading the index.
    unsafe {
        let dev = ffi::dev_get_by_name(core::ptr::addr_of_mut!(ffi::init_net), buf.as_ptr());
        if dev.is_null() {
            return None;
        }
        let idx = (*dev).ifindex;
        ffi::dev_put(dev);
        u32::try_from(idx).ok()
    }
}

/// The parts of a [`SockAddr`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SockAddrKind {
    /// IPv4 address and port.
    V4 {
        /// Address bytes in network order.
        addr: [u8; 4],
        /// Port.
        port: u16,
    },
    /// IPv6 address, scope and port.
    V6 {
        /// Address bytes in network order.
        addr: [u8; 16],
        /// Scope id (interface index for link-local addresses), or 0.
        scope_id: u32,
        /// Port.
        port: u16,
    },
    /// A native IB address: GID and service id.
    Ib {
        /// The GID.
        gid: [u8; 16],
        /// The RDMA service id (`RDMA_IB_IP_PS_IB | port` for RTRS).
        service_id: u64,
    },
    /// A family this module does not know, or an empty address.
    Other(u16),
}

/// A socket address for rdma_cm.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct SockAddr(ffi::__kernel_sockaddr_storage);

impl SockAddr {
    fn zeroed() -> Self {
        // SAFETY: all-zero is a valid (empty, family 0) sockaddr_storage.
        Self(unsafe { core::mem::zeroed() })
    }

    /// An IPv4 address.
    pub fn ipv4(addr: [u8; 4], port: u16) -> Self {
        let mut s = Self::zeroed();
        let sin = ffi::sockaddr_in {
            sin_family: ffi::AF_INET as u16,
            sin_port: port.to_be(),
            sin_addr: ffi::in_addr {
                s_addr: u32::from_ne_bytes(addr),
            },
            __pad: [0; 8],
        };
        // SAFETY: a sockaddr_in fits in and is laid out at the start of a
        // sockaddr_storage, which is suitably aligned for it.
        unsafe { core::ptr::write(s.as_mut_ptr().cast::<ffi::sockaddr_in>(), sin) };
        s
    }

    /// An IPv6 address; `scope_id` is 0 unless link-local.
    pub fn ipv6(addr: [u8; 16], scope_id: u32, port: u16) -> Self {
        let mut s = Self::zeroed();
        // SAFETY: all-zero is a valid sockaddr_in6.
        let mut sin6: ffi::sockaddr_in6 = unsafe { core::mem::zeroed() };
        sin6.sin6_family = ffi::AF_INET6 as u16;
        sin6.sin6_port = port.to_be();
        sin6.sin6_scope_id = scope_id;
        sin6.sin6_addr.in6_u.u6_addr8 = addr;
        // SAFETY: as for `ipv4`.
        unsafe { core::ptr::write(s.as_mut_ptr().cast::<ffi::sockaddr_in6>(), sin6) };
        s
    }

    /// A native IB address for RTRS port `port`, as the C RTRS builds it:
    /// the default pkey and service id `RDMA_IB_IP_PS_IB | port`.
    pub fn ib(gid: [u8; 16], port: u16) -> Self {
        let mut s = Self::zeroed();
        // SAFETY: all-zero is a valid sockaddr_ib.
        let mut sib: ffi::sockaddr_ib = unsafe { core::mem::zeroed() };
        sib.sib_family = ffi::AF_IB as u16;
        sib.sib_pkey = 0xffffu16.to_be();
        sib.sib_addr.ib_u.uib_addr8 = gid;
        sib.sib_sid = (ffi::RDMA_IB_IP_PS_IB as u64 | port as u64).to_be();
        sib.sib_sid_mask = u64::MAX.to_be();
        // SAFETY: as for `ipv4` (sockaddr_ib also fits in the storage).
        unsafe { core::ptr::write(s.as_mut_ptr().cast::<ffi::sockaddr_ib>(), sib) };
        s
    }

    /// Copy of the address behind `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` points to a valid `sockaddr_storage`.
    pub unsafe fn from_raw(ptr: *const ffi::__kernel_sockaddr_storage) -> Self {
        // SAFETY: the caller guarantees `ptr` is valid for reads.
        Self(unsafe { core::ptr::read(ptr) })
    }

    /// Copy of the socket address a C caller passed: as many bytes as its
    /// family's structure has (`sockaddr_in`, `sockaddr_in6`, `sockaddr_ib`;
    /// a plain `sockaddr` for others).
    ///
    /// # Safety
    ///
    /// `p` points to a valid socket address of its family's size.
    pub unsafe fn from_c(p: *const ffi::sockaddr) -> Self {
        // SAFETY: the family is readable in any socket address (function
        // contract).
        let family = u32::from(unsafe { (*p).sa_family });
        let len = match family {
            ffi::AF_INET => core::mem::size_of::<ffi::sockaddr_in>(),
            ffi::AF_INET6 => core::mem::size_of::<ffi::sockaddr_in6>(),
            ffi::AF_IB => core::mem::size_of::<ffi::sockaddr_ib>(),
            _ => core::mem::size_of::<ffi::sockaddr>(),
        };
        // SAFETY: all-zero is a valid storage.
        let mut st: ffi::__kernel_sockaddr_storage = unsafe { core::mem::zeroed() };
        // SAFETY: `len` bytes are readable at `p` (function contract), and
        // they fit the storage, which no other reference points to.
        unsafe {
            core::ptr::copy_nonoverlapping(
                p.cast::<u8>(),
                core::ptr::addr_of_mut!(st).cast::<u8>(),
                len,
            )
        };
        Self(st)
    }

    /// The address for a C function that takes a non-const pointer but
    /// only reads through it (`rtrs_clt_open`'s `struct rtrs_addr`).
    pub fn as_storage_ptr(&self) -> *mut ffi::__kernel_sockaddr_storage {
        (&raw const self.0).cast_mut()
    }

    /// The address for a C function that writes one or reads it through a
    /// non-const pointer.
    pub fn as_mut_ptr(&mut self) -> *mut ffi::sockaddr {
        core::ptr::addr_of_mut!(self.0).cast()
    }

    /// The address family (`AF_*`).
    pub fn family(&self) -> u16 {
        // SAFETY: the family is the first field of every layout in the union.
        unsafe { self.0.__bindgen_anon_1.__bindgen_anon_1.ss_family }
    }

    /// The parts of the address.
    pub fn kind(&self) -> SockAddrKind {
        let p = core::ptr::addr_of!(self.0);
        match self.family() as u32 {
            ffi::AF_INET => {
                // SAFETY: the storage holds the layout its family says, and
                // is large and aligned enough for a `sockaddr_in`.
                let sin = unsafe { &*p.cast::<ffi::sockaddr_in>() };
                SockAddrKind::V4 {
                    addr: sin.sin_addr.s_addr.to_ne_bytes(),
                    port: u16::from_be(sin.sin_port),
                }
            }
            ffi::AF_INET6 => {
                // SAFETY: as for AF_INET, with a `sockaddr_in6`.
                let sin6 = unsafe { &*p.cast::<ffi::sockaddr_in6>() };
                SockAddrKind::V6 {
                    // SAFETY: every member of the in6 union is plain bytes.
                    addr: unsafe { sin6.sin6_addr.in6_u.u6_addr8 },
                    scope_id: sin6.sin6_scope_id,
                    port: u16::from_be(sin6.sin6_port),
                }
            }
            ffi::AF_IB => {
                // SAFETY: as for AF_INET, with a `sockaddr_ib`.
                let sib = unsafe { &*p.cast::<ffi::sockaddr_ib>() };
                SockAddrKind::Ib {
                    // SAFETY: every member of the ib union is plain bytes.
                    gid: unsafe { sib.sib_addr.ib_u.uib_addr8 },
                    service_id: u64::from_be(sib.sib_sid),
                }
            }
            f => SockAddrKind::Other(f as u16),
        }
    }
}

impl core::fmt::Debug for SockAddr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.kind().fmt(f)
    }
}

// SAFETY: a `SockAddr` is plain bytes; the pointer-typed union member only
// serves alignment and is never dereferenced.
unsafe impl Send for SockAddr {}
// SAFETY: as above.
unsafe impl Sync for SockAddr {}
