// SPDX-License-Identifier: GPL-2.0-or-later

//! Module parameters, as C's `module_param`/`module_param_cb`: set on the
//! `insmod` command line, shown (and, if writable, set) in
//! `/sys/module/<module>/parameters/<name>`, read by the module through
//! typed accessors.
//!
//! ```ignore
//! module_param! {
//!     /// Invalidate memory registrations before accessing them.
//!     static ALWAYS_INVALIDATE: BoolParam = BoolParam::new(true);
//!     name: always_invalidate, perm: 0o444,
//!     desc: "Invalidate memory registration for contiguous memory regions before accessing.";
//! }
//! if ALWAYS_INVALIDATE.value() { /* ... */ }
//! ```
//!
//! The kernel calls a parameter's `set` and `get` with the module's
//! parameter lock held (`kernel_param_lock(THIS_MODULE)`), so `set` never
//! races with another `set` or `get`. Numbers and booleans are atomics that
//! the module reads without the lock; strings are read under it
//! ([`lock`], [`StringParam::read`]).

use crate::ffi;
use crate::module::this_module;
use crate::sysfs::Page;
use core::cell::UnsafeCell;
use core::fmt::Write;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU16, AtomicU32, Ordering};
use kernel::error::to_result;
use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;
use kernel::str::CStr;

/// The value of a module parameter: how it is parsed, stored and shown.
/// Implement it for a type of your own to validate values (C's
/// `module_param_cb` with custom ops), usually wrapping one of the types
/// here.
pub trait ParamValue: Sync + 'static {
    /// The type `modinfo` shows (`parmtype`): `bool`, `int`, `string`, ...
    const TYPE: &'static str;

    /// Whether the parameter may be given without a value (`foo` for
    /// `foo=1`), as for `bool`. Then `set` gets `None` for it.
    const NOARG: bool = false;

    /// Parses and stores `val`, or fails with the errno that `insmod` or the
    /// sysfs write fails with. A value written in sysfs usually ends with a
    /// newline.
    fn set(&self, val: Option<&CStr>, locked: &mut ParamLocked) -> Result;

    /// Writes the value, followed by a newline, into `page`.
    fn get(&self, page: &mut Page<'_>, locked: &ParamLocked) -> Result;
}

/// Proof that this module's parameter lock is held: given to
/// [`ParamValue::set`]/[`ParamValue::get`] by the kernel, or taken with
/// [`lock`]. Values only the lock protects are borrowed through a shared
/// `&ParamLocked` and changed through a `&mut ParamLocked`.
///
/// # Invariants
///
/// While a `ParamLocked` exists, this thread holds
/// `kernel_param_lock(THIS_MODULE)`.
pub struct ParamLocked {
    _not_send: PhantomData<*mut ()>,
}

impl ParamLocked {
    /// # Safety
    ///
    /// The caller holds `kernel_param_lock(THIS_MODULE)` while the result
    /// lives, and no other `ParamLocked` exists meanwhile.
    unsafe fn new() -> Self {
        // INVARIANT: guaranteed by the caller.
        Self {
            _not_send: PhantomData,
        }
    }
}

/// The parameter lock of this module, held until dropped.
pub struct ParamGuard(ParamLocked);

/// Takes this module's parameter lock (`kernel_param_lock(THIS_MODULE)`, a
/// mutex): `set`/`get` calls from sysfs wait meanwhile. May sleep; must not
/// be called from a parameter's own `set` or `get` (they run under it).
pub fn lock() -> ParamGuard {
    // SAFETY: `this_module()` is this module, alive while its code runs.
    unsafe { ffi::kernel_param_lock(this_module()) };
    // SAFETY: locked just now, until `ParamGuard::drop`; the mutex excludes
    // any other `ParamLocked`.
    ParamGuard(unsafe { ParamLocked::new() })
}

impl Drop for ParamGuard {
    fn drop(&mut self) {
        // SAFETY: taken in `lock`, released once here.
        unsafe { ffi::kernel_param_unlock(this_module()) };
    }
}

impl Deref for ParamGuard {
    type Target = ParamLocked;

    fn deref(&self) -> &ParamLocked {
        &self.0
    }
}

impl DerefMut for ParamGuard {
    fn deref_mut(&mut self) -> &mut ParamLocked {
        &mut self.0
    }
}

