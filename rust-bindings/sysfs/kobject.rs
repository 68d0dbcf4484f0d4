// SPDX-License-Identifier: GPL-2.0-or-later

//! sysfs directories backed by kobjects that embed Rust data ([`Kobject`]),
//! symlinks between sysfs objects ([`Link`]), and uevents.

use super::attr::Attributes;
use crate::ffi;
use core::fmt;
use core::ops::Deref;
use core::ptr::{self, NonNull};
use kernel::init::PinInit;
use kernel::prelude::*;
use kernel::str::{CStr, CString};
use kernel::types::Opaque;

/// A kobject in sysfs that other sysfs objects can be created below or
/// link to.
///
/// # Safety
///
/// `as_kobject` returns a pointer to an initialized kobject whose memory is
/// valid, and which is in sysfs (added and not yet deleted), for as long as
/// the borrow of `self` lasts.
pub unsafe trait AsKobject {
    /// The kobject.
    fn as_kobject(&self) -> *mut ffi::kobject;

    /// Sends a uevent for the object (`kobject_uevent`).
    fn uevent(&self, action: Uevent) -> Result {
        // SAFETY: by the trait's contract the kobject is valid and in sysfs.
        to_result(unsafe { ffi::kobject_uevent(self.as_kobject(), action as ffi::kobject_action) })
    }
}

/// A uevent action (`enum kobject_action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Uevent {
    /// `KOBJ_ADD`.
    Add = ffi::kobject_action_KOBJ_ADD,
    /// `KOBJ_REMOVE`.
    Remove = ffi::kobject_action_KOBJ_REMOVE,
    /// `KOBJ_CHANGE`.
    Change = ffi::kobject_action_KOBJ_CHANGE,
    /// `KOBJ_ONLINE` (RNBD sends it on its disk's kobject).
    Online = ffi::kobject_action_KOBJ_ONLINE,
    /// `KOBJ_OFFLINE`.
    Offline = ffi::kobject_action_KOBJ_OFFLINE,
}

/// Converts a C return code.
fn to_result(ret: kernel::ffi::c_int) -> Result {
    kernel::error::to_result(ret)
}

/// The kernfs node of `kobj`'s directory, with a reference taken
/// (`kernfs_get`), or `EEXIST` if it already has a child called `name`.
///
/// # Safety
///
/// `parent` is a kobject in sysfs, not deleted concurrently.
unsafe fn check_free_name(parent: *mut ffi::kobject, name: &CStr) -> Result {
    // SAFETY: the caller guarantees `parent` is in sysfs, so `sd` is its
    // directory, valid while the kobject is not deleted.
    let dir = unsafe { (*parent).sd };
    // SAFETY: `dir` is a live kernfs directory and `name` a C string.
    let kn = unsafe { ffi::kernfs_find_and_get_ns(dir, name.as_char_ptr(), ptr::null()) };
    if kn.is_null() {
        return Ok(());
    }
    // SAFETY: `kernfs_find_and_get_ns` returned a reference.
    unsafe { ffi::kernfs_put(kn) };
    Err(EEXIST)
}

/// Takes a reference on the kernfs directory of a kobject in sysfs.
///
/// A sysfs object keeps its own node alive this way until it is deleted:
/// then deleting a parent first (which removes the whole subtree) leaves
/// the child's `kobj->sd` valid for the child's own deletion, which kernfs
/// then ignores.
///
/// # Safety
///
/// `kobj` is in sysfs, not deleted concurrently.
pub(crate) unsafe fn get_sd(kobj: *mut ffi::kobject) -> *mut ffi::kernfs_node {
    // SAFETY: the caller guarantees `kobj` is in sysfs: `sd` is its live
    // directory.
    let sd = unsafe { (*kobj).sd };
    // SAFETY: as above.
    unsafe { ffi::kernfs_get(sd) };
    sd
}

/// The name of a new sysfs object: formatted, not empty (kobject core warns
/// about that), and free in `parent`.
///
/// # Safety
///
/// As [`check_free_name`].
pub(crate) unsafe fn new_name(
    parent: *mut ffi::kobject,
    name: fmt::Arguments<'_>,
) -> Result<CString> {
    let name = CString::try_from_fmt(name)?;
    if name.is_empty() {
        return Err(EINVAL);
    }
    // SAFETY: the caller's guarantee.
    unsafe { check_free_name(parent, &name) }?;
    Ok(name)
}

/// The heap object behind a [`Kobject<T>`]: the kobject and the data,
/// freed together in the kobject's release.
#[repr(C)]
#[pin_data]
pub(crate) struct KobjInner<T> {
    #[pin]
    kobj: Opaque<ffi::kobject>,
    #[pin]
    data: T,
}

