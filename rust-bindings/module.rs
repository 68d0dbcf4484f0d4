// SPDX-License-Identifier: GPL-2.0-or-later

//! C's `THIS_MODULE` for the module that includes this copy of rust-bindings,
//! and a reference that keeps it loaded (`try_module_get`/`module_put`).

use crate::rb::ffi;

/// The `struct module` of this module (C's `THIS_MODULE`).
///
/// rust-bindings is compiled into every module, so `__this_module` is the
/// one that modpost generates for the module at hand.
pub(crate) const fn this_module() -> *mut ffi::module {
    &raw mut ffi::__this_module
}

/// A reference on this module: while it lives, `rmmod` fails with `EBUSY`
/// and the module's code stays in memory.
///
/// # Invariants
///
/// `try_module_get(this_module())` succeeded for this value and is undone
/// only by its `Drop`.
pub(crate) struct ModuleRef(());

impl ModuleRef {
    /// Takes a reference unless the module is going away (its exit runs or
    /// has run), as `try_module_get`.
    pub(crate) fn try_get() -> Option<Self> {
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
