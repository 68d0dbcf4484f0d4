// SPDX-License-Identifier: GPL-2.0-or-later

//! Path address parsing and printing of `rtrs-core`, behind the C ABI of
//! `rtrs.h` (`abi.rs`).

use super::abi::ScnBuf;
use kernel::prelude::*;
use rb::net::ifindex_by_name;
use rb::net::SockAddr;
use rtrs_common::{kerr, sockaddr};
use rtrs_proto::addr;

/// `rtrs_addr_to_sockaddr()`: parses `[src@|src,]dst` (at most `s.len()`
/// bytes, up to a NUL), the destination with `port`.
pub(crate) fn addr_to_sockaddr(s: &[u8], port: u16) -> Result<(Option<SockAddr>, SockAddr)> {
    let p = addr::parse_path(s, port, ifindex_by_name).map_err(kerr)?;
    Ok((p.src.as_ref().map(sockaddr::to_cm), sockaddr::to_cm(&p.dst)))
}

/// `sockaddr_to_str()`: writes `a` as RTRS prints it (`ip:1.2.3.4`,
/// `gid:...`).
pub(crate) fn sockaddr_to_str(a: &SockAddr, out: &mut ScnBuf<'_>) {
    let a = sockaddr::from_cm(a);
    let _ = addr::write_sockaddr(out, a.as_ref().map(|a| &a.addr));
}
