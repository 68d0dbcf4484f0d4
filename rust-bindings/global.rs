// SPDX-License-Identifier: GPL-2.0-or-later

//! A module-wide value that module init sets and module exit takes back:
//! the sysfs class of `rtrs-client`, say, which the exported API (called
//! with no module state) needs and `rmmod` must unregister. The kernel
//! crate of 6.12 has no static lock; the cells of a module share one C
//! spinlock, `rb_global_lock` in `helpers.c`.

use crate::ffi;
use core::cell::UnsafeCell;

/// A value shared by the whole module, set and taken at run time.
///
/// # Invariants
///
/// `value` is only accessed with this module's `rb_global_lock` held.
pub struct Global<T> {
    value: UnsafeCell<Option<T>>,
}

// SAFETY: every access to `value` is serialised by `rb_global_lock`; values
// move between threads (`set`, `take`) and are cloned for any thread (`get`).
unsafe impl<T: Send + Sync> Sync for Global<T> {}

impl<T> Global<T> {
    /// An empty cell, for a `static`.
    pub const fn new() -> Self {
        // INVARIANT: nothing accessed the value yet.
        Self {
            value: UnsafeCell::new(None),
        }
    }

    /// Runs `f` on the value with the lock held: `f` must not sleep.
    fn with<R>(&self, f: impl FnOnce(&mut Option<T>) -> R) -> R {
        // SAFETY: `rb_global_lock` is a statically initialised spinlock of
        // this module; the unlock below pairs with this lock.
        unsafe { ffi::global_lock() };
        // SAFETY: the lock is held (the type invariant): no other reference
        // to the value exists until it is released.
        let r = f(unsafe { &mut *self.value.get() });
        // SAFETY: taken above, on this CPU (spin_lock disables preemption).
        unsafe { ffi::global_unlock() };
        r
    }

    /// Sets the value; gives `v` back if the cell holds one.
    pub fn set(&self, v: T) -> Result<(), T> {
        self.with(|slot| match slot {
            Some(_) => Err(v),
            None => {
                *slot = Some(v);
                Ok(())
            }
        })
    }

    /// Takes the value out, to drop it outside the lock.
    pub fn take(&self) -> Option<T> {
        self.with(Option::take)
    }
}

impl<T: Clone> Global<T> {
    /// A clone of the value (for an `Arc`, a new reference). `T::clone`
    /// runs under a spinlock and must not sleep.
    pub fn get(&self) -> Option<T> {
        self.with(|slot| slot.clone())
    }
}

impl<T> Default for Global<T> {
    fn default() -> Self {
        Self::new()
    }
}
