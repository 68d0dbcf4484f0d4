// SPDX-License-Identifier: GPL-2.0-or-later

//! sysfs attributes: the [`Attribute`] trait whose `show`/`store` sysfs
//! calls, the [`Page`] a `show` writes into, the [`Store`] context of a
//! `store`, and the C attribute tables that [`attributes!`] builds.
//!
//! [`attributes!`]: crate::sysfs::attributes

use super::device::DevInner;
use super::kobject::KobjInner;
use crate::ffi;
use crate::module::ModuleRef;
use core::fmt;
use core::marker::PhantomData;
use core::ptr;
use kernel::error::VTABLE_DEFAULT_ERROR;
use kernel::ffi::c_char;
use kernel::prelude::*;
use kernel::str::CStr;

/// The most a `show` may return: a page less the NUL that C's `sysfs_emit`
/// keeps (sysfs warns about `PAGE_SIZE` or more).
const PAGE_MAX: usize = kernel::page::PAGE_SIZE - 1;

/// The page a `show` (or a parameter's `get`) writes its text into, as with
/// `sysfs_emit`: text beyond the page is cut off, and then sysfs returns what
/// fits (the cut is also reported to the writer as [`fmt::Error`]).
///
/// # Invariants
///
/// `buf` is valid for writes of `PAGE_MAX` bytes for `'a`, and nobody else
/// accesses it meanwhile; `len <= PAGE_MAX` bytes of it are written.
pub struct Page<'a> {
    buf: *mut u8,
    len: usize,
    truncated: bool,
    _buf: PhantomData<&'a mut [u8]>,
}

impl Page<'_> {
    /// Wraps the buffer of a sysfs `show` or a parameter `get`.
    ///
    /// # Safety
    ///
    /// `buf` must be valid for writes of `PAGE_SIZE` bytes for the lifetime
    /// of the result and not be accessed by anyone else meanwhile.
    pub(crate) unsafe fn from_raw(buf: *mut c_char) -> Self {
        // INVARIANT: the caller guarantees the buffer; nothing is written yet.
        Self {
            buf: buf.cast(),
            len: 0,
            truncated: false,
            _buf: PhantomData,
        }
    }

    /// Appends `bytes`, as many as fit. Fails with [`fmt::Error`] if some did not.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> fmt::Result {
        let n = bytes.len().min(PAGE_MAX - self.len);
        // SAFETY: by the type invariant `buf` has room for `PAGE_MAX` bytes
        // and `len + n <= PAGE_MAX`; `bytes` is a different object.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), self.buf.add(self.len), n) };
        // INVARIANT: `n` more bytes were written, still at most `PAGE_MAX`.
        self.len += n;
        if n < bytes.len() {
            self.truncated = true;
            return Err(fmt::Error);
        }
        Ok(())
    }

    /// The number of bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What a `show` returns to sysfs: the length written, or the error of
    /// the `show`; if the text was cut off, what fits, as `sysfs_emit` does.
    pub(crate) fn finish(&self, res: Result) -> isize {
        match res {
            Err(e) if !self.truncated => e.to_errno() as isize,
            // The length is at most `PAGE_MAX`, so it fits.
            _ => self.len as isize,
        }
    }
}

impl fmt::Write for Page<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.write_bytes(s.as_bytes())
    }
}

/// One sysfs attribute: a file in the directory of an object whose data is
/// [`Attribute::Data`]. Implement it on a unit struct per attribute, with
/// `#[vtable]`, and list the structs in [`attributes!`].
///
/// `show` and `store` run in process context and may sleep, concurrently
/// with each other and with themselves. The object's data is alive while
/// they run: removing the object from sysfs waits for running calls (kernfs
/// active references), and the data is freed only after that.
///
/// [`attributes!`]: crate::sysfs::attributes
#[vtable]
pub trait Attribute {
    /// The data of the objects (a [`Device`] or a [`Kobject`]) that have
    /// this attribute.
    ///
    /// [`Device`]: super::Device
    /// [`Kobject`]: super::Kobject
    type Data: Send + Sync;

