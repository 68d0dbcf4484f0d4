// SPDX-License-Identifier: GPL-2.0-or-later

//! The client's sysfs (`rtrs-clt-sysfs.c`, `rtrs-clt-stats.c`), as
//! `Documentation/ABI/testing/sysfs-class-rtrs-client` and the C code
//! lay it out, and ours, `protocol`:
//!
//! ```text
//! /sys/class/rtrs-client/<sessname>/{max_reconnect_attempts,mpath_policy,add_path}
//!                                  /paths/<src@dst>/{hca_name,hca_port,src_addr,dst_addr,state,
//!                                                    reconnect,disconnect,remove_path,cur_latency,
//!                                                    protocol}
//!                                  /paths/<src@dst>/stats/{cpu_migration_from,cpu_migration_to,
//!                                                          reconnects,rdma,reset_all}
//! ```
//!
//! Ownership: the session holds its device ([`SessDev`]), the device's data
//! holds the `paths` directory until the session closes, and each path
//! holds its own directories ([`PathFiles`]) until it is removed or closed.
//! The data of a directory holds what it shows (the core, a path), so the
//! holders break those cycles explicitly: [`SessDev`]'s `Drop`, and whoever
//! takes a path's files out.

use super::path::Path;
use super::sess::Core;
use core::fmt::Write;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::str::{BStr, CStr};
use kernel::sync::{Arc, Mutex};
use kernel::{c_str, new_mutex};
use klib::kstr::sysfs_streq;
use rb::global::Global;
use rb::net::SockAddr;
use rb::sysfs::{attributes, Attribute, Attributes, Class, Device, Kobject, Page, Store};
use rb_rtrs::addr_bytes_to_sockaddr;
use rtrs_common::name::NameBuf;
use rtrs_common::sysfs::{
    shown, Disconnect, DstAddr, HcaName, HcaPort, PathDirData, Protocol, SrcAddr,
};
use rtrs_proto::ext::Ext;
use rtrs_proto::path_sel::MpPolicy;
use rtrs_proto::reconnect::{parse_max_reconnect_attempts, MAX_MAX_RECONN_ATT, MIN_MAX_RECONN_ATT};
use rtrs_proto::state::CltState;

/// `/sys/class/rtrs-client`, from module init to module exit.
pub(crate) static CLASS: Global<Arc<Class>> = Global::new();

/// The data of `/sys/class/rtrs-client/<sessname>/`.
///
/// # Locking
///
/// `paths` (a mutex) guards the `paths/` directory, held while a path is
/// added under it; a path's own `files` lock is taken inside it.
#[pin_data]
pub(crate) struct SessFiles {
    pub(crate) core: Arc<Core>,
    /// `paths/`, until the session closes. Held while a path is added, so
    /// closing waits for `add_path` and a later `add_path` finds `None`.
    #[pin]
    paths: Mutex<Option<Kobject<()>>>,
}

/// A session's device; dropping it removes the session from sysfs.
pub(crate) struct SessDev(Device<SessFiles>);

impl SessDev {
    /// Adds `/sys/class/rtrs-client/<sessname>/` and its `paths/`
    /// (`alloc_clt()`): `EEXIST` if a session of that name exists, `ENODEV`
    /// while the module is not (or no longer) initialised.
    pub(crate) fn new(core: &Arc<Core>) -> Result<Self> {
        let class = CLASS.get().ok_or(ENODEV)?;
        let name = BStr::from_bytes(core.name.as_bytes());
        let dev = Device::new_quiet(
            &class,
            format_args!("{name}"),
            &SESS_ATTRS,
            try_pin_init!(SessFiles { core: core.clone(), paths <- new_mutex!(None, "rtrs_clt_paths_dir") }? Error),
        )
        .inspect_err(|e| pr_err!("{}: cannot add the session to sysfs: {}\n", name, e.to_errno()))?;
        let dev = SessDev(dev);
        let dir = Kobject::dir(&dev.0, format_args!("paths"))?;
        *dev.0.paths.lock() = Some(dir);
        dev.0.announce()?;
        Ok(dev)
    }

    /// Takes `paths/` out: no path is added from now on (a running
    /// `add_path` finishes first). The caller drops it after the paths'
    /// own directories.
    pub(crate) fn close_paths_dir(&self) -> Option<Kobject<()>> {
        self.0.paths.lock().take()
    }

    /// Adds a path's directories to `paths/` (`rtrs_clt_create_path_files()`).
    pub(crate) fn add_path_files(&self, path: &Arc<Path>) -> Result {
        let dir = self.0.paths.lock();
        PathFiles::add(dir.as_ref().ok_or(ENODEV)?, path)
    }
}

