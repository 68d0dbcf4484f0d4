// SPDX-License-Identifier: GPL-2.0-or-later

//! Workqueue pieces the 6.12 kernel crate lacks: a workqueue a module owns
//! (drained and destroyed in `Drop`) and delayed work items (RTRS'
//! heartbeats and reconnect timers).
//!
//! A [`DelayedWork`] is embedded in a `T` held by `Arc`: scheduling it hands
//! one strong reference to the pending work, which `run` receives; a
//! successful `cancel_sync` takes it back. So `T` lives while its work is
//! pending or running, and a cancelled work leaks nothing.

use crate::ffi;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::prelude::*;
use kernel::sync::{Arc, LockClassKey};
use kernel::types::Opaque;

/// `WQ_HIGHPRI`: the queue's work runs on the CPU's high-priority
/// workers (nice -20), not behind the normal pool's work items.
pub const WQ_HIGHPRI: u32 = ffi::wq_flags_WQ_HIGHPRI;

/// A workqueue owned by its creator: `Drop` waits for all queued work and
/// destroys it.
///
/// # Invariants
///
/// `wq` was returned by `alloc_workqueue` and is destroyed only in `Drop`.
pub struct OwnedQueue {
    wq: NonNull<ffi::workqueue_struct>,
}

// SAFETY: workqueues may be used from any thread.
unsafe impl Send for OwnedQueue {}
// SAFETY: as above.
unsafe impl Sync for OwnedQueue {}

impl OwnedQueue {
    /// A new workqueue named `name` with `WQ_*` `flags`.
    pub fn new(name: &CStr, flags: u32) -> Result<Self> {
        // SAFETY: the format is a literal "%s" and its argument a
        // NUL-terminated string, copied by the callee.
        let wq =
            unsafe { ffi::alloc_workqueue(c"%s".as_ptr().cast(), flags, 0, name.as_char_ptr()) };
        // INVARIANT: a fresh workqueue.
        Ok(Self {
            wq: NonNull::new(wq).ok_or(ENOMEM)?,
        })
    }

    /// The kernel crate's view of the queue, to enqueue `Work` items.
    pub fn queue(&self) -> &kernel::workqueue::Queue {
        // SAFETY: the queue is valid while `self` lives; both bindings
        // describe the same C `workqueue_struct`.
        unsafe { kernel::workqueue::Queue::from_raw(self.wq.as_ptr().cast()) }
    }

    fn raw(&self) -> *mut ffi::workqueue_struct {
        self.wq.as_ptr()
    }

    /// Waits until everything queued so far has run.
    pub fn flush(&self) {
        // SAFETY: the queue is valid (type invariant).
        unsafe { ffi::__flush_workqueue(self.raw()) };
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        // SAFETY: valid and destroyed only here; `destroy_workqueue` drains.
        unsafe { ffi::destroy_workqueue(self.raw()) };
    }
}

/// Waits until `work` (a kernel-crate work item, queued anywhere) is idle:
/// its last queueing has run to the end (`flush_work`). For a module that
/// must not go away while its item runs on a system queue.
pub fn flush_work<T: ?Sized, const ID: u64>(work: &kernel::workqueue::Work<T, ID>) -> bool {
    // SAFETY: `work` is a reference to an initialised item, so `raw_get`
    // gives its `work_struct`, which `flush_work` may wait on from process
    // context; the kernel crate's `work_struct` is the same C type as ours.
    unsafe { ffi::flush_work(kernel::workqueue::Work::raw_get(work).cast::<ffi::work_struct>()) }
}

/// Milliseconds to jiffies.
pub fn msecs_to_jiffies(ms: u32) -> usize {
    // SAFETY: a pure conversion.
    unsafe { ffi::msecs_to_jiffies(ms) }
}

/// A delayed work item embedded in a `T`; `ID` tells several apart.
#[repr(transparent)]
pub struct DelayedWork<T: ?Sized, const ID: u64 = 0> {
    dwork: Opaque<ffi::delayed_work>,
    _owner: PhantomData<fn(&T)>,
}

// SAFETY: the workqueue core synchronises access to the item.
unsafe impl<T: ?Sized, const ID: u64> Send for DelayedWork<T, ID> {}
// SAFETY: as above.
unsafe impl<T: ?Sized, const ID: u64> Sync for DelayedWork<T, ID> {}

/// Types that embed a [`DelayedWork<Self, ID>`].
///
/// # Safety
///
/// `OFFSET` is the offset of a `DelayedWork<Self, ID>` field in `Self`.
/// Implement it with [`impl_has_delayed_work!`].
pub unsafe trait HasDelayedWork<const ID: u64 = 0> {
    /// Offset of the embedded item.
    const OFFSET: usize;
}

/// Implements [`HasDelayedWork`]:
/// `impl_has_delayed_work!(impl HasDelayedWork<0> for Path { self.hb_work });`
#[macro_export]
macro_rules! impl_has_delayed_work {
    (impl HasDelayedWork<$id:tt> for $t:ty { self.$field:ident }) => {
        // SAFETY: the offset is that of the named field, whose type is checked
        // to be `DelayedWork<Self, $id>` below.
        // The macro is the audited place; its user needs no `unsafe`.
        #[allow(unsafe_code)]
        unsafe impl $crate::workqueue::HasDelayedWork<$id> for $t {
            const OFFSET: usize = {
                fn _check(t: &$t) -> &$crate::workqueue::DelayedWork<$t, $id> {
                    &t.$field
                }
                ::core::mem::offset_of!($t, $field)
            };
        }
    };
}
pub use crate::impl_has_delayed_work;

