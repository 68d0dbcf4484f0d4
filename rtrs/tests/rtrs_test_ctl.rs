// SPDX-License-Identifier: GPL-2.0-or-later

//! The control directory of the RTRS test modules that a selftest drives
//! through sysfs (rtrs-test-clt, rtrs-test-evil): `/sys/class/<class>/ctl/`,
//! a class of its own with the device `ctl` in it, and its `run` file.

#![allow(dead_code)]

use core::marker::PhantomData;
use kernel::c_str;
use kernel::prelude::*;
use kernel::str::CStr;
use rb::sysfs::{Attribute, Attributes, Class, Device, Store};

/// What a write to `ctl/run` does.
pub(crate) trait Run: Send + Sync + 'static {
    /// Runs what `input` (the bytes written) asks for, and returns when it
    /// is done; an error is the errno the write fails with.
    fn run(&self, input: &[u8]) -> Result;
}

/// `ctl/run`, write-only: a write calls [`Run::run`] on the data of `ctl`.
pub(crate) struct CtlRun<T>(PhantomData<T>);

#[vtable]
impl<T: Run> Attribute for CtlRun<T> {
    type Data = T;
    const NAME: &'static CStr = c_str!("run");
    const MODE: u16 = 0o200;

    fn store(ctl: &T, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        ctl.run(input)?;
        Ok(input.len())
    }
}

/// Registers the class `class` and adds `ctl` to it, with the files
/// `attrs` and the data from `init`. Dropping the device removes it (no
/// `show` or `store` runs after that), then the class with it.
pub(crate) fn ctl_dir<T: Send + Sync + 'static>(
    class: &'static CStr,
    attrs: &'static Attributes<T>,
    init: impl PinInit<T, Error>,
) -> Result<Device<T>> {
    Device::new(&Class::new(class)?, format_args!("ctl"), attrs, init)
}