impl<T> KobjInner<T> {
    /// The data of the kobject `kobj`.
    ///
    /// # Safety
    ///
    /// `kobj` is the `kobj` of a live `KobjInner<T>` that stays alive for `'a`.
    pub(crate) unsafe fn data<'a>(kobj: *mut ffi::kobject) -> &'a T {
        // SAFETY: `kobj` is the first field of the `#[repr(C)]` struct, so
        // the pointers are equal; the caller guarantees it is alive.
        unsafe { &(*kobj.cast::<Self>()).data }
    }

    /// Frees the object of `kobj`.
    ///
    /// # Safety
    ///
    /// `kobj` is the `kobj` of a `KobjInner<T>` allocated by
    /// [`Kobject::new`], at its release: nobody uses it any more.
    pub(crate) unsafe fn free(kobj: *mut ffi::kobject) {
        // SAFETY: the object was allocated as a `KBox<Self>` (leaked by
        // `Kobject::new`) and is not used any more.
        drop(unsafe { KBox::from_raw(kobj.cast::<Self>()) });
    }
}

/// A directory in sysfs: a kobject that embeds data `T`, with the
/// attributes of [`Attributes<T>`], below another sysfs object. C's
/// `kobject_init_and_add` with a `kobj_type` whose release frees the
/// containing struct, as RTRS does for its paths and RNBD for its devices.
///
/// The value owns the registration: dropping it deletes the directory
/// (`kobject_del`, which waits for running `show`/`store` calls of its
/// attributes) and drops its reference; the data is dropped and freed in
/// the kobject's release, after the last reference (a child's, or a store's
/// that removed itself) is gone. The data is reachable through `Deref`.
///
/// Children and links may be deleted before or after their parent
/// directory: memory stays valid either way. Drop them first anyway, as C
/// does, or sysfs may warn.
///
/// # Invariants
///
/// `inner` is a `KobjInner<T>` from [`Kobject::new`] whose kobject is in
/// sysfs; this value owns one reference on it and one on its directory's
/// kernfs node `sd`.
pub struct Kobject<T: Send + Sync + 'static> {
    inner: NonNull<KobjInner<T>>,
    sd: *mut ffi::kernfs_node,
}

// SAFETY: the kobject is refcounted and its C functions may be called from
// any thread; the data is `Send + Sync`.
unsafe impl<T: Send + Sync + 'static> Send for Kobject<T> {}
// SAFETY: `&Kobject<T>` only gives `&T` and C calls that may run
// concurrently.
unsafe impl<T: Send + Sync + 'static> Sync for Kobject<T> {}

impl<T: Send + Sync + 'static> Kobject<T> {
    /// Creates the directory `name` below `parent`, with the data from
    /// `init` and the attributes `attrs`.
    ///
    /// Fails with `EINVAL` for an empty name and `EEXIST` if `parent`
    /// already has a child of that name (a `/` in the name becomes `!`, as
    /// in C).
    pub fn new(
        parent: &impl AsKobject,
        name: fmt::Arguments<'_>,
        attrs: &'static Attributes<T>,
        init: impl PinInit<T, Error>,
    ) -> Result<Self> {
        let parent = parent.as_kobject();
        // SAFETY: `parent` is in sysfs while borrowed (`AsKobject`).
        let name = unsafe { new_name(parent, name) }?;
        let inner = KBox::<KobjInner<T>>::pin_init::<Error>(
            try_pin_init!(KobjInner {
                // SAFETY: `ffi_init` passes a slot valid for writes of one
                // `kobject`; all-zero is what `kobject_init` expects.
                kobj <- Opaque::ffi_init(|slot: *mut ffi::kobject| unsafe {
                    ptr::write_bytes(slot, 0, 1)
                }),
                data <- init,
            }? Error),
            GFP_KERNEL,
        )?;
        // SAFETY: the object is never moved: it is freed in place, as a
        // `KBox`, by `KobjInner::free` in the kobject's release.
        let inner = unsafe { Pin::into_inner_unchecked(inner) };
        let inner = KBox::into_raw(inner);
        // SAFETY: `inner` is valid; its kobject is zeroed.
        let kobj = unsafe { Opaque::raw_get(&raw const (*inner).kobj) };
        // SAFETY: `kobj` is a zeroed kobject; the ktype's release frees
        // `inner` as `KobjInner<T>`, from now on the only way it is freed.
        unsafe { ffi::kobject_init(kobj, attrs.ktype()) };
        // SAFETY: `kobj` is initialized; `parent` is in sysfs; the name is
        // passed through "%s".
        let ret = unsafe {
            ffi::kobject_add(
                kobj,
                parent,
                kernel::c_str!("%s").as_char_ptr(),
                name.as_char_ptr(),
            )
        };
        if ret != 0 {
            // SAFETY: the initial reference; this frees `inner`.
            unsafe { ffi::kobject_put(kobj) };
            return Err(Error::from_errno(ret));
        }
        // SAFETY: `kobj` was just added to sysfs, and only our `Drop` deletes it.
        let sd = unsafe { get_sd(kobj) };
        // INVARIANT: `inner` is in sysfs; the initial reference and the
        // kernfs reference are ours.
        Ok(Self {
            // SAFETY: `KBox::into_raw` does not return NULL.
            inner: unsafe { NonNull::new_unchecked(inner) },
            sd,
        })
    }

    fn kobj(&self) -> *mut ffi::kobject {
        // SAFETY: by the type invariant `inner` is valid.
        unsafe { Opaque::raw_get(&raw const (*self.inner.as_ptr()).kobj) }
    }
}

