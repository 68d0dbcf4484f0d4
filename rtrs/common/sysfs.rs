// SPDX-License-Identifier: GPL-2.0-or-later

//! What the sysfs of both sides shares (`rtrs-clt-sysfs.c`,
//! `rtrs-srv-sysfs.c`): the files every path directory has (`hca_name`,
//! `hca_port`, `src_addr`, `dst_addr`, `disconnect`, and ours, `protocol`),
//! addresses printed as `rtrs-core` prints them, and a path directory's
//! name.

use crate::name::NameBuf;
use core::fmt::Write;
use core::marker::PhantomData;
use kernel::prelude::*;
use kernel::str::{BStr, CStr};
use rb::net::SockAddr;
use rb::sysfs::{Attribute, Page, Store};
use rb_rtrs::{addr_to_str, sockaddr_to_str};
use rtrs_proto::ext::Ext;
use rtrs_proto::msg::NAME_MAX;

/// Writes `addr` as `rtrs-core`'s `sockaddr_to_str()` prints it, and a
/// newline.
pub fn write_sockaddr(page: &mut Page<'_>, addr: &SockAddr) -> Result {
    let mut buf = [0u8; NAME_MAX];
    let n = sockaddr_to_str(addr, &mut buf).clamp(0, buf.len() as i32) as usize;
    page.write_bytes(&buf[..n])?;
    Ok(page.write_str("\n")?)
}

/// `src@dst`, as `rtrs-core`'s `rtrs_addr_to_str()` prints it: the name of
/// a path's directory, and of a server path until the client names it.
pub fn addrs_name(src: &SockAddr, dst: &SockAddr) -> NameBuf {
    let mut buf = [0u8; NAME_MAX];
    addr_to_str(src, dst, &mut buf);
    let mut name = NameBuf::new();
    name.set(&buf[..buf.iter().position(|&b| b == 0).unwrap_or(buf.len())]);
    name
}

/// `input` without one trailing newline, for messages.
pub fn shown(input: &[u8]) -> &BStr {
    BStr::from_bytes(input.strip_suffix(b"\n").unwrap_or(input))
}

/// The data of a path's directory (`paths/<src@dst>/`), as the files both
/// sides have see it.
pub trait PathDirData: Send + Sync + 'static {
    /// The HCA's name and port (`hca_name`, `hca_port`).
    fn hca(&self) -> (NameBuf, u32);

    /// What `src_addr` and `dst_addr` show: the path's addresses as this
    /// side sees them (an unknown one shows an empty line).
    fn addrs(&self) -> (Option<SockAddr>, SockAddr);

    /// A write of `input` to `disconnect` (`file`): the client closes the
    /// path's connections, the server the path, removing its directory.
    fn disconnect(&self, file: &CStr, input: &[u8], ctx: &mut Store<'_>) -> Result;

    /// What the path negotiated of RTRS 2.1 (`protocol`).
    fn ext(&self) -> Ext;
}

/// `hca_name`.
pub struct HcaName<D>(PhantomData<D>);

#[vtable]
impl<D: PathDirData> Attribute for HcaName<D> {
    type Data = D;
    const NAME: &'static CStr = kernel::c_str!("hca_name");
    const MODE: u16 = 0o444;

    fn show(d: &D, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{}", d.hca().0)?)
    }
}

/// `hca_port`.
pub struct HcaPort<D>(PhantomData<D>);

#[vtable]
impl<D: PathDirData> Attribute for HcaPort<D> {
    type Data = D;
    const NAME: &'static CStr = kernel::c_str!("hca_port");
    const MODE: u16 = 0o444;

    fn show(d: &D, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{}", d.hca().1)?)
    }
}

/// `src_addr`.
pub struct SrcAddr<D>(PhantomData<D>);

#[vtable]
impl<D: PathDirData> Attribute for SrcAddr<D> {
    type Data = D;
    const NAME: &'static CStr = kernel::c_str!("src_addr");
    const MODE: u16 = 0o444;

    fn show(d: &D, page: &mut Page<'_>) -> Result {
        match d.addrs().0 {
            Some(a) => write_sockaddr(page, &a),
            None => Ok(page.write_str("\n")?),
        }
    }
}

/// `dst_addr`.
pub struct DstAddr<D>(PhantomData<D>);

#[vtable]
impl<D: PathDirData> Attribute for DstAddr<D> {
    type Data = D;
    const NAME: &'static CStr = kernel::c_str!("dst_addr");
    const MODE: u16 = 0o444;

    fn show(d: &D, page: &mut Page<'_>) -> Result {
        write_sockaddr(page, &d.addrs().1)
    }
}

/// `protocol`, ours (C has no such file): the protocol version the path
/// runs and the RTRS 2.1 features it uses, e.g. `2.1 fence read_rsp`.
pub struct Protocol<D>(PhantomData<D>);

#[vtable]
impl<D: PathDirData> Attribute for Protocol<D> {
    type Data = D;
    const NAME: &'static CStr = kernel::c_str!("protocol");
    const MODE: u16 = 0o444;

    fn show(d: &D, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{}", d.ext().sysfs_str())?)
    }
}

/// `disconnect`: write 1 to close the path.
pub struct Disconnect<D>(PhantomData<D>);

#[vtable]
impl<D: PathDirData> Attribute for Disconnect<D> {
    type Data = D;
    const NAME: &'static CStr = kernel::c_str!("disconnect");
    const MODE: u16 = 0o644;

    fn show(_d: &D, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "Usage: echo 1 > {}", Self::NAME)?)
    }

    fn store(d: &D, input: &[u8], ctx: &mut Store<'_>) -> Result<usize> {
        d.disconnect(Self::NAME, input, ctx)?;
        Ok(input.len())
    }
}
