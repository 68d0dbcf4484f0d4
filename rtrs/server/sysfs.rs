// SPDX-License-Identifier: GPL-2.0-or-later

//! The server's sysfs (`rtrs-srv-sysfs.c`, `rtrs-srv-stats.c`), as
//! `Documentation/ABI/testing/sysfs-class-rtrs-server` and the C code lay
//! it out, and ours, `protocol`:
//!
//! ```text
//! /sys/class/rtrs-server/<sessname>/paths/<client@server>/{hca_name,hca_port,src_addr,dst_addr,disconnect,
//!                                                          protocol}
//!                                  /paths/<client@server>/stats/rdma
//! ```
//!
//! A session's directory exists while one of its paths has files: the
//! first path to finish its handshake adds it, under the name the client
//! gave, and the last one to close removes it. A path's files hold the
//! path; [`PathFiles::remove`], when the path closes, breaks that cycle.

use super::path::Path;
use core::fmt::Write;
use core::sync::atomic::Ordering;
use kernel::c_str;
use kernel::prelude::*;
use kernel::str::{BStr, CStr};
use kernel::sync::Arc;
use klib::kstr::sysfs_streq;
use rb::global::Global;
use rb::net::SockAddr;
use rb::sysfs::{attributes, Attribute, Attributes, Class, Device, Kobject, Page, Store};
use rb_rtrs::sockaddr_to_str;
use rtrs_common::name::NameBuf;
use rtrs_common::sysfs::{
    addrs_name, shown, Disconnect, DstAddr, HcaName, HcaPort, PathDirData, Protocol, SrcAddr,
};
use rtrs_proto::ext::Ext;
use rtrs_proto::msg::NAME_MAX;

/// `/sys/class/rtrs-server`, from module init to module exit.
pub(crate) static CLASS: Global<Arc<Class>> = Global::new();

/// The data of `/sys/class/rtrs-server/<sessname>/`: none (it only holds
/// `paths/`).
pub(crate) struct SessDev;

static SESS_ATTRS: Attributes<SessDev> = attributes!(SessDev);

/// A session's directories, and how many paths have files in them.
pub(crate) struct SessFiles {
    // Dropped first: the directory holds a reference on the device.
    paths: Kobject<()>,
    _dev: Device<SessDev>,
    users: u32,
}

impl SessFiles {
    /// `rtrs_srv_create_once_sysfs_root_folders()`.
    fn new(name: &NameBuf) -> Result<Self> {
        let class = CLASS.get().ok_or(ENODEV)?;
        let shown = BStr::from_bytes(name.as_bytes());
        let dev = Device::new_quiet(&class, format_args!("{shown}"), &SESS_ATTRS, SessDev)
            .inspect_err(|e| pr_err!("device_add(): {}\n", e.to_errno()))?;
        let paths = Kobject::dir(&dev, format_args!("paths"))?;
        dev.announce()?;
        Ok(Self {
            paths,
            _dev: dev,
            users: 0,
        })
    }
}

/// The directories of a path; dropping them removes them from sysfs.
pub(crate) struct PathFiles {
    // Dropped first: the child before its parent.
    _stats: Kobject<PathStats>,
    _dir: Kobject<PathDir>,
}

impl PathFiles {
    /// `rtrs_srv_create_path_files()`: adds `paths/<client@server>/` (and
    /// the session's directory, for its first path) and gives the files to
    /// the path. The path's name is the client's session name by now.
    pub(crate) fn add(path: &Arc<Path>) -> Result {
        // `rtrs_addr_to_str()` of the client's address, then ours.
        let name = addrs_name(&path.dst_addr, &path.src_addr);
        let shown = BStr::from_bytes(name.as_bytes());

        let mut sess = path.sess.files.lock();
        if sess.is_none() {
            *sess = Some(SessFiles::new(&path.name())?);
        }
        let Some(s) = sess.as_mut() else {
            return Err(ENODEV);
        };
        let files = Kobject::new(
            &s.paths,
            format_args!("{shown}"),
            &PATH_ATTRS,
            PathDir { path: path.clone() },
        )
        .and_then(|dir| {
            let stats = Kobject::new(
                &dir,
                format_args!("stats"),
                &STATS_ATTRS,
                PathStats { path: path.clone() },
            )?;
            Ok(PathFiles {
                _stats: stats,
                _dir: dir,
            })
        });
        match files {
            Ok(files) => {
                s.users += 1;
                *path.files.lock() = Some(files);
                Ok(())
            }
            Err(e) => {
                pr_err!("{}: kobject_init_and_add(): {}\n", shown, e.to_errno());
                let unused = if s.users == 0 { sess.take() } else { None };
                drop(sess);
                drop(unused);
                Err(e)
            }
        }
    }

