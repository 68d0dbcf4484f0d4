// SPDX-License-Identifier: GPL-2.0-or-later

//! Locks the 6.12 kernel crate lacks: spinlocks that also disable bottom
//! halves (state shared with softirq completion handlers: RTRS polls its CQs
//! from softirq, as the C RTRS does) or interrupts (state touched from any
//! context, such as an IO response a block driver sends from its bio
//! completion).

use crate::rb::ffi;
use kernel::sync::lock::{Backend, Lock};

/// The `spin_lock_bh` backend of [`SpinLockBh`].
pub struct SpinLockBhBackend;

/// A spinlock taken with bottom halves disabled (`spin_lock_bh`).
pub type SpinLockBh<T> = Lock<T, SpinLockBhBackend>;

/// Creates a [`SpinLockBh`] initialiser with a lockdep class of its own.
macro_rules! new_spinlock_bh {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        ::kernel::sync::lock::Lock::<_, $crate::rb::sync::SpinLockBhBackend>::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}
pub(crate) use new_spinlock_bh;

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
macro_rules! new_spinlock_irq {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        ::kernel::sync::lock::Lock::<_, $crate::rb::sync::SpinLockIrqBackend>::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}
pub(crate) use new_spinlock_irq;

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
