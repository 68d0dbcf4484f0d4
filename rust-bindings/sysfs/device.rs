// SPDX-License-Identifier: GPL-2.0-or-later

//! Device classes ([`Class`], `/sys/class/<name>`) and the devices in them
//! ([`Device`], `/sys/class/<class>/<name>`), as RTRS and RNBD register them:
//! a `struct class` with `class_register` and a `struct device` embedded in
//! the driver's object, added with `device_initialize`/`device_add`.

use super::attr::Attributes;
use super::kobject::{get_sd, AsKobject, Uevent};
use crate::ffi;
use core::fmt;
use core::ops::Deref;
use core::ptr::{self, NonNull};
use kernel::init::{self, PinInit};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::Arc;
use kernel::types::Opaque;

/// A registered device class (`class_register`), unregistered when the last
/// [`Arc`] to it is dropped. Every [`Device`] of the class holds one, so the
/// class outlives its devices.
///
/// # Invariants
///
/// `class` is registered, with the name of a `'static` C string.
#[pin_data(PinnedDrop)]
pub struct Class {
    #[pin]
    class: Opaque<ffi::class>,
}

// SAFETY: the class core serializes registration, lookups and unregistration.
unsafe impl Send for Class {}
// SAFETY: `&Class` only lets devices be added, which the class core allows
// concurrently.
unsafe impl Sync for Class {}

impl Class {
    /// Registers the class `name` (`/sys/class/<name>`).
    pub fn new(name: &'static CStr) -> Result<Arc<Self>> {
        let register = move |slot: *mut Opaque<ffi::class>| {
            let slot = Opaque::raw_get(slot);
            // SAFETY: `slot` is valid for writes; all-zero is a valid class
            // with no callbacks, and then the name is set.
            unsafe {
                ptr::write_bytes(slot, 0, 1);
                (*slot).name = name.as_char_ptr();
            }
            // SAFETY: `slot` is a valid class that stays in place (pinned in
            // the `Arc`) until `PinnedDrop` unregisters it.
            kernel::error::to_result(unsafe { ffi::class_register(slot) })
        };
        // SAFETY: on success the closure initialized the slot (an `Opaque`
        // is initialized by any bytes); on failure the class is not
        // registered and an `Opaque` needs no drop.
        let class = unsafe { init::pin_init_from_closure(register) };
        // INVARIANT: registered above, with a 'static name.
        Arc::pin_init(try_pin_init!(Self { class <- class }? Error), GFP_KERNEL)
    }

    fn as_ptr(&self) -> *const ffi::class {
        self.class.get()
    }
}

#[pinned_drop]
impl PinnedDrop for Class {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered (type invariant); no device of the class is
        // left: each holds an `Arc` to the class.
        unsafe { ffi::class_unregister(self.as_ptr()) };
    }
}

/// The heap object behind a [`Device<T>`]: the device and the data, freed
/// together in the device's release.
#[repr(C)]
#[pin_data]
pub(crate) struct DevInner<T> {
    #[pin]
    dev: Opaque<ffi::device>,
    #[pin]
    data: T,
}

impl<T> DevInner<T> {
    /// The data of the device `dev`.
    ///
    /// # Safety
    ///
    /// `dev` is the `dev` of a live `DevInner<T>` that stays alive for `'a`.
    pub(crate) unsafe fn data<'a>(dev: *mut ffi::device) -> &'a T {
        // SAFETY: `dev` is the first field of the `#[repr(C)]` struct, so
        // the pointers are equal; the caller guarantees it is alive.
        unsafe { &(*dev.cast::<Self>()).data }
    }
}

/// `release` of a [`Device<T>`]: frees the Rust object.
///
/// # Safety
///
/// Called by the driver core once, at the last `put_device` of a device
/// whose `release` `Device::<T>::new` set.
unsafe extern "C" fn dev_release<T: 'static>(dev: *mut ffi::device) {
    // SAFETY: the object was allocated as a `KBox<DevInner<T>>` and leaked
    // by `Device::new`; `dev` is its first field; nobody uses it any more.
    drop(unsafe { KBox::from_raw(dev.cast::<DevInner<T>>()) });
}

