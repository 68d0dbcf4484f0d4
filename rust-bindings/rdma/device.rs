// SPDX-License-Identifier: GPL-2.0-or-later

//! An RDMA device (`struct ib_device`), borrowed or held by a reference that
//! keeps it registered.

use core::num::NonZeroU32;
use core::ptr::NonNull;
use kernel::prelude::*;
use kernel::types::Opaque;
use rb::ffi;

/// An RDMA device owned by the RDMA core.
///
/// Only handed out by reference, for as long as the object that got it (a
/// [`DeviceRef`], a CM id bound to the device) keeps the device alive.
#[repr(transparent)]
pub struct Device(Opaque<ffi::ib_device>);

impl Device {
    /// # Safety
    ///
    /// `ptr` points to a registered `ib_device` that stays valid for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut ffi::ib_device) -> &'a Self {
        // SAFETY: `Device` is a transparent wrapper of `ib_device`, and the
        // caller guarantees that the pointee is valid for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    pub(crate) fn as_raw(&self) -> *mut ffi::ib_device {
        self.0.get()
    }

    /// The device name, e.g. `rxe0`.
    pub fn name(&self) -> &CStr {
        // SAFETY: `self` is a valid device (type invariant); `name` is a
        // NUL-terminated array that lives as long as the device.
        unsafe { CStr::from_char_ptr((*self.as_raw()).name.as_ptr()) }
    }

    /// Number of completion vectors (interrupt lines) of the device.
    pub fn num_comp_vectors(&self) -> NonZeroU32 {
        // SAFETY: `self` is valid; the field is set at registration.
        let n = unsafe { (*self.as_raw()).num_comp_vectors };
        // Drivers set one at least; one if a driver said none.
        NonZeroU32::new(u32::try_from(n).unwrap_or(0)).unwrap_or(NonZeroU32::MIN)
    }

    /// Attributes of the device that limit what a ULP may ask for.
    pub fn attrs(&self) -> DeviceAttrs {
        // SAFETY: `self` is valid; `attrs` is filled in at registration and
        // not changed afterwards.
        let a = unsafe { &(*self.as_raw()).attrs };
        DeviceAttrs {
            max_qp_wr: a.max_qp_wr.max(0) as u32,
            max_send_sge: a.max_send_sge.max(0) as u32,
            max_recv_sge: a.max_recv_sge.max(0) as u32,
            max_cqe: a.max_cqe.max(0) as u32,
            max_fast_reg_page_list_len: a.max_fast_reg_page_list_len,
            max_mr_size: a.max_mr_size,
            page_size_cap: a.page_size_cap,
            max_qp_rd_atom: a.max_qp_rd_atom.max(0) as u32,
            max_qp_init_rd_atom: a.max_qp_init_rd_atom.max(0) as u32,
            device_cap_flags: a.device_cap_flags,
            kernel_cap_flags: a.kernel_cap_flags,
        }
    }

    /// A reference that keeps the device registered until it is dropped, or
    /// `None` if the device is being unregistered.
    pub fn get(&self) -> Option<DeviceRef> {
        // SAFETY: `self` is valid for this call.
        if unsafe { ffi::ib_device_try_get(self.as_raw()) } {
            // INVARIANT: we hold the registration reference just taken.
            Some(DeviceRef(NonNull::from(self)))
        } else {
            None
        }
    }
}

/// Limits of a device, copied from `struct ib_device_attr`.
#[derive(Clone, Copy, Debug)]
pub struct DeviceAttrs {
    /// Maximum work requests per queue.
    pub max_qp_wr: u32,
    /// Maximum SGEs in a send work request.
    pub max_send_sge: u32,
    /// Maximum SGEs in a receive work request.
    pub max_recv_sge: u32,
    /// Maximum entries of a CQ.
    pub max_cqe: u32,
    /// Maximum pages a fast-registration MR maps.
    pub max_fast_reg_page_list_len: u32,
    /// Largest MR in bytes.
    pub max_mr_size: u64,
    /// The page sizes an MR may use, one bit each.
    pub page_size_cap: u64,
    /// Maximum outstanding RDMA READs a QP answers.
    pub max_qp_rd_atom: u32,
    /// Maximum outstanding RDMA READs a QP initiates.
    pub max_qp_init_rd_atom: u32,
    /// `IB_DEVICE_*` capability flags.
    pub device_cap_flags: u64,
    /// `IBK_*` capability flags.
    pub kernel_cap_flags: u64,
}

impl DeviceAttrs {
    /// Whether the device registers scatterlists with gaps between their
    /// entries (`IBK_SG_GAPS_REG`, MRs of type `IB_MR_TYPE_SG_GAPS`).
    pub fn sg_gaps_reg(&self) -> bool {
        self.kernel_cap_flags & ffi::ib_kernel_cap_flags_IBK_SG_GAPS_REG as u64 != 0
    }

    /// Whether the device registers memory with work requests
    /// (`IB_DEVICE_MEM_MGT_EXTENSIONS`: REG_MR, LOCAL_INV), which RTRS needs.
    pub fn mem_mgt_extensions(&self) -> bool {
        self.device_cap_flags & ffi::ib_device_cap_flags_IB_DEVICE_MEM_MGT_EXTENSIONS as u64 != 0
    }
}

/// A registration reference on a device (`ib_device_try_get`): while it is
/// held, unregistration of the device waits.
///
/// # Invariants
///
/// The pointer is a valid device on which this object holds one reference.
pub struct DeviceRef(NonNull<Device>);

// SAFETY: an `ib_device` may be used and released from any thread.
unsafe impl Send for DeviceRef {}
// SAFETY: all `Device` methods take `&self` and are thread safe in C.
unsafe impl Sync for DeviceRef {}

impl core::ops::Deref for DeviceRef {
    type Target = Device;

    fn deref(&self) -> &Device {
        // SAFETY: valid while the reference is held (type invariant).
        unsafe { self.0.as_ref() }
    }
}

impl Drop for DeviceRef {
    fn drop(&mut self) {
        // SAFETY: we hold one reference (type invariant) and give it back.
        unsafe { ffi::ib_device_put(self.as_raw()) };
    }
}

impl PartialEq for DeviceRef {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
