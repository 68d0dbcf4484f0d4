// SPDX-License-Identifier: GPL-2.0-or-later

//! A value set at most once and then shared: what a connection learns after
//! it is created (its request set, its receive buffers) while work requests
//! already borrow from it. `core` has no thread-safe `OnceLock`.

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicU8, Ordering};

const EMPTY: u8 = 0;
const SETTING: u8 = 1;
const SET: u8 = 2;

/// A cell written at most once; readers see nothing or the final value.
///
/// # Invariants
///
/// `value` is initialised iff `state` is `SET`; once `SET` it never changes
/// until `Drop`.
pub struct SetOnce<T> {
    state: AtomicU8,
    value: UnsafeCell<MaybeUninit<T>>,
}

// SAFETY: the value is written once by the thread that won `SETTING`, and
// only shared (`&T`) after `SET` is published with Release.
unsafe impl<T: Send + Sync> Sync for SetOnce<T> {}
// SAFETY: as above; moving the cell moves the value.
unsafe impl<T: Send> Send for SetOnce<T> {}

impl<T> SetOnce<T> {
    /// An empty cell.
    pub const fn new() -> Self {
        Self {
            state: AtomicU8::new(EMPTY),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Sets the value; gives it back if the cell was set (or being set).
    pub fn set(&self, v: T) -> Result<(), T> {
        if self
            .state
            .compare_exchange(EMPTY, SETTING, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return Err(v);
        }
        // SAFETY: we won `SETTING`: nobody else writes or reads the value.
        unsafe { (*self.value.get()).write(v) };
        // INVARIANT: initialised just above.
        self.state.store(SET, Ordering::Release);
        Ok(())
    }

    /// The value, if set.
    pub fn get(&self) -> Option<&T> {
        if self.state.load(Ordering::Acquire) != SET {
            return None;
        }
        // SAFETY: `SET` means initialised and immutable until `Drop`.
        Some(unsafe { (*self.value.get()).assume_init_ref() })
    }
}

impl<T> Default for SetOnce<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for SetOnce<T> {
    fn drop(&mut self) {
        if *self.state.get_mut() == SET {
            // SAFETY: initialised (invariant), dropped once.
            unsafe { (*self.value.get()).assume_init_drop() };
        }
    }
}