    /// The file name.
    const NAME: &'static CStr;

    /// The file mode, as in C: `0o444` read-only, `0o644` read-write,
    /// `0o200` write-only. Checked at build time as C's
    /// `VERIFY_OCTAL_PERMISSIONS` does, and readable exactly if there is a
    /// `show`, writable exactly if there is a `store`.
    const MODE: u16;

    /// Writes the value into `page` (a read of the file).
    fn show(_data: &Self::Data, _page: &mut Page<'_>) -> Result {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }

    /// Takes a write of `input` (what userspace wrote, often with a trailing
    /// newline). Returns the number of bytes consumed, normally
    /// `input.len()`, or the errno that `write(2)` fails with.
    fn store(_data: &Self::Data, _input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
}

/// The context of a [`Attribute::store`] call: lets a store remove its own
/// object (C's `sysfs_remove_file_self`, as `remove_path` and
/// `unmap_device` do).
///
/// # Invariants
///
/// `kobj` is the kobject whose attribute `attr` is being stored, and the
/// store runs with the kernfs active reference of the file, until
/// [`Store::remove_self`] breaks it, after which `hold` keeps the kobject and
/// the module alive until this value is dropped.
pub struct Store<'a> {
    kobj: *mut ffi::kobject,
    attr: *const ffi::attribute,
    hold: Option<SelfRemoved>,
    _call: PhantomData<&'a ()>,
}

/// What keeps a store that removed its own file safe to finish: a reference
/// on the kobject (its data stays allocated) and one on the module (its code
/// stays loaded).
///
/// # Invariants
///
/// One reference on `kobj` was taken with `kobject_get` for this value.
struct SelfRemoved {
    kobj: *mut ffi::kobject,
    _module: ModuleRef,
}

impl Drop for SelfRemoved {
    fn drop(&mut self) {
        // SAFETY: by the type invariant this value owns a reference on
        // `kobj`. This may free the object's data (its release), which no
        // borrow outlives: `Store` is dropped after the store returned.
        unsafe { ffi::kobject_put(self.kobj) };
    }
}

impl Store<'_> {
    /// # Safety
    ///
    /// As the type invariant: `kobj` and `attr` are those of a store that
    /// runs now, under the file's active reference.
    unsafe fn new(kobj: *mut ffi::kobject, attr: *const ffi::attribute) -> Self {
        // INVARIANT: guaranteed by the caller; nothing removed yet.
        Self {
            kobj,
            attr,
            hold: None,
            _call: PhantomData,
        }
    }

    /// Removes this attribute's file, so that the store can then remove its
    /// own object (drop its [`Kobject`] or [`Device`]) without waiting for
    /// itself. Call it first, before taking locks.
    ///
    /// Until the store returns, the object's data and the module stay
    /// alive, whatever the store drops. Of concurrent stores that remove the
    /// same file, one succeeds; the others wait until that store has
    /// returned and then fail with `ENODEV`, as they do while the module is
    /// going away.
    ///
    /// [`Kobject`]: super::Kobject
    /// [`Device`]: super::Device
    pub fn remove_self(&mut self) -> Result {
        if self.hold.is_some() {
            return Ok(());
        }
        let module = ModuleRef::try_get().ok_or(ENODEV)?;
        // SAFETY: by the type invariant the store runs under the file's
        // active reference, so the kobject is alive.
        unsafe { ffi::kobject_get(self.kobj) };
        // INVARIANT: the reference just taken is handed to `SelfRemoved`;
        // from here the kobject and the module are held.
        self.hold = Some(SelfRemoved {
            kobj: self.kobj,
            _module: module,
        });
        // SAFETY: `kobj` is alive (held above) and `attr` is one of its
        // attributes whose store runs now, with the active reference that
        // `sysfs_remove_file_self` requires and breaks.
        if unsafe { ffi::sysfs_remove_file_self(self.kobj, self.attr) } {
            Ok(())
        } else {
            Err(ENODEV)
        }
    }
}