/// A device in a [`Class`] that embeds data `T`, with the attributes of
/// [`Attributes<T>`]: `/sys/class/<class>/<name>/<attr>`, as rtrs-client's
/// session devices and rnbd-client's `ctl`.
///
/// The value owns the registration: dropping it deletes the device
/// (`device_del`, which sends `KOBJ_REMOVE` and waits for running
/// `show`/`store` calls) and drops its reference; the data is dropped and
/// freed in the device's release, after the last reference. The data is
/// reachable through `Deref`.
///
/// # Invariants
///
/// `inner` is a `DevInner<T>` from [`Device::new`] whose device is added;
/// this value owns one reference on it and one on its directory's kernfs
/// node `sd`; `class` is the device's class.
pub struct Device<T: Send + Sync + 'static> {
    inner: NonNull<DevInner<T>>,
    sd: *mut ffi::kernfs_node,
    class: Arc<Class>,
}

// SAFETY: the device is refcounted and its C functions may be called from
// any thread; the data is `Send + Sync`.
unsafe impl<T: Send + Sync + 'static> Send for Device<T> {}
// SAFETY: `&Device<T>` only gives `&T` and C calls that may run
// concurrently.
unsafe impl<T: Send + Sync + 'static> Sync for Device<T> {}

impl<T: Send + Sync + 'static> Device<T> {
    /// Adds the device `name` to `class`, with the data from `init` and the
    /// attributes `attrs`; `device_add` sends `KOBJ_ADD` once they exist.
    ///
    /// Fails with `EINVAL` for an empty name and `EEXIST` if the class has
    /// a device of that name.
    pub fn new(
        class: &Arc<Class>,
        name: fmt::Arguments<'_>,
        attrs: &'static Attributes<T>,
        init: impl PinInit<T, Error>,
    ) -> Result<Self> {
        Self::add(class, name, attrs, init, false)
    }

    /// As [`Device::new`], but without the `KOBJ_ADD` uevent until
    /// [`Device::announce`]: for devices that get more sysfs entries first,
    /// as RTRS sessions get their `paths` directory.
    pub fn new_quiet(
        class: &Arc<Class>,
        name: fmt::Arguments<'_>,
        attrs: &'static Attributes<T>,
        init: impl PinInit<T, Error>,
    ) -> Result<Self> {
        Self::add(class, name, attrs, init, true)
    }

    fn add(
        class: &Arc<Class>,
        name: fmt::Arguments<'_>,
        attrs: &'static Attributes<T>,
        init: impl PinInit<T, Error>,
        quiet: bool,
    ) -> Result<Self> {
        let name = DeviceName::new(class, name)?;
        let inner = KBox::<DevInner<T>>::pin_init::<Error>(
            try_pin_init!(DevInner {
                // SAFETY: `ffi_init` passes a slot valid for writes of one
                // `device`; all-zero is what `device_initialize` expects.
                dev <- Opaque::ffi_init(|slot: *mut ffi::device| unsafe {
                    ptr::write_bytes(slot, 0, 1)
                }),
                data <- init,
            }? Error),
            GFP_KERNEL,
        )?;
        // SAFETY: the object is never moved: it is freed in place, as a
        // `KBox`, by `dev_release` at the device's release.
        let inner = unsafe { Pin::into_inner_unchecked(inner) };
        let inner = KBox::into_raw(inner);
        // SAFETY: `inner` is valid; its device is zeroed.
        let dev = unsafe { Opaque::raw_get(&raw const (*inner).dev) };
        // The release frees `inner` as `DevInner<T>`, from now on the only
        // way it is freed; the class outlives the device (the result holds
        // it); the groups are 'static attributes of `T`.
        // SAFETY: `dev` is a zeroed device, which `device_initialize`
        // expects; the rest as said above.
        unsafe {
            ffi::device_initialize(dev);
            (*dev).release = Some(dev_release::<T>);
            (*dev).class = class.as_ptr();
            (*dev).groups = attrs.dev_groups();
        }
        // SAFETY: `dev` is initialized; the name is passed through "%s".
        let mut ret = unsafe {
            ffi::dev_set_name(
                dev,
                kernel::c_str!("%s").as_char_ptr(),
                name.0.as_char_ptr(),
            )
        };
        if ret == 0 {
            if quiet {
                // SAFETY: `dev` is initialized and not yet added.
                unsafe { ffi::dev_set_uevent_suppress(dev, 1) };
            }
            // SAFETY: `dev` is initialized and named.
            ret = unsafe { ffi::device_add(dev) };
        }
        if ret != 0 {
            // SAFETY: the initial reference; this frees `inner`.
            unsafe { ffi::put_device(dev) };
            return Err(Error::from_errno(ret));
        }
        // SAFETY: the device was just added, and only our `Drop` deletes it.
        let sd = unsafe { get_sd(&raw mut (*dev).kobj) };
        // INVARIANT: the device is added; the initial reference and the
        // kernfs reference are ours.
        Ok(Self {
            // SAFETY: `KBox::into_raw` does not return NULL.
            inner: unsafe { NonNull::new_unchecked(inner) },
            sd,
            class: class.clone(),
        })
    }

    /// Sends the `KOBJ_ADD` uevent that [`Device::new_quiet`] held back.
    pub fn announce(&self) -> Result {
        // SAFETY: the device is added (type invariant); C clears the flag
        // the same way (`dev_set_uevent_suppress(dev, false)`).
        unsafe { ffi::dev_set_uevent_suppress(self.dev(), 0) };
        self.uevent(Uevent::Add)
    }

    fn dev(&self) -> *mut ffi::device {
        // SAFETY: by the type invariant `inner` is valid.
        unsafe { Opaque::raw_get(&raw const (*self.inner.as_ptr()).dev) }
    }

    /// The class of the device.
    pub fn class(&self) -> &Arc<Class> {
        &self.class
    }
}

