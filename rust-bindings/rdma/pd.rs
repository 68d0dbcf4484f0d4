// SPDX-License-Identifier: GPL-2.0-or-later

//! A protection domain (`struct ib_pd`).

use super::device::{Device, DeviceRef};
use core::ptr::NonNull;
use kernel::error::from_err_ptr;
use kernel::prelude::*;
use rb::ffi;

/// A protection domain on a device, deallocated in `Drop`.
///
/// # Invariants
///
/// `pd` was returned by `ib_alloc_pd` on `dev`, is not yet deallocated, and
/// `dev` keeps the device registered for as long as the PD exists.
pub struct Pd {
    pd: NonNull<ffi::ib_pd>,
    dev: DeviceRef,
}

// SAFETY: a PD may be used from any thread; the verbs that take it are
// thread safe.
unsafe impl Send for Pd {}
// SAFETY: as above, all methods take `&self` and only read immutable fields.
unsafe impl Sync for Pd {}

/// `IB_PD_UNSAFE_GLOBAL_RKEY`: the PD gets an rkey that gives remote access
/// to all of memory. RTRS asks for it when its server does not invalidate.
pub const PD_UNSAFE_GLOBAL_RKEY: u32 = ffi::ib_pd_flags_IB_PD_UNSAFE_GLOBAL_RKEY;

impl Pd {
    /// Allocates a PD on `dev` with `IB_PD_*` `flags`.
    pub fn new(dev: &Device, flags: u32) -> Result<Self> {
        let dev = dev.get().ok_or(ENODEV)?;
        // SAFETY: `dev` is a registered device we hold a reference on.
        let pd = from_err_ptr(unsafe { ffi::ib_alloc_pd(dev.as_raw(), flags) })?;
        // INVARIANT: `pd` is a fresh PD on `dev`, and we keep `dev`.
        Ok(Self {
            pd: NonNull::new(pd).ok_or(ENOMEM)?,
            dev,
        })
    }

    pub(crate) fn as_raw(&self) -> *mut ffi::ib_pd {
        self.pd.as_ptr()
    }

    /// The device of this PD.
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// The lkey that covers all DMA-mapped memory of the device.
    pub fn local_dma_lkey(&self) -> u32 {
        // SAFETY: `pd` is valid (type invariant); the field is immutable.
        unsafe { (*self.as_raw()).local_dma_lkey }
    }

    /// The rkey for all of memory, if the PD was allocated with
    /// [`PD_UNSAFE_GLOBAL_RKEY`], otherwise 0.
    pub fn unsafe_global_rkey(&self) -> u32 {
        // SAFETY: as above.
        unsafe { (*self.as_raw()).unsafe_global_rkey }
    }
}

impl Drop for Pd {
    fn drop(&mut self) {
        // SAFETY: the PD is valid and deallocated only here (type invariant).
        // Everything created on it (QPs, MRs) holds a reference to the `Pd`
        // or is owned by something that does, so it is gone by now.
        unsafe { ffi::ib_dealloc_pd(self.as_raw()) };
    }
}
