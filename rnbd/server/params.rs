// SPDX-License-Identifier: GPL-2.0-or-later

//! The module parameters of `rnbd-server`, as in C: `port_nr` and
//! `dev_search_path` (with `%SESSNAME%`), both 0444.

use kernel::alloc::{flags::GFP_KERNEL, KVec};
use kernel::prelude::*;
use kernel::str::CStr;
use rb::param::{module_param, ParamLocked, ParamValue, StringParam, UshortParam};
use rb::sysfs::Page;
use rnbd_proto::devpath::{self, PATH_MAX};
use rnbd_proto::msg::RTRS_PORT;

module_param! {
    /// The port RTRS listens on.
    pub(crate) static PORT_NR: UshortParam = UshortParam::new(RTRS_PORT);
    name: port_nr, perm: 0o444,
    desc: "The port number the server is listening on (default: 1234)";
}

/// `dev_search_path`: a string parameter cut at its last newline, as
/// `dev_search_path_set` stores it.
pub(crate) struct DevSearchPath(StringParam<PATH_MAX>);

impl ParamValue for DevSearchPath {
    const TYPE: &'static str = "string";

    fn set(&self, val: Option<&CStr>, locked: &mut ParamLocked) -> Result {
        let v = devpath::param_value(val.ok_or(EINVAL)?.as_bytes()).map_err(super::errno)?;
        self.0.store(v, locked)?;
        pr_info!(
            "dev_search_path changed to '{}'\n",
            kernel::str::BStr::from_bytes(v)
        );
        Ok(())
    }

    fn get(&self, page: &mut Page<'_>, locked: &ParamLocked) -> Result {
        self.0.get(page, locked)
    }
}

module_param! {
    /// Where client device paths are looked up.
    pub(crate) static DEV_SEARCH_PATH: DevSearchPath = DevSearchPath(StringParam::new("/"));
    name: dev_search_path, perm: 0o444,
    desc: "Sets the dev_search_path. When a device is mapped this path is prepended to the device path from the map device operation.  If %SESSNAME% is specified in a path, then device will be searched in a session namespace. (default: /)";
}

/// A device path built by [`full_path`]: `len` bytes and a NUL in `buf`.
pub(crate) struct FullPath {
    buf: KVec<u8>,
    len: usize,
}

impl FullPath {
    /// The path, as a C string.
    pub(crate) fn as_cstr(&self) -> Result<&CStr> {
        let bytes = self.buf.get(..=self.len).ok_or(EINVAL)?;
        CStr::from_bytes_with_nul(bytes).map_err(|_| EINVAL)
    }

    /// The path, for messages.
    pub(crate) fn as_bstr(&self) -> &kernel::str::BStr {
        kernel::str::BStr::from_bytes(self.buf.get(..self.len).unwrap_or_default())
    }
}

/// The path of device `dev_name` for session `sessname` under
/// `dev_search_path` (`rnbd_srv_get_full_path`), in a new `PATH_MAX`
/// buffer as C allocates. `EINVAL` for a path the rules of
/// [`devpath::full_path`] refuse.
pub(crate) fn full_path(sessname: &[u8], dev_name: &[u8]) -> Result<FullPath> {
    let mut buf = KVec::from_elem(0u8, PATH_MAX, GFP_KERNEL)?;
    let len = DEV_SEARCH_PATH
        .0
        .read(|sp| devpath::full_path(sp, sessname, dev_name, &mut buf))
        .map_err(super::errno)?;
    Ok(FullPath { buf, len })
}

/// The search path, for messages (`dev_search_path` as C prints it).
pub(crate) fn with_search_path<R>(f: impl FnOnce(&[u8]) -> R) -> R {
    DEV_SEARCH_PATH.0.read(f)
}