/// Defines the numeric parameter types over the kernel's `kstrto*`, so they
/// parse as the C `param_ops_*` do (any base, `0x` hex, `0` octal).
macro_rules! number_param {
    ($(#[$meta:meta])* $name:ident, $atomic:ty, $int:ty, $type:literal, $kstrto:ident) => {
        $(#[$meta])*
        pub struct $name($atomic);

        impl $name {
            /// A parameter with the default `v`.
            pub const fn new(v: $int) -> Self {
                Self(<$atomic>::new(v))
            }

            /// The current value.
            pub fn value(&self) -> $int {
                self.0.load(Ordering::Relaxed)
            }

            /// Changes the value (as C code assigns to its variable).
            pub fn set_value(&self, v: $int) {
                self.0.store(v, Ordering::Relaxed)
            }

            /// Parses `val` as C's `param_set_*` does: the kernel's
            /// `kstrto*` with base 0.
            pub fn parse(val: &CStr) -> Result<$int> {
                let mut v: $int = 0;
                // SAFETY: `val` is a C string and `v` a valid output.
                to_result(unsafe { ffi::$kstrto(val.as_char_ptr(), 0, &mut v) })?;
                Ok(v)
            }
        }

        impl ParamValue for $name {
            const TYPE: &'static str = $type;

            fn set(&self, val: Option<&CStr>, _locked: &mut ParamLocked) -> Result {
                self.set_value(Self::parse(val.ok_or(EINVAL)?)?);
                Ok(())
            }

            fn get(&self, page: &mut Page<'_>, _locked: &ParamLocked) -> Result {
                Ok(writeln!(page, "{}", self.value())?)
            }
        }
    };
}

number_param!(
    /// An `int` parameter (C `module_param(name, int, perm)`).
    IntParam, AtomicI32, i32, "int", kstrtoint
);
number_param!(
    /// A `uint` parameter (C `module_param(name, uint, perm)`).
    UintParam, AtomicU32, u32, "uint", kstrtouint
);
number_param!(
    /// A `ushort` parameter (C `module_param(name, ushort, perm)`).
    UshortParam, AtomicU16, u16, "ushort", kstrtou16
);

/// A `bool` parameter (C `module_param(name, bool, perm)`): takes
/// `1/0/y/n/Y/N/on/off`, or no value for true, and shows `Y` or `N`.
pub struct BoolParam(AtomicBool);

impl BoolParam {
    /// A parameter with the default `v`.
    pub const fn new(v: bool) -> Self {
        Self(AtomicBool::new(v))
    }

    /// The current value.
    pub fn value(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Changes the value.
    pub fn set_value(&self, v: bool) {
        self.0.store(v, Ordering::Relaxed)
    }
}

impl ParamValue for BoolParam {
    const TYPE: &'static str = "bool";
    const NOARG: bool = true;

    fn set(&self, val: Option<&CStr>, _locked: &mut ParamLocked) -> Result {
        let val = val.unwrap_or(kernel::c_str!("1"));
        let mut v = false;
        // SAFETY: `val` is a C string and `v` a valid output.
        to_result(unsafe { ffi::kstrtobool(val.as_char_ptr(), &mut v) })?;
        self.set_value(v);
        Ok(())
    }

    fn get(&self, page: &mut Page<'_>, _locked: &ParamLocked) -> Result {
        Ok(page.write_str(if self.value() { "Y\n" } else { "N\n" })?)
    }
}

/// A string parameter in a fixed buffer of `N` bytes, the NUL included (C's
/// `module_param_string`, `struct kparam_string`). Its own `set` stores the
/// value as given, newline included, or fails with `ENOSPC` if it does not
/// fit, as C's `param_set_copystring`; wrap it in a [`ParamValue`] of your
/// own to check values, then [`StringParam::store`].
///
/// # Invariants
///
/// `buf` holds a NUL-terminated string and is only accessed under the
/// module's parameter lock: read through a `&ParamLocked`, written through a
/// `&mut ParamLocked`.
pub struct StringParam<const N: usize> {
    buf: UnsafeCell<[u8; N]>,
}

// SAFETY: `buf` is only accessed under the parameter lock (type invariant).
unsafe impl<const N: usize> Sync for StringParam<N> {}

impl<const N: usize> StringParam<N> {
    /// A parameter with the default `v`; it must fit (checked at build time
    /// when used in a static).
    pub const fn new(v: &str) -> Self {
        let v = v.as_bytes();
        assert!(v.len() < N, "default does not fit");
        let mut buf = [0u8; N];
        let mut i = 0;
        while i < v.len() {
            assert!(v[i] != 0, "NUL in default");
            buf[i] = v[i];
            i += 1;
        }
        // INVARIANT: NUL-terminated.
        Self {
            buf: UnsafeCell::new(buf),
        }
    }

    /// The current value, without the NUL.
    pub fn value<'a>(&'a self, _locked: &'a ParamLocked) -> &'a [u8] {
        // SAFETY: the lock is held and writers need `&mut ParamLocked`,
        // which the borrow of `_locked` excludes for `'a`.
        let buf = unsafe { &*self.buf.get() };
        let len = buf.iter().position(|&b| b == 0).unwrap_or(N);
        &buf[..len]
    }

    /// Calls `f` with the current value, under the parameter lock. Must not
    /// be called from a parameter's `set` or `get` (use [`Self::value`]).
    pub fn read<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let guard = lock();
        f(self.value(&guard))
    }

    /// Replaces the value with `v`: `ENOSPC` if it does not fit, `EINVAL`
    /// if it holds a NUL.
    pub fn store(&self, v: &[u8], _locked: &mut ParamLocked) -> Result {
        if v.len() >= N {
            return Err(ENOSPC);
        }
        if v.contains(&0) {
            return Err(EINVAL);
        }
        // SAFETY: the lock is held and `&mut ParamLocked` excludes any
        // borrow from `value`.
        let buf = unsafe { &mut *self.buf.get() };
        buf[..v.len()].copy_from_slice(v);
        // INVARIANT: NUL-terminated.
        buf[v.len()] = 0;
        Ok(())
    }
}

impl<const N: usize> ParamValue for StringParam<N> {
    const TYPE: &'static str = "string";

    fn set(&self, val: Option<&CStr>, locked: &mut ParamLocked) -> Result {
        let val = val.ok_or(EINVAL)?;
        self.store(val.as_bytes(), locked).inspect_err(|_| {
            pr_err!("string doesn't fit in {} chars.\n", N - 1);
        })
    }

    fn get(&self, page: &mut Page<'_>, locked: &ParamLocked) -> Result {
        page.write_bytes(self.value(locked))?;
        Ok(page.write_str("\n")?)
    }
}

/// `set` of the `kernel_param_ops` of `P`.
///
/// # Safety
///
/// Called by the kernel with a NUL-terminated `val` (or NULL for a
/// parameter given without a value) and a `kp` built by
/// [`KernelParam::new::<P>`], with `kernel_param_lock(kp->mod)` held.
unsafe extern "C" fn param_set<P: ParamValue>(
    val: *const c_char,
    kp: *const ffi::kernel_param,
) -> c_int {
    // SAFETY: `kp` is a `KernelParam` built for `P`: `arg` is a `&'static P`.
    let p = unsafe { &*(*kp).__bindgen_anon_1.arg.cast::<P>() };
    // SAFETY: a non-NULL `val` is a C string, valid during the call.
    let val = (!val.is_null()).then(|| unsafe { CStr::from_char_ptr(val) });
    // SAFETY: the kernel holds the lock of `kp->mod`, this module, during
    // the call; it is the only `ParamLocked` (the mutex excludes others).
    let mut locked = unsafe { ParamLocked::new() };
    match p.set(val, &mut locked) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `get` of the `kernel_param_ops` of `P`.
///
/// # Safety
///
/// Called by the kernel with a page buffer and a `kp` built by
/// [`KernelParam::new::<P>`], with `kernel_param_lock(kp->mod)` held.
unsafe extern "C" fn param_get<P: ParamValue>(
    buf: *mut c_char,
    kp: *const ffi::kernel_param,
) -> c_int {
    // SAFETY: as in `param_set`.
    let p = unsafe { &*(*kp).__bindgen_anon_1.arg.cast::<P>() };
    // SAFETY: sysfs hands a page buffer, ours until we return.
    let mut page = unsafe { Page::from_raw(buf) };
    // SAFETY: as in `param_set`.
    let locked = unsafe { ParamLocked::new() };
    let res = p.get(&mut page, &locked);
    // A page length fits in an int.
    page.finish(res) as c_int
}

/// The `kernel_param_ops` of `P`.
struct Ops<P>(PhantomData<P>);

impl<P: ParamValue> Ops<P> {
    const OPS: ffi::kernel_param_ops = ffi::kernel_param_ops {
        flags: if P::NOARG {
            ffi::KERNEL_PARAM_OPS_FL_NOARG
        } else {
            0
        },
        set: Some(param_set::<P>),
        get: Some(param_get::<P>),
        free: None,
    };
}

/// A C `struct kernel_param`, as `module_param_cb` defines in the `__param`
/// section, where the module loader finds it ([`module_param!`] puts it
/// there).
///
/// # Invariants
///
/// `ops` are `Ops::<P>::OPS` and `arg` is a `&'static P` for one
/// `P: ParamValue`; `mod` is this module.
#[repr(transparent)]
pub struct KernelParam(ffi::kernel_param);

// SAFETY: immutable, and C only reads it; it points to 'static data.
unsafe impl Sync for KernelParam {}

impl KernelParam {
    /// The parameter `name` of this module, whose value is `value`, with
    /// sysfs mode `perm` (0 for none), checked at build time as C's
    /// `VERIFY_OCTAL_PERMISSIONS`.
    pub const fn new<P: ParamValue>(name: &'static CStr, value: &'static P, perm: u16) -> Self {
        // INVARIANT: the ops and `arg` are those of `P`; `mod` is this module.
        Self(ffi::kernel_param {
            name: name.as_char_ptr(),
            mod_: this_module(),
            ops: &Ops::<P>::OPS,
            perm: crate::sysfs::verify_octal_permissions(perm),
            level: -1,
            flags: 0,
            __bindgen_anon_1: ffi::kernel_param__bindgen_ty_1 {
                arg: (value as *const P).cast_mut().cast(),
            },
        })
    }
}

/// The length of a `.modinfo` string made of `parts`, with its NUL.
pub const fn modinfo_len(parts: &[&str]) -> usize {
    let mut len = 1;
    let mut i = 0;
    while i < parts.len() {
        len += parts[i].len();
        i += 1;
    }
    len
}

/// A `.modinfo` string made of `parts` and a NUL; `N` is
/// [`modinfo_len`]`(parts)`.
pub const fn modinfo<const N: usize>(parts: &[&str]) -> [u8; N] {
    assert!(N == modinfo_len(parts));
    let mut out = [0u8; N];
    let mut at = 0;
    let mut i = 0;
    while i < parts.len() {
        let p = parts[i].as_bytes();
        let mut j = 0;
        while j < p.len() {
            out[at] = p[j];
            at += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

/// Defines a module parameter: a static of a [`ParamValue`] type that the
/// module reads, the `struct kernel_param` for it in `__param` (as C's
/// `module_param_cb`), and its `parmtype`/`parm` `.modinfo` lines (as
/// `__MODULE_PARM_TYPE` and `MODULE_PARM_DESC`).
///
/// ```ignore
/// module_param! {
///     /// The port number the server is listening on.
///     static PORT_NR: UshortParam = UshortParam::new(1234);
///     name: port_nr, perm: 0o444,
///     desc: "The port number the server is listening on (default: 1234)";
/// }
/// ```
///
/// `name` is the parameter's name on the command line and in sysfs (for a
/// loadable module, without a prefix); `perm` its mode in
/// `/sys/module/<module>/parameters/` (0 for none).
#[macro_export]
macro_rules! module_param {
    (
        $(#[$meta:meta])*
        $vis:vis static $id:ident: $ty:ty = $init:expr;
        name: $name:ident, perm: $perm:expr, desc: $desc:expr $(;)?
    ) => {
        $(#[$meta])*
        $vis static $id: $ty = $init;

        // The macro is the audited place (a `KernelParam` is built only by
        // `KernelParam::new` for its own static); its user needs no `unsafe`.
        #[allow(unsafe_code)]
        const _: () = {
            use $crate::param as __param;

            #[link_section = "__param"]
            #[used(compiler)]
            static PARAM: __param::KernelParam = __param::KernelParam::new::<$ty>(
                ::kernel::c_str!(stringify!($name)),
                &$id,
                $perm,
            );

            const TYPE: [&str; 4] =
                ["parmtype=", stringify!($name), ":", <$ty as __param::ParamValue>::TYPE];
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static PARMTYPE: [u8; __param::modinfo_len(&TYPE)] = __param::modinfo(&TYPE);

            const DESC: [&str; 4] = ["parm=", stringify!($name), ":", $desc];
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static PARM: [u8; __param::modinfo_len(&DESC)] = __param::modinfo(&DESC);
        };
    };
}
pub use crate::module_param;
