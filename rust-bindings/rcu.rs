// SPDX-License-Identifier: GPL-2.0-or-later

//! RCU, which the 6.12 kernel crate lacks: a read-side critical section as a
//! guard, and [`RcuBox`], a value that readers reach without a lock and that
//! a writer replaces, the old value freed only after a grace period. This is
//! how the C RTRS client reaches its paths and connections from the IO path
//! (`rcu_read_lock()` around `rtrs_clt_request()`, `synchronize_rcu()` in
//! `rtrs_clt_stop_and_destroy_conns()`): no lock, interrupts stay on.

use crate::rb::ffi;
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;

/// A read-side critical section (`rcu_read_lock()` until dropped).
///
/// Like a spinlock's guard, it must not be held across anything that
/// sleeps; the kernel's own checks (`might_sleep()` under
/// CONFIG_DEBUG_ATOMIC_SLEEP, lockdep's RCU checks) report it if it is.
pub struct ReadGuard {
    /// `rcu_read_unlock()` must run on the CPU and task that locked.
    _not_send: PhantomData<*mut ()>,
}

/// Enters a read-side critical section.
pub fn read_lock() -> ReadGuard {
    // SAFETY: always allowed; the guard's `Drop` leaves the section.
    unsafe { ffi::rcu_read_lock() };
    ReadGuard {
        _not_send: PhantomData,
    }
}

impl Drop for ReadGuard {
    fn drop(&mut self) {
        // SAFETY: `read_lock()` entered the section this guard stands for,
        // in this task (the guard is not `Send`).
        unsafe { ffi::rcu_read_unlock() };
    }
}

/// An owned, optional `T` that readers borrow under a [`ReadGuard`] without
/// a lock (`rcu_dereference()`), and writers replace (`rcu_assign_pointer()`
/// and `synchronize_rcu()` before the old value goes).
///
/// # Invariants
///
/// `ptr` is null or comes from `KBox::into_raw` and is owned by this box;
/// a pointer swapped out is owned by the [`Retired`] that took it.
pub struct RcuBox<T> {
    ptr: AtomicPtr<T>,
    _owns: PhantomData<KBox<T>>,
}

// SAFETY: readers on any thread get `&T` (needs `T: Sync`); a writer on any
// thread moves a `T` in or out (needs `T: Send`).
unsafe impl<T: Send + Sync> Sync for RcuBox<T> {}
// SAFETY: moving the box moves the `T` it owns.
unsafe impl<T: Send> Send for RcuBox<T> {}

impl<T> RcuBox<T> {
    /// An empty box.
    pub const fn empty() -> Self {
        Self {
            ptr: AtomicPtr::new(ptr::null_mut()),
            _owns: PhantomData,
        }
    }

    /// The value, if there is one, for as long as the read section lasts.
    pub fn get<'a>(&'a self, _g: &'a ReadGuard) -> Option<&'a T> {
        let p = self.ptr.load(Ordering::Acquire);
        // A non-null `p` came from `KBox::into_raw` (invariant), published
        // with Release. Only this box's `Drop` frees it (ruled out by
        // `&'a self`), or a `Retired` after a grace period that began when
        // it was swapped out, which cannot end before `_g`'s section does.
        // SAFETY: so `p` is null or valid for `'a`, which `_g` outlives.
        unsafe { p.as_ref() }
    }

    /// Puts `v` in if the box is empty; gives it back if not.
    pub fn try_set(&self, v: KBox<T>) -> Result<(), KBox<T>> {
        let new = KBox::into_raw(v);
        match self
            .ptr
            .compare_exchange(ptr::null_mut(), new, Ordering::AcqRel, Ordering::Acquire)
        {
            // INVARIANT: the box owns `new` now.
            Ok(_) => Ok(()),
            // SAFETY: `new` came from `KBox::into_raw` just above and was
            // not stored: we still own it.
            Err(_) => Err(unsafe { KBox::from_raw(new) }),
        }
    }

    /// Puts `v` in (or empties the box); returns the old value, which
    /// readers may still see until a grace period passes: [`Retired`] waits
    /// for it before it gives the value back or drops it.
    pub fn replace(&self, v: Option<KBox<T>>) -> Retired<T> {
        let new = v.map_or(ptr::null_mut(), KBox::into_raw);
        // INVARIANT: the box owns `new`; the old pointer goes to `Retired`.
        let old = self.ptr.swap(new, Ordering::AcqRel);
        // SAFETY: always safe to call.
        let cookie = unsafe { ffi::get_state_synchronize_rcu() };
        Retired {
            // SAFETY: `old` is null or from `KBox::into_raw`, and this swap
            // took it out of the box: nobody else owns it.
            v: (!old.is_null()).then(|| unsafe { KBox::from_raw(old) }),
            cookie,
        }
    }
}

impl<T> Default for RcuBox<T> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<T> Drop for RcuBox<T> {
    fn drop(&mut self) {
        let p = *self.ptr.get_mut();
        if !p.is_null() {
            // SAFETY: owned by the box (invariant); `&mut self` means no
            // reader borrows it any more.
            drop(unsafe { KBox::from_raw(p) });
        }
    }
}

/// Empties every box in `slots` and returns what they held, in order,
/// once no reader can see it any more: one grace period for all of them
/// (the values are taken out first, then waited for).
///
/// Out of memory, a value is dropped after its grace period instead of
/// returned, with an error in the log. Sleeps.
pub fn take_all<T>(slots: &[RcuBox<T>]) -> KVec<KBox<T>> {
    let mut lost = 0usize;
    let mut retired = KVec::with_capacity(slots.len(), GFP_KERNEL).unwrap_or_default();
    for slot in slots {
        // On error the `Retired` is dropped, which waits for its own grace
        // period.
        if retired.push(slot.replace(None), GFP_KERNEL).is_err() {
            lost += 1;
        }
    }
    let mut out = KVec::with_capacity(retired.len(), GFP_KERNEL).unwrap_or_default();
    // Only the first wait sleeps: the others' grace periods began earlier
    // or at the same time, and are over with it.
    for v in retired.into_iter().filter_map(Retired::wait) {
        if out.push(v, GFP_KERNEL).is_err() {
            lost += 1;
        }
    }
    if lost != 0 {
        pr_err!("out of memory while taking values out of RCU: {lost} dropped\n");
    }
    out
}

/// A value taken out of an [`RcuBox`] that readers may still see: it is
/// given back ([`Retired::wait`]) or dropped only after a grace period that
/// began when it was taken out. Both sleep, unless that grace period is
/// over already: retire many values first, then wait for each, and only
/// the first waits.
pub struct Retired<T> {
    v: Option<KBox<T>>,
    /// `get_state_synchronize_rcu()` when the value was taken out.
    cookie: kernel::ffi::c_ulong,
}

impl<T> Retired<T> {
    /// Waits until no reader can see the value any more, and gives it back.
    pub fn wait(mut self) -> Option<KBox<T>> {
        self.sync();
        self.v.take()
    }

    fn sync(&self) {
        if self.v.is_some() {
            // SAFETY: always safe to call from process context, where
            // `Retired` is used (it sleeps, as its documentation says).
            unsafe { ffi::cond_synchronize_rcu(self.cookie) };
        }
    }
}

impl<T> Drop for Retired<T> {
    fn drop(&mut self) {
        self.sync();
    }
}