/// What a delayed work item does.
pub trait DelayedWorkItem<const ID: u64 = 0>: HasDelayedWork<ID> + Send + Sync + Sized {
    /// Runs in process context on the queue the item was scheduled on,
    /// with the reference the scheduling handed over.
    fn run(this: Arc<Self>);
}

/// Creates a [`DelayedWork`] initialiser with a lockdep class of its own,
/// as C's `INIT_DELAYED_WORK` gives each of its call sites:
/// `hb_work <- new_delayed_work!("rtrs_clt_hb")`. With one class for all
/// items, a work that cancels another synchronously looks to lockdep like
/// a work waiting for itself.
#[macro_export]
macro_rules! new_delayed_work {
    ($name:literal) => {
        $crate::workqueue::DelayedWork::new(::kernel::c_str!($name), ::kernel::static_lock_class!())
    };
}
pub use crate::new_delayed_work;

impl<T: DelayedWorkItem<ID>, const ID: u64> DelayedWork<T, ID> {
    /// An initialiser of an idle item whose completion lockdep knows as
    /// `name`, of class `key`; [`new_delayed_work!`] makes both.
    pub fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        // `LockClassKey` is `repr(transparent)` over an `Opaque` of the C
        // `lock_class_key` (whose pointer accessor the 6.12 kernel crate
        // keeps to itself): a pointer to it is one to the C key.
        let key = core::ptr::from_ref(key)
            .cast_mut()
            .cast::<ffi::lock_class_key>();
        // SAFETY: `INIT_DELAYED_WORK` initialises the whole structure at its
        // final place; the function is our trampoline for `T`; `name` and
        // `key` are static, as lockdep keeps them.
        unsafe {
            kernel::init::pin_init_from_closure(move |slot: *mut Self| {
                ffi::init_delayed_work(
                    Opaque::raw_get(core::ptr::addr_of!((*slot).dwork)),
                    Some(Self::run),
                    name.as_char_ptr(),
                    key,
                );
                Ok(())
            })
        }
    }

    fn raw(this: &T) -> *mut ffi::delayed_work {
        // SAFETY: `T::OFFSET` is the offset of our `DelayedWork` in `T`
        // (trait contract).
        unsafe {
            let dw = core::ptr::from_ref(this)
                .cast::<u8>()
                .add(T::OFFSET)
                .cast::<Self>();
            (*dw).dwork.get()
        }
    }

    /// Schedules `this`'s item to run on `queue` after `delay_ms`; returns
    /// false (and keeps nothing) if it was already pending.
    pub fn schedule(this: &Arc<T>, queue: &OwnedQueue, delay_ms: u32) -> bool {
        let raw = Self::raw(this);
        let ptr = Arc::into_raw(this.clone());
        // SAFETY: the item is initialised and lives in `T`, which the
        // reference we hand over keeps alive until `run` or `cancel_sync`.
        let queued =
            unsafe { ffi::queue_delayed_work(queue.raw(), raw, msecs_to_jiffies(delay_ms)) };
        if !queued {
            // SAFETY: the reference we just leaked; it was not handed over.
            drop(unsafe { Arc::from_raw(ptr) });
        }
        queued
    }

    /// Cancels `this`'s item and waits for it if it is running; returns true
    /// if it was pending (its reference is released here then).
    pub fn cancel_sync(this: &T) -> bool {
        // SAFETY: the item is initialised (it is part of a constructed `T`).
        let was_pending = unsafe { ffi::cancel_delayed_work_sync(Self::raw(this)) };
        if was_pending {
            // SAFETY: a pending item owns the reference `schedule` leaked
            // from an `Arc<T>` pointing to `this`; cancelling returned it.
            drop(unsafe { Arc::from_raw(core::ptr::from_ref(this)) });
        }
        was_pending
    }

    /// Runs `this`'s item now if it is pending and waits until it is idle
    /// (`flush_delayed_work`); returns true if it had to wait.
    pub fn flush(this: &T) -> bool {
        // SAFETY: the item is initialised (it is part of a constructed `T`);
        // a pending item is run, not dropped, so its reference goes to `run`.
        unsafe { ffi::flush_delayed_work(Self::raw(this)) }
    }

    /// # Safety
    ///
    /// Called by the workqueue core for an item scheduled by `schedule`.
    unsafe extern "C" fn run(work: *mut ffi::work_struct) {
        // SAFETY: `work` is the `work` member of our `delayed_work`, which is
        // the `DelayedWork<T, ID>` at `T::OFFSET` in a `T` whose scheduling
        // leaked one `Arc<T>` reference, handed to `run` here.
        let this = unsafe {
            let dwork = work
                .cast::<u8>()
                .sub(core::mem::offset_of!(ffi::delayed_work, work));
            Arc::from_raw(dwork.sub(T::OFFSET).cast::<T>())
        };
        T::run(this);
    }
}
