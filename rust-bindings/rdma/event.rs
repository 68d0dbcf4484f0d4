// SPDX-License-Identifier: GPL-2.0-or-later

//! A device's asynchronous events (`struct ib_event_handler`): port active
//! or down, GID and LID changes, a device fatal error.

use super::device::{Device, DeviceRef};
use kernel::prelude::*;
use kernel::types::Opaque;
use rb::ffi;

/// One asynchronous event of a device (`struct ib_event`).
pub struct IbEvent<'a>(&'a ffi::ib_event);

impl IbEvent<'_> {
    /// Its number (`enum ib_event_type`).
    pub fn code(&self) -> u32 {
        self.0.event
    }

    /// Its name, as `ib_event_msg()` gives it (`port error`, ...).
    pub fn name(&self) -> &'static CStr {
        // SAFETY: `ib_event_msg()` returns a static string for any value.
        unsafe { CStr::from_char_ptr(ffi::ib_event_msg(self.0.event)) }
    }
}

/// What an [`EventHandler`] does with the events of its device. Called in
/// process context (the RDMA core's event work).
pub trait IbEventHandler: Send + Sync {
    /// An event of the device.
    fn event(&self, event: &IbEvent<'_>);
}

/// A registered handler of a device's events (`ib_register_event_handler()`),
/// unregistered when dropped. It holds the device registered.
///
/// # Invariants
///
/// `raw` is registered with the RDMA core, with `trampoline::<T>` and the
/// device `dev` holds, from `new` until `Drop`; it stays at its address.
#[pin_data(PinnedDrop)]
pub struct EventHandler<T: IbEventHandler> {
    #[pin]
    raw: Opaque<ffi::ib_event_handler>,
    data: T,
    dev: DeviceRef,
}

// SAFETY: the C part is only touched by the RDMA core under its own lock;
// `data` is `Send + Sync`.
unsafe impl<T: IbEventHandler> Send for EventHandler<T> {}
// SAFETY: as above.
unsafe impl<T: IbEventHandler> Sync for EventHandler<T> {}

impl<T: IbEventHandler> EventHandler<T> {
    /// Registers `data` for the events of `dev`.
    pub fn new(dev: &Device, data: T) -> Result<Pin<KBox<Self>>> {
        let dev = dev.get().ok_or(ENODEV)?;
        let raw_dev = dev.as_raw();
        let this = KBox::pin_init(
            pin_init!(Self {
                // SAFETY: `slot` is ours to write; every field the RDMA core
                // reads is set here (`list` is written when registering).
                raw <- Opaque::ffi_init(|slot: *mut ffi::ib_event_handler| unsafe {
                    core::ptr::write_bytes(slot, 0, 1);
                    (*slot).device = raw_dev;
                    (*slot).handler = Some(trampoline::<T>);
                }),
                data,
                dev,
            }),
            GFP_KERNEL,
        )?;
        // INVARIANT: registered once, here, at its pinned address, with the
        // device `dev` holds.
        // SAFETY: `raw` is initialised and pinned; the device is registered.
        unsafe { ffi::ib_register_event_handler(this.raw.get()) };
        Ok(this)
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.dev
    }
}

#[pinned_drop]
impl<T: IbEventHandler> PinnedDrop for EventHandler<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered in `new` (type invariant); after this returns
        // the RDMA core calls the handler no more.
        unsafe { ffi::ib_unregister_event_handler(self.raw.get()) };
    }
}

/// The C handler of an [`EventHandler<T>`].
///
/// # Safety
///
/// `h` is the `raw` field of a live, registered `EventHandler<T>`, and `ev`
/// a valid event, as the RDMA core calls it.
unsafe extern "C" fn trampoline<T: IbEventHandler>(
    h: *mut ffi::ib_event_handler,
    ev: *mut ffi::ib_event,
) {
    // SAFETY: `h` is the `raw` field of an `EventHandler<T>` (function
    // contract; `Opaque` is transparent), which stays alive while it is
    // registered.
    let this = unsafe {
        &*kernel::container_of!(
            h.cast::<Opaque<ffi::ib_event_handler>>(),
            EventHandler<T>,
            raw
        )
    };
    // SAFETY: valid for the call (function contract).
    let ev = unsafe { &*ev };
    this.data.event(&IbEvent(ev));
}