/// Checks a sysfs or module parameter mode at build time, as C's
/// `VERIFY_OCTAL_PERMISSIONS`.
pub(crate) const fn verify_octal_permissions(mode: u16) -> u16 {
    assert!(mode <= 0o777, "mode has bits beyond 0777");
    assert!(
        (mode >> 6) & 4 >= (mode >> 3) & 4,
        "group can read, user cannot"
    );
    assert!((mode >> 3) & 4 >= mode & 4, "others can read, group cannot");
    assert!(
        (mode >> 6) & 2 >= (mode >> 3) & 2,
        "group can write, user cannot"
    );
    assert!(mode & 2 == 0, "world-writable");
    mode
}

/// Checks an attribute's mode at build time, as
/// [`verify_octal_permissions`], and that it matches the callbacks:
/// readable exactly with a `show`, writable exactly with a `store`.
const fn verify_mode(mode: u16, has_show: bool, has_store: bool) -> u16 {
    let mode = verify_octal_permissions(mode);
    assert!(
        (mode & 0o444 != 0) == has_show,
        "readable exactly if there is a show"
    );
    assert!(
        (mode & 0o222 != 0) == has_store,
        "writable exactly if there is a store"
    );
    mode
}

/// The type parameters of a table: the data `T` of its objects and its kind
/// `K` ([`Dev`] or [`Kobj`]).
type Marker<T, K> = PhantomData<(fn(&T), K)>;

/// Marks the tables of attributes of a [`Device`](super::Device)
/// (`struct device_attribute`).
pub struct Dev;

/// Marks the tables of attributes of a [`Kobject`](super::Kobject)
/// (`struct kobj_attribute`).
pub struct Kobj;

/// The `struct attribute` of a static attribute, as C's `__ATTR` makes it:
/// the name and mode, and every other field zero (with lockdep, `key` null
/// and `skey` unused: sysfs then keys the attribute on `&skey`, which is
/// static because the tables of attributes are).
const fn c_attr(name: &'static CStr, mode: u16) -> ffi::attribute {
    // `struct attribute` holds only pointers, integers, bitfields and
    // lockdep's `struct lock_class_key` (a list node or raw keys).
    // SAFETY: all zero bits is a valid value for each of those fields:
    // what C's static initialisers leave in the fields they do not name.
    let mut a: ffi::attribute = unsafe { core::mem::zeroed() };
    a.name = name.as_char_ptr();
    a.mode = mode;
    a
}

/// One attribute of a device whose data is `T` (a `struct device_attribute`).
///
/// # Invariants
///
/// The callbacks are `dev_show::<T, A>`/`dev_store::<T, A>` of an
/// `A: Attribute<Data = T>`, `attr.name` is `A::NAME`; never changed.
#[repr(transparent)]
pub struct DevAttr<T>(ffi::device_attribute, PhantomData<fn(&T)>);

// SAFETY: immutable, and C only reads it; it points to 'static data and code.
unsafe impl<T> Sync for DevAttr<T> {}

impl<T: Send + Sync + 'static> DevAttr<T> {
    /// The C attribute for `A`.
    pub const fn new<A: Attribute<Data = T>>() -> Self {
        let mode = verify_mode(A::MODE, A::HAS_SHOW, A::HAS_STORE);
        // INVARIANT: the callbacks and the name are those of `A`.
        Self(
            ffi::device_attribute {
                attr: c_attr(A::NAME, mode),
                show: if A::HAS_SHOW {
                    Some(dev_show::<T, A>)
                } else {
                    None
                },
                store: if A::HAS_STORE {
                    Some(dev_store::<T, A>)
                } else {
                    None
                },
            },
            PhantomData,
        )
    }
}

