// SPDX-License-Identifier: GPL-2.0-or-later

//! The server's sysfs (`rnbd-srv-sysfs.c`), as
//! `Documentation/ABI/testing/sysfs-class-rnbd-server` lays it out:
//!
//! ```text
//! /sys/class/rnbd-server/ctl/devices/<device>/block_dev -> <the disk>
//!                                    <device>/sessions/<sessname>/{access_mode,read_only,mapping_path,force_close}
//! ```

use super::session::Session;
use core::fmt::Write;
use kernel::alloc::KVec;
use kernel::c_str;
use kernel::prelude::*;
use kernel::str::{BStr, CStr};
use kernel::sync::Arc;
use rb::sysfs::{attributes, Attribute, Attributes, Class, Device, Kobject, Link, Page, Store};
use rb_block::bdev::Bdev;
use rnbd_proto::msg::AccessMode;
use rnbd_proto::sysfs::{parse_force_close, read_only_str, FORCE_CLOSE_USAGE};

static CTL_ATTRS: Attributes<()> = attributes!(());

/// `/sys/class/rnbd-server/ctl/devices/` and what holds it.
pub(crate) struct Sysfs {
    // Fields drop in order: the directory, the device, the class.
    pub(crate) devices: Kobject<()>,
    _ctl: Device<()>,
    _class: Arc<Class>,
}

impl Sysfs {
    /// `rnbd_srv_create_sysfs_files`.
    pub(crate) fn new() -> Result<Self> {
        let class = Class::new(c_str!("rnbd-server"))?;
        let ctl = Device::new(&class, format_args!("ctl"), &CTL_ATTRS, ())?;
        let devices = Kobject::dir(&ctl, format_args!("devices"))?;
        Ok(Self {
            devices,
            _ctl: ctl,
            _class: class,
        })
    }
}

/// The directory of one exported device: `devices/<name>/` with its
/// `block_dev` link and `sessions/`.
pub(crate) struct DevFiles {
    // Fields drop in order: the link, `sessions/`, the directory.
    _link: Link,
    pub(crate) sessions: Kobject<()>,
    _dir: Kobject<()>,
}

impl DevFiles {
    /// `rnbd_srv_create_dev_sysfs`.
    pub(crate) fn new(sysfs: &Sysfs, name: &BStr, bdev: &Bdev) -> Result<Self> {
        let dir = Kobject::dir(&sysfs.devices, format_args!("{}", name))?;
        let sessions = Kobject::dir(&dir, format_args!("sessions"))?;
        let link = Link::new(&dir, &bdev.disk_kobject(), format_args!("block_dev"))?;
        Ok(Self {
            _link: link,
            sessions,
            _dir: dir,
        })
    }
}

/// The data of `sessions/<sessname>/`: one session's opening of a device.
pub(crate) struct SessDevFiles {
    pub(crate) sess: Arc<Session>,
    pub(crate) dev_id: u32,
    /// Tells this opening from a later one with the same id.
    pub(crate) serial: u64,
    pub(crate) mode: AccessMode,
    pub(crate) mapping_path: KVec<u8>,
}

static SESS_DEV_ATTRS: Attributes<SessDevFiles> =
    attributes!(SessDevFiles: AccessModeAttr, ReadOnly, MappingPath, ForceClose);

/// `rnbd_srv_create_dev_session_sysfs`.
pub(crate) fn sess_dev_files(
    sessions: &Kobject<()>,
    data: SessDevFiles,
) -> Result<Kobject<SessDevFiles>> {
    let sess = data.sess.clone();
    Kobject::new(
        sessions,
        format_args!("{}", sess.name()),
        &SESS_DEV_ATTRS,
        data,
    )
}

struct AccessModeAttr;

#[vtable]
impl Attribute for AccessModeAttr {
    type Data = SessDevFiles;
    const NAME: &'static CStr = c_str!("access_mode");
    const MODE: u16 = 0o444;

    fn show(d: &SessDevFiles, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{}", d.mode.as_str())?)
    }
}

struct ReadOnly;

#[vtable]
impl Attribute for ReadOnly {
    type Data = SessDevFiles;
    const NAME: &'static CStr = c_str!("read_only");
    const MODE: u16 = 0o444;

    fn show(d: &SessDevFiles, page: &mut Page<'_>) -> Result {
        Ok(writeln!(
            page,
            "{}",
            read_only_str(d.mode == AccessMode::Ro)
        )?)
    }
}

struct MappingPath;

#[vtable]
impl Attribute for MappingPath {
    type Data = SessDevFiles;
    const NAME: &'static CStr = c_str!("mapping_path");
    const MODE: u16 = 0o444;

    fn show(d: &SessDevFiles, page: &mut Page<'_>) -> Result {
        page.write_bytes(&d.mapping_path)?;
        Ok(page.write_str("\n")?)
    }
}

struct ForceClose;

#[vtable]
impl Attribute for ForceClose {
    type Data = SessDevFiles;
    const NAME: &'static CStr = c_str!("force_close");
    const MODE: u16 = 0o644;

    fn show(_d: &SessDevFiles, page: &mut Page<'_>) -> Result {
        Ok(page.write_str(FORCE_CLOSE_USAGE)?)
    }

    fn store(d: &SessDevFiles, input: &[u8], ctx: &mut Store<'_>) -> Result<usize> {
        let who = BStr::from_bytes(&d.mapping_path);
        if parse_force_close(input).is_err() {
            pr_err!(
                "<{}@{}>: force_close: invalid value: '{}'\n",
                who,
                d.sess.name(),
                BStr::from_bytes(input)
            );
            return Err(EINVAL);
        }
        pr_info!("<{}@{}>: force close requested\n", who, d.sess.name());
        // First remove our own file: closing removes this directory, which
        // would otherwise wait for this very store.
        ctx.remove_self()?;
        d.sess.force_close(d.dev_id, d.serial);
        Ok(input.len())
    }
}
