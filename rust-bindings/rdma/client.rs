// SPDX-License-Identifier: GPL-2.0-or-later

//! A client of the RDMA core (`struct ib_client`): told of every RDMA
//! device as it is added and removed, those present at registration
//! included.

use super::device::Device;
use kernel::prelude::*;
use kernel::types::Opaque;
use rb::ffi;

/// What an [`IbClient`] does as devices come and go. The RDMA core calls
/// these in process context, serialised for one device. They get no state
/// of the client: one module registers one client of a type, and keeps
/// what it needs in module state.
pub trait IbClientOps: 'static {
    /// Device `dev` was added (or was present at registration). An error
    /// is logged by nobody and means that `remove` is not called for it.
    fn add(dev: &Device) -> Result;
    /// Device `dev`, whose `add` succeeded, is being removed.
    fn remove(dev: &Device);
}

/// A registered client of the RDMA core (`ib_register_client()`),
/// unregistered when dropped (`ib_unregister_client()`, which calls
/// `remove` for each device whose `add` succeeded).
///
/// # Invariants
///
/// `raw` is registered, with the trampolines of `T` and a static name,
/// from `new` until `Drop`, at its pinned address.
#[pin_data(PinnedDrop)]
pub struct IbClient<T: IbClientOps> {
    #[pin]
    raw: Opaque<ffi::ib_client>,
    _t: core::marker::PhantomData<T>,
}

// SAFETY: the C struct is only used by the RDMA core under its own locks.
unsafe impl<T: IbClientOps> Send for IbClient<T> {}
// SAFETY: as above; no method reads it.
unsafe impl<T: IbClientOps> Sync for IbClient<T> {}

impl<T: IbClientOps> IbClient<T> {
    /// Registers a client named `name`; `T::add` runs for each device
    /// present before this returns. Sleeps.
    pub fn new(name: &'static CStr) -> Result<Pin<KBox<Self>>> {
        let this = KBox::pin_init(
            pin_init!(Self {
                // SAFETY: `slot` is ours to write: all-zero fields but the
                // name and the two callbacks.
                raw <- Opaque::ffi_init(|slot: *mut ffi::ib_client| unsafe {
                    core::ptr::write_bytes(slot, 0, 1);
                    (*slot).name = name.as_char_ptr();
                    (*slot).add = Some(add::<T>);
                    (*slot).remove = Some(remove::<T>);
                }),
                _t: core::marker::PhantomData,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `raw` is initialised and pinned until `Drop`, which
        // unregisters it.
        kernel::error::to_result(unsafe { ffi::ib_register_client(this.raw.get()) })?;
        // INVARIANT: registered just above.
        Ok(this)
    }
}

#[pinned_drop]
impl<T: IbClientOps> PinnedDrop for IbClient<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered in `new` (type invariant); no callback of it
        // runs after this returns.
        unsafe { ffi::ib_unregister_client(self.raw.get()) };
    }
}

/// # Safety
///
/// Called by the RDMA core with a valid device being added.
unsafe extern "C" fn add<T: IbClientOps>(dev: *mut ffi::ib_device) -> kernel::ffi::c_int {
    // SAFETY: a valid device, registered for the call (function contract).
    let dev = unsafe { Device::from_raw(dev) };
    match T::add(dev) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by the RDMA core with a valid device being removed.
unsafe extern "C" fn remove<T: IbClientOps>(
    dev: *mut ffi::ib_device,
    _data: *mut kernel::ffi::c_void,
) {
    // SAFETY: a valid device for the call (function contract).
    T::remove(unsafe { Device::from_raw(dev) });
}