/// One attribute of a kobject whose data is `T` (a `struct kobj_attribute`).
///
/// # Invariants
///
/// As [`DevAttr`], with `kobj_show::<T, A>`/`kobj_store::<T, A>`.
#[repr(transparent)]
pub struct KobjAttr<T>(ffi::kobj_attribute, PhantomData<fn(&T)>);

// SAFETY: immutable, and C only reads it; it points to 'static data and code.
unsafe impl<T> Sync for KobjAttr<T> {}

impl<T: Send + Sync + 'static> KobjAttr<T> {
    /// The C attribute for `A`.
    pub const fn new<A: Attribute<Data = T>>() -> Self {
        let mode = verify_mode(A::MODE, A::HAS_SHOW, A::HAS_STORE);
        // INVARIANT: the callbacks and the name are those of `A`.
        Self(
            ffi::kobj_attribute {
                attr: c_attr(A::NAME, mode),
                show: if A::HAS_SHOW {
                    Some(kobj_show::<T, A>)
                } else {
                    None
                },
                store: if A::HAS_STORE {
                    Some(kobj_store::<T, A>)
                } else {
                    None
                },
            },
            PhantomData,
        )
    }
}

/// A NULL-terminated array of `N - 1` attributes of kind `K` (`Dev` or
/// `Kobj`) of objects whose data is `T`: the `attrs` of an attribute group.
///
/// # Invariants
///
/// The first `N - 1` entries point to the `attr` of `'static` [`DevAttr<T>`]
/// (`K = Dev`) or [`KobjAttr<T>`] (`K = Kobj`), the last is NULL.
#[repr(transparent)]
pub struct AttrList<T, K, const N: usize>([*mut ffi::attribute; N], Marker<T, K>);

// SAFETY: immutable, and C only reads it; it points to 'static attributes.
unsafe impl<T, K, const N: usize> Sync for AttrList<T, K, N> {}

impl<T, const N: usize> AttrList<T, Dev, N> {
    /// The list of `attrs`.
    pub const fn new<const M: usize>(attrs: &'static [DevAttr<T>; M]) -> Self {
        assert!(N == M + 1);
        let mut list = [ptr::null_mut(); N];
        let mut i = 0;
        while i < M {
            list[i] = (&raw const attrs[i].0.attr).cast_mut();
            i += 1;
        }
        // INVARIANT: `M` attributes of devices of `T`, then NULL.
        Self(list, PhantomData)
    }
}

impl<T, const N: usize> AttrList<T, Kobj, N> {
    /// The list of `attrs`.
    pub const fn new<const M: usize>(attrs: &'static [KobjAttr<T>; M]) -> Self {
        assert!(N == M + 1);
        let mut list = [ptr::null_mut(); N];
        let mut i = 0;
        while i < M {
            list[i] = (&raw const attrs[i].0.attr).cast_mut();
            i += 1;
        }
        // INVARIANT: `M` attributes of kobjects of `T`, then NULL.
        Self(list, PhantomData)
    }
}

/// An unnamed attribute group (`struct attribute_group`) and the
/// NULL-terminated list of groups that holds it (`const struct
/// attribute_group **`, as `dev->groups` and `ktype->default_groups` take).
///
/// # Invariants
///
/// `group.attrs` points to a `'static` [`AttrList<T, K, _>`]; `list` is
/// `[&group, NULL]` once the value is in its `'static` place.
pub struct Group<T, K> {
    group: ffi::attribute_group,
    _attrs: Marker<T, K>,
}

// SAFETY: immutable, and C only reads it; it points to 'static data.
unsafe impl<T, K> Sync for Group<T, K> {}

impl<T, K> Group<T, K> {
    /// The group of the attributes in `attrs`.
    pub const fn new<const N: usize>(attrs: &'static AttrList<T, K, N>) -> Self {
        // SAFETY: all-zero is a valid `attribute_group`: NULL pointers and
        // no callbacks.
        let mut group: ffi::attribute_group = unsafe { core::mem::zeroed() };
        group.attrs = attrs.0.as_ptr().cast_mut();
        // INVARIANT: points to the list of `T`'s attributes of kind `K`.
        Self {
            group,
            _attrs: PhantomData,
        }
    }
}

