// SPDX-License-Identifier: GPL-2.0-or-later

//! The sysfs files of rnbd-client (`rnbd-clt-sysfs.c`):
//! `/sys/class/rnbd-client/ctl/map_device` and `/sys/block/rnbd<N>/rnbd/*`.

use super::device::Device;
use super::Client;
use core::fmt::Write;
use kernel::c_str;
use kernel::prelude::*;
use kernel::str::{BStr, CStr};
use kernel::sync::Arc;
use rb::errno::EALREADY;
use rb::sysfs::{attributes, Attribute, Attributes, Page, Store};
use rnbd_proto::options::{parse_remap, parse_resize, UnmapMode};
use rnbd_proto::sysfs::{MAP_DEVICE_USAGE, REMAP_DEVICE_USAGE, RESIZE_USAGE, UNMAP_DEVICE_USAGE};

/// The data of `ctl`.
pub(crate) struct Ctl {
    pub(crate) client: Arc<Client>,
}

/// `ctl/map_device`.
struct MapDevice;

#[vtable]
impl Attribute for MapDevice {
    type Data = Ctl;
    const NAME: &'static CStr = c_str!("map_device");
    const MODE: u16 = 0o644;

    fn show(_ctl: &Ctl, page: &mut Page<'_>) -> Result {
        Ok(page.write_str(MAP_DEVICE_USAGE)?)
    }

    fn store(ctl: &Ctl, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        ctl.client.map(input)?;
        Ok(input.len())
    }
}

pub(crate) static CTL_ATTRS: Attributes<Ctl> = attributes!(Ctl: MapDevice);

/// The data of `/sys/block/rnbd<N>/rnbd/`.
pub(crate) struct DevSys {
    pub(crate) dev: Arc<Device>,
    pub(crate) client: Arc<Client>,
}

struct State;

#[vtable]
impl Attribute for State {
    type Data = DevSys;
    const NAME: &'static CStr = c_str!("state");
    const MODE: u16 = 0o444;

    fn show(d: &DevSys, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{}", d.dev.io.state().as_str())?)
    }
}

struct NrPollQueues;

#[vtable]
impl Attribute for NrPollQueues {
    type Data = DevSys;
    const NAME: &'static CStr = c_str!("nr_poll_queues");
    const MODE: u16 = 0o444;

    fn show(d: &DevSys, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{}", d.dev.nr_poll_queues)?)
    }
}

struct MappingPath;

#[vtable]
impl Attribute for MappingPath {
    type Data = DevSys;
    const NAME: &'static CStr = c_str!("mapping_path");
    const MODE: u16 = 0o444;

    fn show(d: &DevSys, page: &mut Page<'_>) -> Result {
        page.write_bytes(&d.dev.pathname)?;
        Ok(page.write_str("\n")?)
    }
}

struct AccessModeAttr;

#[vtable]
impl Attribute for AccessModeAttr {
    type Data = DevSys;
    const NAME: &'static CStr = c_str!("access_mode");
    const MODE: u16 = 0o444;

    fn show(d: &DevSys, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{}", d.dev.access_mode.as_str())?)
    }
}

struct SessionAttr;

#[vtable]
impl Attribute for SessionAttr {
    type Data = DevSys;
    const NAME: &'static CStr = c_str!("session");
    const MODE: u16 = 0o444;

    fn show(d: &DevSys, page: &mut Page<'_>) -> Result {
        page.write_bytes(&d.dev.sess.name)?;
        Ok(page.write_str("\n")?)
    }
}

/// `input` with surrounding whitespace removed, for messages.
fn shown(input: &[u8]) -> &BStr {
    let s = input
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&input[input.len()..], |i| &input[i..]);
    let e = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    BStr::from_bytes(&s[..e])
}

struct UnmapDevice;

#[vtable]
impl Attribute for UnmapDevice {
    type Data = DevSys;
    const NAME: &'static CStr = c_str!("unmap_device");
    const MODE: u16 = 0o644;

    fn show(_d: &DevSys, page: &mut Page<'_>) -> Result {
        Ok(page.write_str(UNMAP_DEVICE_USAGE)?)
    }

    fn store(d: &DevSys, input: &[u8], ctx: &mut Store<'_>) -> Result<usize> {
        let force = match UnmapMode::parse(input) {
            Ok(UnmapMode::Force) => true,
            Ok(UnmapMode::Normal) => false,
            Err(_) => {
                pr_err!(
                    "{}: unmap_device: Invalid value: {}\n",
                    d.dev.io.name(),
                    shown(input)
                );
                return Err(EINVAL);
            }
        };
        pr_info!(
            "{}: Unmapping device, option: {}.\n",
            d.dev.io.name(),
            if force { "force" } else { "normal" }
        );
        d.client.unmap(&d.dev, force, Some(ctx)).inspect_err(|e| {
            if *e != EALREADY() {
                pr_err!("{}: unmap_device: {}\n", d.dev.io.name(), e.to_errno());
            }
        })?;
        Ok(input.len())
    }
}

struct Resize;

#[vtable]
impl Attribute for Resize {
    type Data = DevSys;
    const NAME: &'static CStr = c_str!("resize");
    const MODE: u16 = 0o644;

    fn show(_d: &DevSys, page: &mut Page<'_>) -> Result {
        Ok(page.write_str(RESIZE_USAGE)?)
    }

    fn store(d: &DevSys, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        let sectors = parse_resize(input).map_err(|e| Error::from_errno(e.to_errno()))?;
        let disk = d.dev.disk.lock();
        if d.dev.io.state() != rnbd_proto::sysfs::DevState::Mapped {
            pr_err!("Failed to set new size of the device, device is not opened\n");
            return Err(ENOENT);
        }
        d.dev.change_capacity(&disk, sectors);
        Ok(input.len())
    }
}

struct RemapDevice;

#[vtable]
impl Attribute for RemapDevice {
    type Data = DevSys;
    const NAME: &'static CStr = c_str!("remap_device");
    const MODE: u16 = 0o644;

    fn show(_d: &DevSys, page: &mut Page<'_>) -> Result {
        Ok(page.write_str(REMAP_DEVICE_USAGE)?)
    }

    fn store(d: &DevSys, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        use rnbd_proto::sysfs::DevState;
        if parse_remap(input).is_err() {
            pr_err!(
                "{}: remap_device: Invalid value: {}\n",
                d.dev.io.name(),
                shown(input)
            );
            return Err(EINVAL);
        }
        let err = {
            let _disk = d.dev.disk.lock();
            match d.dev.io.state() {
                DevState::MappedDisconnected => None,
                DevState::Unmapped => Some(ENODEV),
                DevState::Mapped => Some(EALREADY()),
                DevState::Init => Some(EBUSY),
            }
        };
        if let Some(e) = err {
            return Err(e);
        }
        pr_info!("{}: Remapping device.\n", d.dev.io.name());
        super::session::remap_device(&d.dev).inspect_err(|e| {
            pr_err!("{}: remap_device: {}\n", d.dev.io.name(), e.to_errno());
        })?;
        Ok(input.len())
    }
}

pub(crate) static DEV_ATTRS: Attributes<DevSys> = attributes!(DevSys:
    State, NrPollQueues, MappingPath, AccessModeAttr, UnmapDevice, Resize, RemapDevice,
    SessionAttr);
