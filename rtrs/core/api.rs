// SPDX-License-Identifier: GPL-2.0-or-later

//! The C API of `rtrs-core` (`rtrs.h`): path address parsing and printing.

use crate::common::{kerr, sockaddr};
use crate::proto::addr;
use crate::rb::net::ifindex_by_name;
use crate::rb::rdma::SockAddr;
use crate::rb::rtrs_api::core::CoreApi;
use crate::rb::rtrs_api::ScnBuf;
use kernel::prelude::*;

/// The implementation of [`CoreApi`].
pub(crate) struct Core;

impl CoreApi for Core {
    fn addr_to_sockaddr(s: &[u8], port: u16) -> Result<(Option<SockAddr>, SockAddr)> {
        let p = addr::parse_path(s, port, ifindex_by_name).map_err(kerr)?;
        Ok((p.src.as_ref().map(sockaddr::to_cm), sockaddr::to_cm(&p.dst)))
    }

    fn sockaddr_to_str(a: &SockAddr, out: &mut ScnBuf<'_>) {
        let a = sockaddr::from_cm(a);
        let _ = addr::write_sockaddr(out, a.as_ref().map(|a| &a.addr));
    }
}