/// The attributes of a plain directory: none.
static DIR_ATTRS: Attributes<()> = super::attributes!(());

impl Kobject<()> {
    /// Creates an empty directory `name` below `parent`, as C's
    /// `kobject_create_and_add` (RTRS's `paths`, RNBD's `devices`).
    pub fn dir(parent: &impl AsKobject, name: fmt::Arguments<'_>) -> Result<Self> {
        Self::new(parent, name, &DIR_ATTRS, ())
    }
}

impl<T: Send + Sync + 'static> Deref for Kobject<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: by the type invariant the object is alive while we hold
        // our reference.
        unsafe { KobjInner::<T>::data(self.kobj()) }
    }
}

// SAFETY: by the type invariant the kobject is in sysfs and referenced
// until `Drop`, which a borrow of `self` excludes.
unsafe impl<T: Send + Sync + 'static> AsKobject for Kobject<T> {
    fn as_kobject(&self) -> *mut ffi::kobject {
        self.kobj()
    }
}

impl<T: Send + Sync + 'static> Drop for Kobject<T> {
    fn drop(&mut self) {
        let kobj = self.kobj();
        // SAFETY: by the type invariant the kobject is in sysfs; deleting
        // waits for running show/store calls of its attributes.
        unsafe { ffi::kobject_del(kobj) };
        // SAFETY: the kernfs reference is ours (type invariant).
        unsafe { ffi::kernfs_put(self.sd) };
        // SAFETY: our reference (type invariant); may free the object.
        unsafe { ffi::kobject_put(kobj) };
    }
}

/// A symlink in the directory of one sysfs object to another
/// (`sysfs_create_link`), removed in `Drop` (`sysfs_remove_link`). As RNBD's
/// `devices/<name>` links to its disks.
///
/// Drop it before its directory; if the directory was deleted first, the
/// link went with it and `Drop` does nothing.
///
/// # Invariants
///
/// The link `name` was created in the directory of `dir`; this value owns
/// one reference on `dir` and one on its kernfs node `sd`.
pub struct Link {
    dir: *mut ffi::kobject,
    sd: *mut ffi::kernfs_node,
    name: CString,
}

// SAFETY: the references it owns may be dropped on any thread.
unsafe impl Send for Link {}
// SAFETY: `&Link` gives access to nothing.
unsafe impl Sync for Link {}

impl Link {
    /// Creates the link `name` in `dir` to `target`. Fails with `EEXIST`
    /// if `dir` already has an entry of that name.
    pub fn new(
        dir: &impl AsKobject,
        target: &impl AsKobject,
        name: fmt::Arguments<'_>,
    ) -> Result<Self> {
        let dir = dir.as_kobject();
        // SAFETY: `dir` is in sysfs while borrowed (`AsKobject`).
        let name = unsafe { new_name(dir, name) }?;
        // SAFETY: both kobjects are in sysfs while borrowed.
        to_result(unsafe { ffi::sysfs_create_link(dir, target.as_kobject(), name.as_char_ptr()) })?;
        // SAFETY: `dir` is valid (as above); the reference is owned by the result.
        unsafe { ffi::kobject_get(dir) };
        // SAFETY: `dir` is in sysfs (as above).
        let sd = unsafe { get_sd(dir) };
        // INVARIANT: the link exists; both references are the result's.
        Ok(Self { dir, sd, name })
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // SAFETY: the directory's kobject is alive: we hold a reference. Its
        // `sd` is cleared when it is deleted from sysfs (then the link is
        // gone with it); `read_volatile` is C's `READ_ONCE`.
        let sd = unsafe { ptr::read_volatile(&raw const (*self.dir).sd) };
        if !sd.is_null() {
            // SAFETY: the directory is in sysfs; `sysfs_remove_link` reads
            // `sd` again, whose node our reference keeps allocated even if
            // the directory is deleted meanwhile.
            unsafe { ffi::sysfs_remove_link(self.dir, self.name.as_char_ptr()) };
        }
        // SAFETY: both references are ours (type invariant).
        unsafe {
            ffi::kernfs_put(self.sd);
            ffi::kobject_put(self.dir);
        }
    }
}
