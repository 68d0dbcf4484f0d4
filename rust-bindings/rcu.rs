// SPDX-License-Identifier: GPL-2.0-or-later

//! RCU, which the 6.12 kernel crate lacks: a read-side critical section as a
//! guard, and [`RcuBox`], a value that readers reach without a lock and that
//! a writer replaces, the old value freed only after a grace period. This is
//! how the C RTRS client reaches its paths and connections from the IO path
//! (`rcu_read_lock()` around `rtrs_clt_request()`, `synchronize_rcu()` in
//! `rtrs_clt_stop_and_destroy_conns()`): no lock, interrupts stay on.

use crate::ffi;
use crate::kvec::VecExt;
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{LockClassKey, Mutex};

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

/// A list that readers walk under a [`ReadGuard`] without a lock, and that
/// writers, one at a time, change by publishing an edited copy, the old one
/// reused or freed after a grace period (C: a `list_head` with
/// `list_add_tail_rcu()`, `list_del_rcu()` and `synchronize_rcu()`).
///
/// Removing does not allocate: the list as it was before the last change,
/// emptied, is the buffer of the next copy. Adding does not wait for a
/// grace period, as `list_add_tail_rcu()` does not: the old copy's grace
/// period is waited for when its buffer is next needed, usually long over
/// by then. Order is kept.
#[pin_data]
pub struct RcuVec<T> {
    cur: RcuBox<KVec<T>>,
    /// Held by writers; the buffer for the next copy.
    #[pin]
    spare: Mutex<Spare<T>>,
}

/// The list as it was before the last change of an [`RcuVec`], the buffer
/// of the next copy. Readers may still see `buf` until the grace period
/// that began at `cookie` is over; only a writer, who waits for it first,
/// or the `RcuVec`'s drop (no reader can borrow it then) touches it.
struct Spare<T> {
    buf: Option<KBox<KVec<T>>>,
    /// `get_state_synchronize_rcu()` when `buf` was the list.
    cookie: kernel::ffi::c_ulong,
}

impl<T> Spare<T> {
    /// Takes the buffer out once no reader sees it any more. Sleeps, unless
    /// its grace period is over already.
    fn take_quiet(&mut self) -> Option<KBox<KVec<T>>> {
        let b = self.buf.take()?;
        // SAFETY: always safe to call from process context, where the
        // writers of an `RcuVec` run (they hold its mutex, and sleep).
        unsafe { ffi::cond_synchronize_rcu(self.cookie) };
        Some(b)
    }
}

/// Creates an [`RcuVec`] initialiser; its writers' lock is named `$name`.
#[macro_export]
macro_rules! new_rcu_vec {
    ($name:literal $(,)?) => {
        $crate::rcu::RcuVec::new(::kernel::c_str!($name), ::kernel::static_lock_class!())
    };
}
pub use crate::new_rcu_vec;