impl Drop for SessDev {
    fn drop(&mut self) {
        // The directory holds a reference on the device: take it out, or
        // the device is never released.
        drop(self.close_paths_dir());
    }
}

/// `max_reconnect_attempts`.
struct MaxReconnectAttempts;

#[vtable]
impl Attribute for MaxReconnectAttempts {
    type Data = SessFiles;
    const NAME: &'static CStr = c_str!("max_reconnect_attempts");
    const MODE: u16 = 0o644;

    fn show(f: &SessFiles, page: &mut Page<'_>) -> Result {
        let v = f.core.max_reconnect_attempts.load(Ordering::Relaxed);
        Ok(writeln!(page, "{v}")?)
    }

    fn store(f: &SessFiles, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        let sess = BStr::from_bytes(f.core.name.as_bytes());
        // C's errno: kstrtoint()'s (ERANGE for an int overflow), else
        // EINVAL for a value out of range.
        let v = parse_max_reconnect_attempts(input).map_err(|e| {
            pr_err!(
                "<{}>: {}: invalid value '{}' (an integer from {} to {})\n",
                sess,
                Self::NAME,
                shown(input),
                MIN_MAX_RECONN_ATT,
                MAX_MAX_RECONN_ATT
            );
            rtrs_common::kerr(e)
        })?;
        f.core.max_reconnect_attempts.store(v, Ordering::Relaxed);
        Ok(input.len())
    }
}

/// `mpath_policy`.
struct MpathPolicy;

#[vtable]
impl Attribute for MpathPolicy {
    type Data = SessFiles;
    const NAME: &'static CStr = c_str!("mpath_policy");
    const MODE: u16 = 0o644;

    fn show(f: &SessFiles, page: &mut Page<'_>) -> Result {
        let id = f.core.mp_policy.load(Ordering::Relaxed) as i32;
        match MpPolicy::from_id(id) {
            Some(p) => Ok(writeln!(page, "{} ({}: {})", p.name(), p.abbrev(), id)?),
            None => Ok(writeln!(page, "Unknown ({id})")?),
        }
    }

    fn store(f: &SessFiles, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        let p = MpPolicy::parse(input).map_err(|_| {
            pr_err!(
                "<{}>: {}: unknown policy '{}'\n",
                BStr::from_bytes(f.core.name.as_bytes()),
                Self::NAME,
                shown(input)
            );
            EINVAL
        })?;
        f.core.mp_policy.store(p.id() as u32, Ordering::Relaxed);
        Ok(input.len())
    }
}

/// `add_path`.
struct AddPath;

#[vtable]
impl Attribute for AddPath {
    type Data = SessFiles;
    const NAME: &'static CStr = c_str!("add_path");
    const MODE: u16 = 0o644;

    fn show(_f: &SessFiles, page: &mut Page<'_>) -> Result {
        Ok(write!(
            page,
            "Usage: echo [<source addr>@]<destination addr> > {}\n\n*addr ::= [ ip:<ipv4|ipv6> | gid:<gid> ]\n",
            Self::NAME
        )?)
    }

    fn store(f: &SessFiles, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        // Up to the newline (or a NUL: C's parser stops there), as a C string.
        let end = input
            .iter()
            .position(|&b| b == b'\n' || b == 0)
            .unwrap_or(input.len());
        let (src, dst) = addr_bytes_to_sockaddr(&input[..end], f.core.port).map_err(|e| {
            if e == ENOMEM {
                return e;
            }
            pr_err!(
                "<{}>: {}: cannot parse '{}'\n",
                BStr::from_bytes(f.core.name.as_bytes()),
                Self::NAME,
                shown(input)
            );
            EINVAL
        })?;
        let dir = f.paths.lock();
        let dir = dir.as_ref().ok_or(ENODEV)?;
        Core::add_path(&f.core, src, dst, dir)?;
        Ok(input.len())
    }
}

static SESS_ATTRS: Attributes<SessFiles> =
    attributes!(SessFiles: MaxReconnectAttempts, MpathPolicy, AddPath);

/// The directories of a path; dropping them removes them from sysfs.
pub(crate) struct PathFiles {
    // Dropped first: the child before its parent.
    _stats: Kobject<PathStats>,
    _dir: Kobject<PathDir>,
}