    /// `rtrs_srv_destroy_path_files()`: removes the path's files, if it
    /// has them, and the session's directory after its last path. Not from
    /// a store of the path's own files unless that store removed itself.
    pub(crate) fn remove(path: &Path) {
        let files = path.files.lock().take();
        if files.is_none() {
            return;
        }
        drop(files);
        let last = {
            let mut sess = path.sess.files.lock();
            match sess.as_mut() {
                Some(s) if s.users > 1 => {
                    s.users -= 1;
                    None
                }
                _ => sess.take(),
            }
        };
        drop(last);
    }
}

/// The data of `paths/<client@server>/`.
struct PathDir {
    path: Arc<Path>,
}

impl PathDirData for PathDir {
    /// The device of the path's PD, and the port of its first connection.
    fn hca(&self) -> (NameBuf, u32) {
        let mut name = NameBuf::new();
        name.set(self.path.pd.device().name().as_bytes());
        let port = self.path.cons.with(0, |id| Ok(id.port_num())).unwrap_or(0);
        (name, port)
    }

    /// The client's address first: the path's source, seen from it.
    fn addrs(&self) -> (Option<SockAddr>, SockAddr) {
        (Some(self.path.dst_addr), self.path.src_addr)
    }

    /// Closes the path (the client reconnects it); its directory goes with
    /// it, this file first.
    fn disconnect(&self, file: &CStr, input: &[u8], ctx: &mut Store<'_>) -> Result {
        let name = self.path.name();
        if !sysfs_streq(input, b"1") {
            pr_err!("<{}>: {}: invalid value: '{}'\n", name, file, shown(input));
            return Err(EINVAL);
        }
        let mut addr = [0u8; NAME_MAX];
        let n =
            sockaddr_to_str(&self.path.dst_addr, &mut addr).clamp(0, addr.len() as i32) as usize;
        pr_info!(
            "<{}>: disconnect for path {} requested\n",
            name,
            BStr::from_bytes(&addr[..n])
        );
        ctx.remove_self()?;
        self.path.close();
        Ok(())
    }

    /// What the server answered the client.
    fn ext(&self) -> Ext {
        self.path.ext()
    }
}

static PATH_ATTRS: Attributes<PathDir> = attributes!(
    PathDir: HcaName<PathDir>,
    HcaPort<PathDir>,
    SrcAddr<PathDir>,
    DstAddr<PathDir>,
    Disconnect<PathDir>,
    Protocol<PathDir>
);

/// The data of `paths/<client@server>/stats/`.
struct PathStats {
    path: Arc<Path>,
}

/// `rdma`: `<read count> <read bytes> <write count> <write bytes>`; write
/// 1 to reset.
struct Rdma;

#[vtable]
impl Attribute for Rdma {
    type Data = PathStats;
    const NAME: &'static CStr = c_str!("rdma");
    const MODE: u16 = 0o644;

    fn show(s: &PathStats, page: &mut Page<'_>) -> Result {
        let v = |d: usize, k: usize| s.path.stats[d][k].load(Ordering::Relaxed);
        Ok(writeln!(
            page,
            "{} {} {} {}",
            v(0, 0),
            v(0, 1),
            v(1, 0),
            v(1, 1)
        )?)
    }

    fn store(s: &PathStats, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        if !sysfs_streq(input, b"1") {
            return Err(EINVAL);
        }
        for c in s.path.stats.iter().flatten() {
            c.store(0, Ordering::Relaxed);
        }
        Ok(input.len())
    }
}

static STATS_ATTRS: Attributes<PathStats> = attributes!(PathStats: Rdma);
