// SPDX-License-Identifier: GPL-2.0-or-later

//! Locks the 6.12 kernel crate lacks: spinlocks that also disable bottom
//! halves (state shared with softirq completion handlers: RTRS polls its CQs
//! from softirq, as the C RTRS does) or interrupts (state touched from any
//! context, such as an IO response a block driver sends from its bio
//! completion); and [`Waitable`], a state under such a lock that a thread
//! waits on, with a timeout, until it is what the thread waits for.

use crate::ffi;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::lock::{Backend, Guard, Lock};
use kernel::sync::{CondVar, CondVarTimeoutResult, LockClassKey};
use kernel::time::msecs_to_jiffies;

/// The `spin_lock_bh` backend of [`SpinLockBh`].
pub struct SpinLockBhBackend;

/// A spinlock taken with bottom halves disabled (`spin_lock_bh`).
pub type SpinLockBh<T> = Lock<T, SpinLockBhBackend>;

/// Creates a [`SpinLockBh`] initialiser with a lockdep class of its own.
#[macro_export]
macro_rules! new_spinlock_bh {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        ::kernel::sync::lock::Lock::<_, $crate::sync::SpinLockBhBackend>::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}
pub use crate::new_spinlock_bh;

// SAFETY: `spinlock_t` gives mutual exclusion; lock and unlock use the same
// (`_bh`) variant, and `relock` the default, which calls `lock`.
unsafe impl Backend for SpinLockBhBackend {
    type State = kernel::bindings::spinlock_t;
    type GuardState = ();

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut kernel::bindings::lock_class_key,
    ) {
        // SAFETY: the caller passes a writable lock and static name and key.
        unsafe { kernel::bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: `ptr` is an initialised lock (caller); the kernel crate's
        // and our bindings describe the same C `spinlock_t`.
        unsafe { ffi::spin_lock_bh(ptr.cast()) }
    }

    unsafe fn unlock(ptr: *mut Self::State, _guard: &Self::GuardState) {
        // SAFETY: the caller owns the lock, taken with `spin_lock_bh`.
        unsafe { ffi::spin_unlock_bh(ptr.cast()) }
    }
}

/// The `spin_lock_irqsave` backend of [`SpinLockIrq`].
pub struct SpinLockIrqBackend;

/// A spinlock taken with interrupts disabled (`spin_lock_irqsave`).
pub type SpinLockIrq<T> = Lock<T, SpinLockIrqBackend>;

/// Creates a [`SpinLockIrq`] initialiser with a lockdep class of its own.
#[macro_export]
macro_rules! new_spinlock_irq {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        ::kernel::sync::lock::Lock::<_, $crate::sync::SpinLockIrqBackend>::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}
pub use crate::new_spinlock_irq;

// SAFETY: `spinlock_t` gives mutual exclusion; `unlock` restores the flags
// `lock` saved; `relock` is the default, which calls `lock` and stores the
// new flags.
unsafe impl Backend for SpinLockIrqBackend {
    type State = kernel::bindings::spinlock_t;
    type GuardState = kernel::ffi::c_ulong;

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut kernel::bindings::lock_class_key,
    ) {
        // SAFETY: the caller passes a writable lock and static name and key.
        unsafe { kernel::bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: `ptr` is an initialised lock (caller); same C type.
        unsafe { ffi::spin_lock_irqsave(ptr.cast()) }
    }

    unsafe fn unlock(ptr: *mut Self::State, flags: &Self::GuardState) {
        // SAFETY: the caller owns the lock, taken with `spin_lock_irqsave`
        // that returned `flags`.
        unsafe { ffi::spin_unlock_irqrestore(ptr.cast(), *flags) }
    }
}

/// A state that threads wait on: a `T` behind a lock of backend `B` and a
/// condition variable, notified whenever the state changes through
/// [`Waitable::update`] (or the owner calls [`Waitable::notify_all`]).
///
/// Waiting sleeps, so only process context waits; updates may come from
/// any context the backend allows (softirq for the default, [`SpinLockBh`]).
#[pin_data]
pub struct Waitable<T, B: Backend = SpinLockBhBackend> {
    #[pin]
    state: Lock<T, B>,
    #[pin]
    changed: CondVar,
}

/// Creates a [`Waitable`] initialiser named `$name`, its lock and its
/// condition variable each with a lockdep class of its own.
#[macro_export]
macro_rules! new_waitable {
    ($inner:expr, $name:literal $(,)?) => {
        $crate::sync::Waitable::new(
            $inner,
            ::kernel::c_str!($name),
            ::kernel::static_lock_class!(),
            ::kernel::static_lock_class!(),
        )
    };
}
pub use crate::new_waitable;

impl<T, B: Backend> Waitable<T, B> {
    /// A waitable holding `state`; use [`new_waitable!`].
    pub fn new(
        state: T,
        name: &'static CStr,
        lock_key: &'static LockClassKey,
        changed_key: &'static LockClassKey,
    ) -> impl PinInit<Self> {
        pin_init!(Self {
            state <- Lock::new(state, name, lock_key),
            changed <- CondVar::new(name, changed_key),
        })
    }

    /// Locks the state, to read it or to change it without waking anyone
    /// (or waking them with [`Waitable::notify_all`] before unlocking).
    pub fn lock(&self) -> Guard<'_, T, B> {
        self.state.lock()
    }

    /// Changes the state with `f` under the lock, then wakes the waiters.
    pub fn update<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let r = f(&mut self.state.lock());
        self.changed.notify_all();
        r
    }

    /// Wakes the waiters, so that they evaluate their predicates again.
    /// Only for changes made under the lock: a waiter may be between its
    /// predicate and its sleep.
    pub fn notify_all(&self) {
        self.changed.notify_all();
    }

    /// Wakes the waiters after a change made outside the lock (an atomic,
    /// or the state of something else their predicates read): takes and
    /// drops the lock first, so that each waiter either sees the change in
    /// its predicate or is already asleep when woken.
    pub fn notify_all_locked(&self) {
        drop(self.state.lock());
        self.changed.notify_all();
    }

    /// Waits up to `ms` milliseconds for `done` to hold, evaluating it under
    /// the lock on every wake-up; on timeout or signal, returns its value
    /// then.
    pub fn wait_for(&self, ms: u32, mut done: impl FnMut(&mut T) -> bool) -> bool {
        let mut left = msecs_to_jiffies(ms);
        let mut g = self.state.lock();
        while !done(&mut g) {
            match self.changed.wait_interruptible_timeout(&mut g, left) {
                CondVarTimeoutResult::Woken { jiffies } => left = jiffies,
                _ => return done(&mut g),
            }
        }
        true
    }
}