impl PathFiles {
    /// Adds `paths/<src@dst>/` and its `stats/` for `path`, and gives them
    /// to the path.
    pub(crate) fn add(paths: &Kobject<()>, path: &Arc<Path>) -> Result {
        let name = path.dir_name();
        let shown = BStr::from_bytes(name.as_bytes());
        let dir = Kobject::new(
            paths,
            format_args!("{shown}"),
            &PATH_ATTRS,
            PathDir { path: path.clone() },
        )
        .inspect_err(|e| {
            pr_err!(
                "{}: cannot add the path to sysfs: {}\n",
                shown,
                e.to_errno()
            )
        })?;
        let stats = Kobject::new(
            &dir,
            format_args!("stats"),
            &STATS_ATTRS,
            PathStats { path: path.clone() },
        )?;
        *path.files.lock() = Some(PathFiles {
            _stats: stats,
            _dir: dir,
        });
        Ok(())
    }

    /// Removes `path`'s directories, if it has them. Not from a store of
    /// the path's own files unless that store removed itself first.
    pub(crate) fn remove(path: &Path) {
        let files = path.files.lock().take();
        drop(files);
    }
}

/// The data of `paths/<src@dst>/`.
struct PathDir {
    path: Arc<Path>,
}

impl PathDir {
    /// Logs that `input` is not what the attribute `name` takes.
    fn unknown(&self, name: &CStr, input: &[u8]) -> Error {
        pr_err!(
            "<{}>: {}: unknown value: '{}'\n",
            BStr::from_bytes(self.path.core.name.as_bytes()),
            name,
            shown(input)
        );
        EINVAL
    }
}

impl PathDirData for PathDir {
    fn hca(&self) -> (NameBuf, u32) {
        self.path.hca()
    }

    fn addrs(&self) -> (Option<SockAddr>, SockAddr) {
        self.path.addrs()
    }

    /// Closes the path's connections; it stays, closed.
    fn disconnect(&self, file: &CStr, input: &[u8], _ctx: &mut Store<'_>) -> Result {
        if !sysfs_streq(input, b"1") {
            return Err(self.unknown(file, input));
        }
        self.path.close_conns(true);
        Ok(())
    }

    /// What the server answered on the last connection.
    fn ext(&self) -> Ext {
        self.path.srv().ext
    }
}

/// `state`.
struct State;

#[vtable]
impl Attribute for State {
    type Data = PathDir;
    const NAME: &'static CStr = c_str!("state");
    const MODE: u16 = 0o444;

    fn show(d: &PathDir, page: &mut Page<'_>) -> Result {
        let s = if d.path.state() == CltState::Connected {
            "connected"
        } else {
            "disconnected"
        };
        Ok(writeln!(page, "{s}")?)
    }
}

/// `reconnect`: write 1 to reconnect now.
struct Reconnect;

#[vtable]
impl Attribute for Reconnect {
    type Data = PathDir;
    const NAME: &'static CStr = c_str!("reconnect");
    const MODE: u16 = 0o644;

    fn show(_d: &PathDir, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "Usage: echo 1 > {}", Self::NAME)?)
    }

    fn store(d: &PathDir, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        if !sysfs_streq(input, b"1") {
            return Err(d.unknown(Self::NAME, input));
        }
        d.path.reconnect_now()?;
        Ok(input.len())
    }
}

/// `remove_path`: write 1 to close the path and remove it.
struct RemovePath;

#[vtable]
impl Attribute for RemovePath {
    type Data = PathDir;
    const NAME: &'static CStr = c_str!("remove_path");
    const MODE: u16 = 0o644;

    fn show(_d: &PathDir, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "Usage: echo 1 > {}", Self::NAME)?)
    }

    fn store(d: &PathDir, input: &[u8], ctx: &mut Store<'_>) -> Result<usize> {
        if !sysfs_streq(input, b"1") {
            return Err(d.unknown(Self::NAME, input));
        }
        // This store removes its own directory; a concurrent one lost.
        ctx.remove_self()?;
        if d.path.kill() {
            d.path.core.remove_path(&d.path);
            PathFiles::remove(&d.path);
        }
        Ok(input.len())
    }
}

/// `cur_latency`: the last heartbeat round trip.
struct CurLatency;

#[vtable]
impl Attribute for CurLatency {
    type Data = PathDir;
    const NAME: &'static CStr = c_str!("cur_latency");
    const MODE: u16 = 0o444;

    fn show(d: &PathDir, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{} ns", d.path.cur_latency_ns())?)
    }
}

static PATH_ATTRS: Attributes<PathDir> = attributes!(
    PathDir: HcaName<PathDir>,
    HcaPort<PathDir>,
    SrcAddr<PathDir>,
    DstAddr<PathDir>,
    State,
    Reconnect,
    Disconnect<PathDir>,
    RemovePath,
    CurLatency,
    Protocol<PathDir>
);

