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
    ///
    /// # Locking
    ///
    /// Takes the lock: never call it with the lock held, nor from a context
    /// the lock's backend does not allow (hard IRQ for a bh lock).
    pub fn notify_all_locked(&self) {
        drop(self.state.lock());
        self.changed.notify_all();
    }

    /// Waits for `done` to hold, evaluating it under the lock on every
    /// wake-up, uninterruptibly and without a bound (as `flush_work()`
    /// waits): for what always ends, such as a close that is running.
    pub fn wait_until(&self, mut done: impl FnMut(&mut T) -> bool) {
        let mut g = self.state.lock();
        while !done(&mut g) {
            self.changed.wait(&mut g);
        }
    }

    /// Waits up to `ms` milliseconds for `done` to hold, evaluating it under
    /// the lock on every wake-up; on timeout or signal, returns its value
    /// then.
    pub fn wait_for(&self, ms: u32, done: impl FnMut(&mut T) -> bool) -> bool {
        self.wait_for_outcome(ms, done) == Waited::Done
    }

    /// [`Waitable::wait_for`], saying how the wait ended
    /// (`wait_event_interruptible_timeout()`: done, 0, or `-ERESTARTSYS`).
    pub fn wait_for_outcome(&self, ms: u32, mut done: impl FnMut(&mut T) -> bool) -> Waited {
        let mut left = msecs_to_jiffies(ms);
        let mut g = self.state.lock();
        while !done(&mut g) {
            if left == 0 {
                // Nothing left to wait: `schedule_timeout(0)` would still
                // schedule, which a caller asking for no wait may not.
                return Waited::TimedOut;
            }
            let end = match self.changed.wait_interruptible_timeout(&mut g, left) {
                CondVarTimeoutResult::Woken { jiffies } => {
                    left = jiffies;
                    continue;
                }
                CondVarTimeoutResult::Timeout => Waited::TimedOut,
                CondVarTimeoutResult::Signal { .. } => Waited::Interrupted,
            };
            return if done(&mut g) { Waited::Done } else { end };
        }
        Waited::Done
    }
}

/// How a [`Waitable::wait_for_outcome`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// The condition holds.
    Done,
    /// The time was up first.
    TimedOut,
    /// A signal came first.
    Interrupted,
}

/// A wait queue (`struct wait_queue_head`), for threads that wait until a
/// condition on lock-free state holds (C's `wait_event()`), woken by those
/// who change that state (`wake_up_all()`).
///
/// # Invariants
///
/// `wq` was initialised by `__init_waitqueue_head` and is pinned.
#[pin_data]
pub struct WaitQueue {
    #[pin]
    wq: kernel::types::Opaque<ffi::wait_queue_head>,
}

// SAFETY: a wait queue is made for use from several threads: its list is
// under its own spinlock.
unsafe impl Send for WaitQueue {}
// SAFETY: as above.
unsafe impl Sync for WaitQueue {}

/// Creates a [`WaitQueue`] initialiser with a lockdep class of its own.
#[macro_export]
macro_rules! new_wait_queue {
    ($name:literal $(,)?) => {
        $crate::sync::WaitQueue::new(::kernel::c_str!($name), ::kernel::static_lock_class!())
    };
}
pub use crate::new_wait_queue;

impl WaitQueue {
    /// An empty wait queue; use [`new_wait_queue!`].
    pub fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        // `LockClassKey` is a transparent wrapper of the C key.
        let key = core::ptr::from_ref(key)
            .cast_mut()
            .cast::<ffi::lock_class_key>();
        pin_init!(Self {
            // SAFETY: `slot` is the queue's memory, pinned; the name and the
            // key are static.
            wq <- kernel::types::Opaque::ffi_init(|slot| unsafe {
                ffi::__init_waitqueue_head(slot, name.as_char_ptr(), key)
            }),
        })
    }

    fn raw(&self) -> *mut ffi::wait_queue_head {
        self.wq.get()
    }

    /// Sleeps (uninterruptibly) until `cond` gives a value, and returns it
    /// (`wait_event()`). `cond` runs again after every wake-up; whoever
    /// makes it true calls [`WaitQueue::wake_up_all`] after. Process
    /// context.
    pub fn wait_event<T>(&self, mut cond: impl FnMut() -> Option<T>) -> T {
        loop {
            // `schedule_timeout(MAX_SCHEDULE_TIMEOUT)` is `schedule()`: the
            // wait ends only with a value.
            if let Some(v) = self.wait_jiffies(kernel::ffi::c_long::MAX, &mut cond) {
                return v;
            }
        }
    }

    /// [`WaitQueue::wait_event`] for at most `ms` milliseconds
    /// (`wait_event_timeout()`): `None` if `cond` gave nothing by then.
    pub fn wait_event_timeout<T>(&self, ms: u32, cond: impl FnMut() -> Option<T>) -> Option<T> {
        let left = crate::workqueue::msecs_to_jiffies(ms) as kernel::ffi::c_long;
        self.wait_jiffies(left, cond)
    }

    /// Sleeps until `cond` gives a value or `left` jiffies have passed
    /// (`MAX_SCHEDULE_TIMEOUT`, `c_long::MAX`: no bound).
    fn wait_jiffies<T>(
        &self,
        mut left: kernel::ffi::c_long,
        mut cond: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        if let Some(v) = cond() {
            return Some(v);
        }
        let mut entry = core::mem::MaybeUninit::<ffi::wait_queue_entry>::uninit();
        // SAFETY: `entry` is writable and stays at this address until after
        // `finish_wait`.
        unsafe { ffi::init_wait_entry(entry.as_mut_ptr(), 0) };
        let v = loop {
            // SAFETY: the queue is initialised (invariant); `entry` was
            // initialised above and is on the queue until `finish_wait`.
            // Setting the task state before `cond` runs again pairs with
            // the waker's barrier (`wq_has_sleeper`): a change made before
            // the wake-up is seen, or the wake-up finds this task queued.
            unsafe {
                ffi::prepare_to_wait_event(
                    self.raw(),
                    entry.as_mut_ptr(),
                    ffi::TASK_UNINTERRUPTIBLE as _,
                )
            };
            if let Some(v) = cond() {
                break Some(v);
            }
            if left <= 0 {
                break None;
            }
            // SAFETY: sleeping in process context, with the task queued;
            // returns the jiffies left.
            left = unsafe { ffi::schedule_timeout(left) };
        };
        // SAFETY: as above; takes `entry` off the queue.
        unsafe { ffi::finish_wait(self.raw(), entry.as_mut_ptr()) };
        v
    }

    /// Whether a thread sleeps (or is about to) on the queue, with a full
    /// barrier first (`wq_has_sleeper()`): a waker that changed the state
    /// calls this before [`WaitQueue::wake_up_all`], to skip it when no one
    /// waits.
    pub fn has_sleepers(&self) -> bool {
        // SAFETY: the queue is initialised (invariant).
        unsafe { ffi::wq_has_sleeper(self.raw()) }
    }

    /// Wakes every thread waiting on the queue (`wake_up_all()`). Any
    /// context.
    pub fn wake_up_all(&self) {
        // SAFETY: the queue is initialised (invariant).
        unsafe { ffi::__wake_up(self.raw(), ffi::TASK_NORMAL, 0, core::ptr::null_mut()) };
    }
}
