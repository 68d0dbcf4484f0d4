// SPDX-License-Identifier: GPL-2.0-or-later

//! Conversions between the protocol's path addresses and rdma_cm's socket
//! addresses.

use rb::net::SockAddr as CmAddr;
use rb::net::SockAddrKind;
use rtrs_proto::addr::{Addr, SockAddr};

/// The rdma_cm address of `a`.
pub fn to_cm(a: &SockAddr) -> CmAddr {
    match a.addr {
        Addr::Ipv4(ip) => CmAddr::ipv4(ip, a.port),
        Addr::Ipv6 { addr, scope_id } => CmAddr::ipv6(addr, scope_id, a.port),
        Addr::Gid(gid) => CmAddr::ib(gid, a.port),
    }
}

/// The protocol's view of an rdma_cm address; `None` for other families.
pub fn from_cm(a: &CmAddr) -> Option<SockAddr> {
    match a.kind() {
        SockAddrKind::V4 { addr, port } => Some(SockAddr {
            addr: Addr::Ipv4(addr),
            port,
        }),
        SockAddrKind::V6 {
            addr,
            scope_id,
            port,
        } => Some(SockAddr {
            addr: Addr::Ipv6 { addr, scope_id },
            port,
        }),
        SockAddrKind::Ib { gid, service_id } => Some(SockAddr {
            addr: Addr::Gid(gid),
            port: service_id as u16,
        }),
        SockAddrKind::Other(_) => None,
    }
}

/// Whether two rdma_cm addresses name the same host (ports aside), as C's
/// `sockaddr_cmp()` compares paths.
pub fn same_addr(a: &CmAddr, b: &CmAddr) -> bool {
    match (from_cm(a), from_cm(b)) {
        (Some(a), Some(b)) => a.addr == b.addr,
        _ => false,
    }
}