/// A device name: not empty (the kobject core warns about that) and free
/// in the class (or sysfs warns about a duplicate).
struct DeviceName(kernel::str::CString);

impl DeviceName {
    fn new(class: &Class, name: fmt::Arguments<'_>) -> Result<Self> {
        let name = kernel::str::CString::try_from_fmt(name)?;
        if name.is_empty() {
            return Err(EINVAL);
        }
        // SAFETY: the class is registered (type invariant of `Class`).
        let found = unsafe {
            ffi::class_find_device(
                class.as_ptr(),
                ptr::null(),
                name.as_char_ptr().cast(),
                Some(ffi::device_match_name),
            )
        };
        if !found.is_null() {
            // SAFETY: `class_find_device_by_name` returned a reference.
            unsafe { ffi::put_device(found) };
            return Err(EEXIST);
        }
        Ok(Self(name))
    }
}

impl<T: Send + Sync + 'static> Deref for Device<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: by the type invariant the object is alive while we hold
        // our reference.
        unsafe { DevInner::<T>::data(self.dev()) }
    }
}

// SAFETY: by the type invariant the device is added and referenced until
// `Drop`, which a borrow of `self` excludes.
unsafe impl<T: Send + Sync + 'static> AsKobject for Device<T> {
    fn as_kobject(&self) -> *mut ffi::kobject {
        // SAFETY: `dev()` is valid (type invariant).
        unsafe { &raw mut (*self.dev()).kobj }
    }
}

impl<T: Send + Sync + 'static> Drop for Device<T> {
    fn drop(&mut self) {
        let dev = self.dev();
        // SAFETY: the device is added (type invariant); deleting it waits
        // for running show/store calls of its attributes.
        unsafe { ffi::device_del(dev) };
        // SAFETY: both references are ours (type invariant); the last put
        // frees the object. `self.class` is dropped after this.
        unsafe {
            ffi::kernfs_put(self.sd);
            ffi::put_device(dev);
        }
    }
}