/// The data of `paths/<src@dst>/stats/`.
struct PathStats {
    path: Arc<Path>,
}

/// A statistic's store (`STAT_STORE_FUNC`): `1` resets it, anything else
/// (`0` included, as in C) is `EINVAL`.
fn stat_store(input: &[u8], reset: impl FnOnce()) -> Result<usize> {
    if !sysfs_streq(input, b"1") {
        return Err(EINVAL);
    }
    reset();
    Ok(input.len())
}

/// Writes one `%d ` per CPU and a newline.
fn write_per_cpu(page: &mut Page<'_>, counts: &[core::sync::atomic::AtomicI32]) -> Result {
    for c in counts {
        write!(page, "{} ", c.load(Ordering::Relaxed))?;
    }
    Ok(page.write_str("\n")?)
}

/// `cpu_migration_from`: per CPU, completions of its connections that ran
/// on another CPU.
struct CpuMigrationFrom;

#[vtable]
impl Attribute for CpuMigrationFrom {
    type Data = PathStats;
    const NAME: &'static CStr = c_str!("cpu_migration_from");
    const MODE: u16 = 0o644;

    fn show(s: &PathStats, page: &mut Page<'_>) -> Result {
        write_per_cpu(page, &s.path.stats.migr_from)
    }

    fn store(s: &PathStats, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        stat_store(input, || s.path.stats.reset_cpu_migr())
    }
}

/// `cpu_migration_to`: per CPU, completions it ran for another CPU.
struct CpuMigrationTo;

#[vtable]
impl Attribute for CpuMigrationTo {
    type Data = PathStats;
    const NAME: &'static CStr = c_str!("cpu_migration_to");
    const MODE: u16 = 0o644;

    fn show(s: &PathStats, page: &mut Page<'_>) -> Result {
        write_per_cpu(page, &s.path.stats.migr_to)
    }

    fn store(s: &PathStats, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        stat_store(input, || s.path.stats.reset_cpu_migr())
    }
}

/// `reconnects`: `<successful> <failed>`.
struct Reconnects;

#[vtable]
impl Attribute for Reconnects {
    type Data = PathStats;
    const NAME: &'static CStr = c_str!("reconnects");
    const MODE: u16 = 0o644;

    fn show(s: &PathStats, page: &mut Page<'_>) -> Result {
        let st = &s.path.stats;
        Ok(writeln!(
            page,
            "{} {}",
            st.reconnect_ok.load(Ordering::Relaxed),
            st.reconnect_fail.load(Ordering::Relaxed)
        )?)
    }

    fn store(s: &PathStats, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        stat_store(input, || s.path.stats.reset_reconnects())
    }
}

/// `rdma`: `<read count> <read bytes> <write count> <write bytes>
/// <inflight> <failed over>`.
struct Rdma;

#[vtable]
impl Attribute for Rdma {
    type Data = PathStats;
    const NAME: &'static CStr = c_str!("rdma");
    const MODE: u16 = 0o644;

    fn show(s: &PathStats, page: &mut Page<'_>) -> Result {
        let st = &s.path.stats;
        let v = |d: usize, k: usize| st.rdma[d][k].load(Ordering::Relaxed);
        Ok(writeln!(
            page,
            "{} {} {} {} {} {}",
            v(0, 0),
            v(0, 1),
            v(1, 0),
            v(1, 1),
            s.path.inflight() as u32,
            st.failover_cnt.load(Ordering::Relaxed)
        )?)
    }

    fn store(s: &PathStats, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        stat_store(input, || s.path.stats.reset_rdma())
    }
}

/// `reset_all`: write 1 to reset every statistic above.
struct ResetAll;

#[vtable]
impl Attribute for ResetAll {
    type Data = PathStats;
    const NAME: &'static CStr = c_str!("reset_all");
    const MODE: u16 = 0o644;

    fn show(_s: &PathStats, page: &mut Page<'_>) -> Result {
        Ok(page.write_str("echo 1 to reset all statistics\n")?)
    }

    fn store(s: &PathStats, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        // The in-flight count is not reset: it is what min-inflight
        // chooses by, not a statistic (C zeroes it, which skews the choice).
        stat_store(input, || {
            let st = &s.path.stats;
            st.reset_rdma();
            st.reset_cpu_migr();
            st.reset_reconnects();
        })
    }
}

static STATS_ATTRS: Attributes<PathStats> =
    attributes!(PathStats: CpuMigrationFrom, CpuMigrationTo, Reconnects, Rdma, ResetAll);