/// The NULL-terminated list of one [`Group`].
///
/// # Invariants
///
/// `[&group.group, NULL]` of a `'static` [`Group<T, K>`].
#[repr(transparent)]
pub struct Groups<T, K>([*const ffi::attribute_group; 2], Marker<T, K>);

// SAFETY: immutable, and C only reads it; it points to 'static data.
unsafe impl<T, K> Sync for Groups<T, K> {}

impl<T, K> Groups<T, K> {
    /// The list `[group, NULL]`.
    pub const fn new(group: &'static Group<T, K>) -> Self {
        // INVARIANT: as documented.
        Self([&raw const group.group, ptr::null()], PhantomData)
    }

    pub(crate) const fn as_ptr(&'static self) -> *mut *const ffi::attribute_group {
        self.0.as_ptr().cast_mut()
    }
}

/// The `struct kobj_type` of the [`Kobject`](super::Kobject)s whose data is
/// `T`: `kobj_sysfs_ops`, a release that frees the Rust object, and the
/// attributes as default groups.
///
/// # Invariants
///
/// `release` is `kobj_release::<T>` and `default_groups` is a [`Groups<T,
/// Kobj>`].
#[repr(transparent)]
pub struct KobjType<T>(ffi::kobj_type, PhantomData<fn(&T)>);

// SAFETY: immutable, and C only reads it; it points to 'static data and code.
unsafe impl<T> Sync for KobjType<T> {}

impl<T: Send + Sync + 'static> KobjType<T> {
    /// The ktype with the attribute groups `groups`.
    pub const fn new(groups: &'static Groups<T, Kobj>) -> Self {
        // INVARIANT: as documented.
        Self(
            ffi::kobj_type {
                release: Some(kobj_release::<T>),
                sysfs_ops: &raw const ffi::kobj_sysfs_ops,
                default_groups: groups.as_ptr(),
                child_ns_type: None,
                namespace: None,
                get_ownership: None,
            },
            PhantomData,
        )
    }

    pub(crate) const fn as_ptr(&'static self) -> *const ffi::kobj_type {
        &self.0
    }
}

/// The attributes of the objects whose data is `T`, for a
/// [`Device`](super::Device) or a [`Kobject`](super::Kobject). Built by
/// [`attributes!`](crate::sysfs::attributes).
pub struct Attributes<T: 'static> {
    dev_groups: &'static Groups<T, Dev>,
    ktype: &'static KobjType<T>,
}

impl<T: 'static> Attributes<T> {
    /// The attributes with these tables (use [`attributes!`]).
    ///
    /// [`attributes!`]: crate::sysfs::attributes
    pub const fn new(dev_groups: &'static Groups<T, Dev>, ktype: &'static KobjType<T>) -> Self {
        Self { dev_groups, ktype }
    }

    /// The groups for `dev->groups`.
    pub(crate) fn dev_groups(&self) -> *mut *const ffi::attribute_group {
        self.dev_groups.as_ptr()
    }
}

impl<T: Send + Sync + 'static> Attributes<T> {
    /// The ktype for kobjects of `T`.
    pub(crate) fn ktype(&self) -> *const ffi::kobj_type {
        self.ktype.as_ptr()
    }
}

/// `show` of a device attribute.
///
/// # Safety
///
/// Called by sysfs for a [`DevAttr<T>`] of a device created by
/// `Device::<T>::new`, under the file's active reference, with a page
/// buffer.
unsafe extern "C" fn dev_show<T: Send + Sync + 'static, A: Attribute<Data = T>>(
    dev: *mut ffi::device,
    _attr: *mut ffi::device_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: `DevAttr<T>` tables are installed only on devices of
    // `DevInner<T>`, alive under the active reference of the file.
    let data = unsafe { DevInner::<T>::data(dev) };
    // SAFETY: sysfs hands a page buffer, ours until we return.
    let mut page = unsafe { Page::from_raw(buf) };
    let res = A::show(data, &mut page);
    page.finish(res)
}

