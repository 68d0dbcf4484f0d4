// SPDX-License-Identifier: GPL-2.0-or-later

//! C's `THIS_MODULE` for the module that links this copy of the crate, a
//! reference that keeps it loaded (`try_module_get`/`module_put`), and the
//! module's name as the prefix of log lines.

use crate::ffi;

/// The `struct module` of this module (C's `THIS_MODULE`).
///
/// Every module links its own copy of the crate, so `__this_module` is the
/// one that modpost generates for the module at hand.
pub const fn this_module() -> *mut ffi::module {
    &raw mut ffi::__this_module
}

/// The prefix of the log lines that the kernel crate's `pr_*!` macros print
/// from a library crate: the name of the module that links it
/// (`KBUILD_MODNAME`, as `module!` gives a module's own crate), read from
/// its `struct module`.
///
/// The macros take `crate::__LOG_PREFIX` as `&[u8]`; a library crate that
/// logs re-exports [`__LOG_PREFIX`] at its root (`use rb::__LOG_PREFIX;`).
pub struct LogPrefix(());

/// See [`LogPrefix`].
pub const __LOG_PREFIX: &LogPrefix = &LogPrefix(());

impl core::ops::Deref for LogPrefix {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `__this_module` is this module's `struct module`, valid
        // while its code runs; its `name` is set at build time
        // (`KBUILD_MODNAME`, NUL-terminated) and never written.
        let name = unsafe { &*(&raw const ffi::__this_module.name) };
        // SAFETY: `c_char` and `u8` have the same size and alignment.
        let bytes = unsafe { core::slice::from_raw_parts(name.as_ptr().cast::<u8>(), name.len()) };
        // The NUL is part of the prefix (`call_printk` passes it as `%s`).
        match bytes.iter().position(|&b| b == 0) {
            Some(nul) => &bytes[..=nul],
            None => b"\0",
        }
    }
}

/// A reference on this module: while it lives, `rmmod` fails with `EBUSY`
/// and the module's code stays in memory.
///
/// # Invariants
///
/// `try_module_get(this_module())` succeeded for this value and is undone
/// only by its `Drop`.
pub struct ModuleRef(());

impl ModuleRef {
    /// Takes a reference unless the module is going away (its exit runs or
    /// has run), as `try_module_get`.
    pub fn try_get() -> Option<Self> {
        // SAFETY: `this_module()` is this module's `struct module`, valid
        // while any of its code runs, which includes this call.
        if unsafe { ffi::try_module_get(this_module()) } {
            // INVARIANT: the reference was taken.
            Some(Self(()))
        } else {
            None
        }
    }
}

impl Drop for ModuleRef {
    fn drop(&mut self) {
        // SAFETY: by the type invariant this value owns one reference taken
        // with `try_module_get` on the same module.
        unsafe { ffi::module_put(this_module()) };
    }
}

/// The module's version, as C's `MODULE_VERSION` gives it (`modinfo -F
/// version`), which the kernel crate's `module!` cannot declare in 6.12.
///
/// Tools compare it: DKMS refuses to install a module over an in-tree one
/// of the same version, and two modules without one have the same.
///
/// ```ignore
/// rb::module_version!(env!("RTRS_RS_VERSION"));
/// ```
#[macro_export]
macro_rules! module_version {
    ($version:expr) => {
        // The macro is the audited place: a `.modinfo` entry is a
        // NUL-terminated "tag=value" string, which `param::modinfo` builds;
        // its user needs no `unsafe`.
        #[allow(unsafe_code)]
        const _: () = {
            const VERSION: [&str; 2] = ["version=", $version];
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static VERSION_TAG: [u8; $crate::param::modinfo_len(&VERSION)] =
                $crate::param::modinfo(&VERSION);
        };
    };
}
pub use crate::module_version;