impl<T: Clone + Send + Sync> RcuVec<T> {
    /// An empty list; use [`new_rcu_vec!`].
    pub fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        pin_init!(Self {
            cur: RcuBox::empty(),
            spare <- Mutex::new(Spare { buf: None, cookie: 0 }, name, key),
        })
    }

    /// The list, for as long as the read section lasts.
    pub fn read<'a>(&'a self, g: &'a ReadGuard) -> &'a [T] {
        self.cur.get(g).map_or(&[], |v| v.as_slice())
    }

    /// Appends `v` if `admit`, shown the list as it is, says yes (under the
    /// writers' lock, so nobody changes the list in between). `admit` runs
    /// in a read section: it must not sleep. Sleeps.
    pub fn push_if(&self, v: T, admit: impl FnOnce(&[T]) -> Result) -> Result {
        let mut spare = self.spare.lock();
        let len = {
            let g = read_lock();
            let cur = self.read(&g);
            admit(cur)?;
            cur.len()
        };
        let mut buf = Self::buffer(&mut spare, len + 1)?;
        let filled = {
            let g = read_lock();
            // Within the capacity just made sure of: no allocation.
            self.read(&g)
                .iter()
                .try_for_each(|x| buf.push(x.clone(), GFP_NOWAIT))
                .and_then(|()| buf.push(v, GFP_NOWAIT))
        };
        if let Err(e) = filled {
            buf.clear();
            spare.buf = Some(buf);
            return Err(e.into());
        }
        // Every element of the old copy is in the new one: nothing goes,
        // nobody has to wait.
        self.publish(&mut spare, Some(buf), false);
        Ok(())
    }

    /// Drops the elements `keep` says no to; returns how many it dropped.
    /// `keep` runs in a read section: it must not sleep. Sleeps.
    ///
    /// Does not allocate: a copy without one element fits in the spare,
    /// which is the list before the last change (one element more or less,
    /// or none if the list had one). Were that ever not so, `ENOMEM`.
    pub fn retain(&self, mut keep: impl FnMut(&T) -> bool) -> Result<usize> {
        let mut spare = self.spare.lock();
        let len = {
            let g = read_lock();
            self.read(&g).len()
        };
        // A copy that drops anything has `len - 1` elements at most.
        let mut buf = match len {
            0 => return Ok(0),
            1 => None,
            _ => Some(Self::buffer(&mut spare, len - 1)?),
        };
        let mut kept = 0;
        let mut copied = true;
        {
            let g = read_lock();
            for x in self.read(&g).iter().filter(|x| keep(x)) {
                kept += 1;
                // Within the capacity, unless nothing is dropped.
                copied = match buf.as_mut() {
                    Some(b) if b.len() < b.capacity() => b.push(x.clone(), GFP_NOWAIT).is_ok(),
                    _ => false,
                };
                if !copied {
                    break;
                }
            }
        }
        if kept == len || !copied {
            if let Some(mut b) = buf {
                b.clear();
                spare.buf = Some(b);
            }
            return if kept == len { Ok(0) } else { Err(ENOMEM) };
        }
        // What was dropped goes once no reader sees it: callers rely on it
        // being out of every reader's sight when this returns.
        self.publish(&mut spare, buf.filter(|b| !b.is_empty()), true);
        Ok(len - kept)
    }

    /// Empties the list; returns what it held once no reader sees it.
    /// Sleeps.
    pub fn take(&self) -> KVec<T> {
        let mut spare = self.spare.lock();
        let v = self
            .cur
            .replace(None)
            .wait()
            .map_or_else(KVec::new, KBox::into_inner);
        // The spare's grace period began before the one just waited for:
        // over too. Its elements go now, not with the `RcuVec`.
        if let Some(b) = spare.buf.as_mut() {
            b.clear();
        }
        v
    }

    /// The spare buffer, emptied, with room for `need` elements, or a new
    /// one. Sleeps.
    fn buffer(spare: &mut Spare<T>, need: usize) -> Result<KBox<KVec<T>>> {
        match spare.take_quiet() {
            Some(mut b) => {
                b.clear();
                if b.capacity() < need {
                    if let Err(e) = b.reserve(need, GFP_KERNEL) {
                        spare.buf = Some(b);
                        return Err(e.into());
                    }
                }
                Ok(b)
            }
            None => Ok(KBox::new(
                KVec::with_capacity(need, GFP_KERNEL)?,
                GFP_KERNEL,
            )?),
        }
    }

    /// Makes `new` the list and keeps the old one, if any, as the spare.
    /// With `wait`, returns once no reader sees the old list, its elements
    /// dropped; without, its grace period is waited for when the spare is
    /// next used.
    fn publish(&self, spare: &mut Spare<T>, new: Option<KBox<KVec<T>>>, wait: bool) {
        let mut old = self.cur.replace(new);
        if wait {
            old.sync();
        }
        let cookie = old.cookie;
        // Taken out of `old`, whose drop then has nothing to wait for.
        if let Some(mut b) = old.v.take() {
            if wait {
                b.clear();
            }
            // A spare left from before (`retain` of the last element uses
            // none) goes after its own grace period.
            drop(spare.take_quiet());
            spare.buf = Some(b);
            spare.cookie = cookie;
        }
    }
}