/// `store` of a device attribute.
///
/// # Safety
///
/// As [`dev_show`], with `count` bytes at `buf`.
unsafe extern "C" fn dev_store<T: Send + Sync + 'static, A: Attribute<Data = T>>(
    dev: *mut ffi::device,
    attr: *mut ffi::device_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: the store runs under the file's active reference, and `attr`
    // is the attribute stored; `dev.kobj` is the kobject of its directory.
    let mut ctx = unsafe { Store::new(&raw mut (*dev).kobj, &raw const (*attr).attr) };
    let res = {
        // SAFETY: as in `dev_show`; `data` does not outlive this block, while
        // `ctx` (dropped after it) holds the device if the store removed it.
        let data = unsafe { DevInner::<T>::data(dev) };
        // SAFETY: sysfs passes `count` readable bytes.
        let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
        A::store(data, input, &mut ctx)
    };
    drop(ctx);
    store_ret(res, count)
}

/// `show` of a kobject attribute.
///
/// # Safety
///
/// Called by sysfs (`kobj_sysfs_ops`) for a [`KobjAttr<T>`] of a kobject
/// created by `Kobject::<T>::new`, under the file's active reference, with a
/// page buffer.
unsafe extern "C" fn kobj_show<T: Send + Sync + 'static, A: Attribute<Data = T>>(
    kobj: *mut ffi::kobject,
    _attr: *mut ffi::kobj_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: `KobjAttr<T>` tables are installed only by `KobjType<T>`, on
    // kobjects of `KobjInner<T>`, alive under the active reference.
    let data = unsafe { KobjInner::<T>::data(kobj) };
    // SAFETY: sysfs hands a page buffer, ours until we return.
    let mut page = unsafe { Page::from_raw(buf) };
    let res = A::show(data, &mut page);
    page.finish(res)
}

/// `store` of a kobject attribute.
///
/// # Safety
///
/// As [`kobj_show`], with `count` bytes at `buf`.
unsafe extern "C" fn kobj_store<T: Send + Sync + 'static, A: Attribute<Data = T>>(
    kobj: *mut ffi::kobject,
    attr: *mut ffi::kobj_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: the store runs under the file's active reference, and `attr`
    // is the attribute stored in the directory of `kobj`.
    let mut ctx = unsafe { Store::new(kobj, &raw const (*attr).attr) };
    let res = {
        // SAFETY: as in `kobj_show`; `data` does not outlive this block,
        // while `ctx` (dropped after it) holds the kobject if the store
        // removed it.
        let data = unsafe { KobjInner::<T>::data(kobj) };
        // SAFETY: sysfs passes `count` readable bytes.
        let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
        A::store(data, input, &mut ctx)
    };
    drop(ctx);
    store_ret(res, count)
}

/// What a store of `count` bytes returns to sysfs: at most `count`.
fn store_ret(res: Result<usize>, count: usize) -> isize {
    match res {
        Ok(n) => isize::try_from(n.min(count)).unwrap_or(isize::MAX),
        Err(e) => e.to_errno() as isize,
    }
}

/// `release` of the kobjects of `T`: frees the Rust object.
///
/// # Safety
///
/// Called by the kobject core once, at the last `kobject_put` of a kobject
/// of ktype [`KobjType<T>`], which only `Kobject::<T>::new` installs.
unsafe extern "C" fn kobj_release<T: Send + Sync + 'static>(kobj: *mut ffi::kobject) {
    // SAFETY: as above; nothing uses the kobject after its release.
    unsafe { KobjInner::<T>::free(kobj) };
}
