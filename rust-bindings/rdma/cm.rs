// SPDX-License-Identifier: GPL-2.0-or-later

//! rdma_cm: connection ids (`struct rdma_cm_id`) with their QP and CQ, and
//! listening ids.
//!
//! A [`CmId<H>`] owns one connection: the rdma_cm id, and once created its QP
//! and CQ. Its handler `H` gets the id's events ([`CmHandler::event`]) and owns
//! everything the QP's work requests point at (see the `wr` module); the
//! `CmId` holds an `Arc<H>` until the QP is drained and destroyed.
//!
//! A [`Listener<L>`] owns a listening id; connection requests reach
//! [`ListenHandler::connect_request`], which may adopt the new id as a
//! `CmId<H>` of its own type.
//!
//! # Destruction inside an event handler
//!
//! `rdma_destroy_id` waits for the id's running event handler, so it must not
//! be called from that handler. Dropping a `CmId` inside its own handler (or
//! inside the connection request that adopted it) is allowed anyway: the QP is
//! drained and destroyed at once, and the id is destroyed by rdma_cm when the
//! handler returns (the trampoline returns non-zero), which is how C ULPs ask
//! for it. The handler's `Arc<H>` is released after the handler returns.

use super::cq::{Cq, PollContext};
use super::device::Device;
use super::pd::Pd;
use super::wr::{RawSendWr, RecvWr, SendWr, WrChain};
use core::cell::Cell;
use core::ptr::{null_mut, NonNull};
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use kernel::alloc::{flags::GFP_KERNEL, KBox};
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::ffi;
use rb::net::SockAddr;
use rb::sync::{new_spinlock_irq, SpinLockIrq};

/// `IB_CM_REJ_CONSUMER_DEFINED`: the reject reason RTRS uses.
const REJ_CONSUMER_DEFINED: u8 = ffi::ib_cm_rej_reason_IB_CM_REJ_CONSUMER_DEFINED as u8;

fn current() -> *mut ffi::task_struct {
    // SAFETY: `current` is always valid in process and softirq context.
    unsafe { ffi::get_current() }
}

/// A running event handler's stack frame, seen by a `Drop` that runs inside
/// it (same task). Only its own task touches it.
struct Frame {
    /// The id of this event must be destroyed by rdma_cm on return.
    destroy: Cell<bool>,
    /// A connect request's new id was adopted; its state to leave.
    adopted: Cell<*const HandlerState>,
    /// A handler reference to release after the handler returns.
    deferred: Cell<Option<(*const (), unsafe fn(*const ()))>>,
}

impl Frame {
    fn new() -> Self {
        Self {
            destroy: Cell::new(false),
            adopted: Cell::new(null_mut()),
            deferred: Cell::new(None),
        }
    }

    fn release_deferred(&self) {
        if let Some((ptr, drop_fn)) = self.deferred.take() {
            // SAFETY: `ptr` came from `Arc::into_raw` of the type `drop_fn` is
            // instantiated for (see `defer_arc`), and is released once.
            unsafe { drop_fn(ptr) };
        }
    }
}

/// Releases a reference `defer_arc` kept.
///
/// # Safety
///
/// `ptr` came from `Arc::<H>::into_raw` and is released once.
unsafe fn drop_arc<H>(ptr: *const ()) {
    // SAFETY: the caller passes a pointer from `Arc::<H>::into_raw`.
    drop(unsafe { Arc::<H>::from_raw(ptr.cast::<H>()) });
}

/// Which task, if any, runs an id's event handler right now, and its frame.
#[derive(Default)]
struct HandlerState {
    task: AtomicPtr<ffi::task_struct>,
    frame: AtomicPtr<Frame>,
}

impl HandlerState {
    fn enter(&self, frame: &Frame) {
        self.frame
            .store(core::ptr::from_ref(frame).cast_mut(), Ordering::Relaxed);
        self.task.store(current(), Ordering::Relaxed);
    }

    fn leave(&self) {
        self.task.store(null_mut(), Ordering::Relaxed);
        self.frame.store(null_mut(), Ordering::Relaxed);
    }

    /// The frame of the handler this task is running for the id, if any.
    fn own_frame(&self) -> Option<&Frame> {
        if self.task.load(Ordering::Relaxed) != current() {
            return None;
        }
        // SAFETY: `task` is this task, so it was set by `enter` in a handler
        // further up this very stack, whose frame is alive.
        NonNull::new(self.frame.load(Ordering::Relaxed)).map(|f| unsafe { f.as_ref() })
    }
}

/// An rdma_cm event.
#[derive(Debug)]
pub enum CmEvent<'a> {
    /// `rdma_resolve_addr` succeeded.
    AddrResolved,
    /// `rdma_resolve_addr` failed with this errno.
    AddrError(i32),
    /// `rdma_resolve_route` succeeded.
    RouteResolved,
    /// `rdma_resolve_route` failed with this errno.
    RouteError(i32),
    /// A connection was established; `private_data` is the peer's (the
    /// accept's private data on the active side).
    Established {
        /// The peer's private data.
        private_data: &'a [u8],
    },
    /// The connect was rejected. `private_data` is set if the peer rejected
    /// with consumer-defined data, `reason` is the CM reject reason.
    Rejected {
        /// CM reject reason.
        reason: i32,
        /// The peer's reject message, if it sent one.
        private_data: Option<&'a [u8]>,
    },
    /// Connection error (status).
    ConnectError(i32),
    /// The peer is unreachable (status).
    Unreachable(i32),
    /// The connection is closed: 0 if the peer says so (its DREQ, or its
    /// DREP to ours: its QP is in the error state by then), `-ETIMEDOUT` if
    /// our DREQ got no answer (or could not be sent).
    Disconnected(i32),
    /// The RDMA device is going away; the id must be destroyed soon.
    DeviceRemoval,
    /// The address of a bound id changed.
    AddrChange,
    /// The QP left its timewait state.
    TimewaitExit,
    /// Anything else: event number and status.
    Other(u32, i32),
}

impl CmEvent<'_> {
    /// The event's name as rdma_cm spells it (`rdma_event_msg`).
    pub fn name(&self) -> &'static CStr {
        let ev = match self {
            Self::AddrResolved => ffi::rdma_cm_event_type_RDMA_CM_EVENT_ADDR_RESOLVED,
            Self::AddrError(_) => ffi::rdma_cm_event_type_RDMA_CM_EVENT_ADDR_ERROR,
            Self::RouteResolved => ffi::rdma_cm_event_type_RDMA_CM_EVENT_ROUTE_RESOLVED,
            Self::RouteError(_) => ffi::rdma_cm_event_type_RDMA_CM_EVENT_ROUTE_ERROR,
            Self::Established { .. } => ffi::rdma_cm_event_type_RDMA_CM_EVENT_ESTABLISHED,
            Self::Rejected { .. } => ffi::rdma_cm_event_type_RDMA_CM_EVENT_REJECTED,
            Self::ConnectError(_) => ffi::rdma_cm_event_type_RDMA_CM_EVENT_CONNECT_ERROR,
            Self::Unreachable(_) => ffi::rdma_cm_event_type_RDMA_CM_EVENT_UNREACHABLE,
            Self::Disconnected(_) => ffi::rdma_cm_event_type_RDMA_CM_EVENT_DISCONNECTED,
            Self::DeviceRemoval => ffi::rdma_cm_event_type_RDMA_CM_EVENT_DEVICE_REMOVAL,
            Self::AddrChange => ffi::rdma_cm_event_type_RDMA_CM_EVENT_ADDR_CHANGE,
            Self::TimewaitExit => ffi::rdma_cm_event_type_RDMA_CM_EVENT_TIMEWAIT_EXIT,
            Self::Other(ev, _) => *ev,
        };
        // SAFETY: `rdma_event_msg` returns a static string for any value.
        unsafe { CStr::from_char_ptr(ffi::rdma_event_msg(ev)) }
    }

    /// The event's status (`ev->status`): an errno, a reject reason, or 0.
    pub fn status(&self) -> i32 {
        match self {
            Self::AddrError(s)
            | Self::RouteError(s)
            | Self::ConnectError(s)
            | Self::Unreachable(s)
            | Self::Disconnected(s)
            | Self::Other(_, s) => *s,
            Self::Rejected { reason, .. } => *reason,
            _ => 0,
        }
    }

    /// # Safety
    ///
    /// `id` and `ev` are the arguments of an rdma_cm event callback, valid
    /// for `'a`.
    unsafe fn from_raw<'a>(id: *mut ffi::rdma_cm_id, ev: *mut ffi::rdma_cm_event) -> CmEvent<'a> {
        // SAFETY: `ev` is valid for `'a` (function contract).
        let e = unsafe { &*ev };
        let conn_data = || -> &'a [u8] {
            // SAFETY: for connection events `param.conn` is the active member;
            // its private data is `private_data_len` bytes valid for `'a`.
            unsafe {
                let c = &e.param.conn;
                if c.private_data.is_null() {
                    &[]
                } else {
                    core::slice::from_raw_parts(c.private_data.cast(), c.private_data_len as usize)
                }
            }
        };
        match e.event {
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_ADDR_RESOLVED => CmEvent::AddrResolved,
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_ADDR_ERROR => CmEvent::AddrError(e.status),
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_ROUTE_RESOLVED => CmEvent::RouteResolved,
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_ROUTE_ERROR => CmEvent::RouteError(e.status),
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_ESTABLISHED => CmEvent::Established {
                private_data: conn_data(),
            },
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_REJECTED => {
                let mut len = 0u8;
                // SAFETY: `id` and `ev` are a REJECTED event's (contract).
                let data = unsafe { ffi::rdma_consumer_reject_data(id, ev, &mut len) };
                let private_data = if data.is_null() {
                    None
                } else {
                    // SAFETY: `len` bytes at `data`, part of the event.
                    Some(unsafe { core::slice::from_raw_parts(data.cast::<u8>(), len as usize) })
                };
                CmEvent::Rejected {
                    reason: e.status,
                    private_data,
                }
            }
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_CONNECT_ERROR => CmEvent::ConnectError(e.status),
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_UNREACHABLE => CmEvent::Unreachable(e.status),
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_DISCONNECTED => CmEvent::Disconnected(e.status),
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_DEVICE_REMOVAL => CmEvent::DeviceRemoval,
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_ADDR_CHANGE => CmEvent::AddrChange,
            ffi::rdma_cm_event_type_RDMA_CM_EVENT_TIMEWAIT_EXIT => CmEvent::TimewaitExit,
            other => CmEvent::Other(other, e.status),
        }
    }
}

/// Parameters of `connect` and `accept` (`struct rdma_conn_param`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnParam<'a> {
    /// Private data sent with the request or reply (at most 56 bytes for a
    /// connect, 196 for an accept on IB).
    pub private_data: &'a [u8],
    /// Outstanding RDMA READs the peer may issue to us.
    pub responder_resources: u8,
    /// Outstanding RDMA READs we may issue.
    pub initiator_depth: u8,
    /// Transport retries.
    pub retry_count: u8,
    /// RNR retries (7: infinite).
    pub rnr_retry_count: u8,
    /// Whether flow control is used.
    pub flow_control: bool,
}

impl ConnParam<'_> {
    fn raw(&self) -> Result<ffi::rdma_conn_param> {
        Ok(ffi::rdma_conn_param {
            private_data: self.private_data.as_ptr().cast(),
            private_data_len: u8::try_from(self.private_data.len()).map_err(|_| EINVAL)?,
            responder_resources: self.responder_resources,
            initiator_depth: self.initiator_depth,
            flow_control: self.flow_control as u8,
            retry_count: self.retry_count,
            rnr_retry_count: self.rnr_retry_count,
            ..Default::default()
        })
    }
}

/// What a QP and its CQ are created with.
#[derive(Clone, Copy, Debug)]
pub struct QpAttr {
    /// Send queue depth.
    pub max_send_wr: u32,
    /// Receive queue depth.
    pub max_recv_wr: u32,
    /// SGEs per send work request.
    pub max_send_sge: u32,
    /// SGEs per receive work request.
    pub max_recv_sge: u32,
    /// Entries of the CQ (both queues complete to it).
    pub nr_cqe: u32,
    /// Completion vector (CPU affinity hint) of the CQ.
    pub comp_vector: u32,
    /// How the CQ is polled.
    pub poll: PollContext,
}

/// The handler of a connection's rdma_cm events.
pub trait CmHandler: Send + Sync + Sized + 'static {
    /// An event on the connection `id`. Runs in process context with the id's
    /// handler lock held: `connect` and `accept` may be called, and dropping
    /// the `CmId` here is allowed (see the module documentation).
    fn event(&self, id: &CmIdRef<Self>, event: &CmEvent<'_>);

    /// An asynchronous event of the id's QP (`IB_EVENT_COMM_EST` is also
    /// passed on to rdma_cm before this runs). Any context: it must not
    /// sleep. The default ignores it.
    fn qp_event(&self, _event: &QpEvent) {}
}

/// An asynchronous QP event (`struct ib_event` of a QP).
pub struct QpEvent(ffi::ib_event_type);

impl QpEvent {
    /// Its number (`enum ib_event_type`).
    pub fn code(&self) -> u32 {
        self.0 as u32
    }

    /// Whether it is `IB_EVENT_COMM_EST` (data arrived before the RTU).
    pub fn is_comm_est(&self) -> bool {
        self.0 == ffi::ib_event_type_IB_EVENT_COMM_EST
    }

    /// Its name (`ib_event_msg`).
    pub fn name(&self) -> &'static CStr {
        // SAFETY: `ib_event_msg` returns a static NUL-terminated string for
        // any value ("unrecognized event" for unknown ones).
        unsafe { CStr::from_char_ptr(ffi::ib_event_msg(self.0)) }
    }
}

/// The QP and CQ of a CM id.
struct QpRes {
    qp: NonNull<ffi::ib_qp>,
    cq: Cq,
    _pd: Arc<Pd>,
}

/// The state behind a [`CmId`]; the id's context and its QP's context.
pub(crate) struct Inner<H: CmHandler> {
    state: HandlerState,
    id: *mut ffi::rdma_cm_id,
    handler: Arc<H>,
    res: AtomicPtr<QpRes>,
    /// Posts (and direct polls) in progress; `Drop` unpublishes `res`, then
    /// waits for this to reach zero before draining, so that no request is
    /// posted behind the drain marker.
    posters: AtomicU32,
    /// Whether `id` may still be used by QP async events (false once the id
    /// is being destroyed). Taken with interrupts off: a driver may report
    /// QP events from its interrupt handler.
    id_alive: Pin<KBox<SpinLockIrq<bool>>>,
}

impl<H: CmHandler> Inner<H> {
    pub(crate) fn handler(&self) -> &H {
        &self.handler
    }
}

/// A connection's rdma_cm id as its handler sees it; a [`CmId`] derefs to it.
#[repr(transparent)]
pub struct CmIdRef<H: CmHandler>(Inner<H>);

/// An owned rdma_cm id for a connection, with its QP and CQ once created.
/// `Drop` destroys the id, drains and destroys the QP, frees the CQ, and then
/// releases the handler.
///
/// # Invariants
///
/// `inner` is a live `Inner<H>` from `KBox::into_raw`, owned by this object,
/// whose `id` is a live rdma_cm id with `inner` as context and
/// `event::<H>` as handler.
pub struct CmId<H: CmHandler> {
    inner: NonNull<Inner<H>>,
}

// SAFETY: all state is behind atomics or locks; the rdma_cm calls are thread
// safe; `H` is `Send + Sync`.
unsafe impl<H: CmHandler> Send for CmId<H> {}
// SAFETY: as above.
unsafe impl<H: CmHandler> Sync for CmId<H> {}
// SAFETY: as above.
unsafe impl<H: CmHandler> Send for Inner<H> {}
// SAFETY: as above.
unsafe impl<H: CmHandler> Sync for Inner<H> {}

impl<H: CmHandler> core::ops::Deref for CmId<H> {
    type Target = CmIdRef<H>;

    fn deref(&self) -> &CmIdRef<H> {
        // SAFETY: `inner` is live (type invariant); `CmIdRef` is transparent.
        unsafe { &*self.inner.as_ptr().cast::<CmIdRef<H>>() }
    }
}

fn new_inner<H: CmHandler>(handler: Arc<H>) -> Result<NonNull<Inner<H>>> {
    let id_alive = KBox::pin_init(new_spinlock_irq!(true, "rb_cm_id"), GFP_KERNEL)?;
    let inner = KBox::new(
        Inner {
            state: HandlerState::default(),
            id: null_mut(),
            handler,
            res: AtomicPtr::new(null_mut()),
            posters: AtomicU32::new(0),
            id_alive,
        },
        GFP_KERNEL,
    )?;
    Ok(NonNull::from(KBox::leak(inner)))
}

/// rdma_cm's event callback for connection ids of handler type `H`.
///
/// # Safety
///
/// Called by rdma_cm for an id whose context is a live `Inner<H>`.
unsafe extern "C" fn event<H: CmHandler>(
    id: *mut ffi::rdma_cm_id,
    ev: *mut ffi::rdma_cm_event,
) -> kernel::ffi::c_int {
    // SAFETY: the context is a live `Inner<H>` (function contract): `Drop`
    // destroys the id, which waits for this handler, before freeing it.
    let inner = unsafe { &*(*id).context.cast::<Inner<H>>() };
    // SAFETY: the callback's arguments are valid during the callback.
    let event = unsafe { CmEvent::from_raw(id, ev) };
    let frame = Frame::new();
    inner.state.enter(&frame);
    // SAFETY: `CmIdRef` is a transparent wrapper of `Inner`.
    let id_ref = unsafe { &*core::ptr::from_ref(inner).cast::<CmIdRef<H>>() };
    inner.handler.event(id_ref, &event);
    if frame.destroy.get() {
        // `Drop` ran inside the handler and freed `inner`: do not touch it.
        frame.release_deferred();
        return 1;
    }
    inner.state.leave();
    0
}

/// QP async event callback: forwards `IB_EVENT_COMM_EST` to rdma_cm, as
/// data may arrive before the CM's RTU does.
///
/// # Safety
///
/// `ctx` is the `Inner<H>` the QP was created with, alive until the QP is
/// destroyed.
unsafe extern "C" fn qp_event<H: CmHandler>(ev: *mut ffi::ib_event, ctx: *mut kernel::ffi::c_void) {
    // SAFETY: contract above; `ev` is valid during the call.
    let (inner, ev) = unsafe { (&*ctx.cast::<Inner<H>>(), &*ev) };
    if ev.event == ffi::ib_event_type_IB_EVENT_COMM_EST {
        let alive = inner.id_alive.lock();
        if *alive {
            // SAFETY: the id is alive while `id_alive` is true under the lock.
            unsafe { ffi::rdma_notify(inner.id, ev.event) };
        }
    }
    inner.handler().qp_event(&QpEvent(ev.event));
}

fn timeout(ms: u32) -> Result<usize> {
    usize::try_from(ms).map_err(|_| EINVAL)
}

impl<H: CmHandler> CmId<H> {
    /// A new RC id in the TCP port space whose events go to `handler`.
    pub fn new(handler: Arc<H>) -> Result<Self> {
        Self::new_ps(handler, ffi::rdma_ucm_port_space_RDMA_PS_TCP)
    }

    /// A new RC id to connect to `dst`: in the IB port space for a native
    /// IB address, else in TCP's (as the C RTRS client does).
    pub fn new_for(handler: Arc<H>, dst: &SockAddr) -> Result<Self> {
        let ps = if u32::from(dst.family()) == ffi::AF_IB {
            ffi::rdma_ucm_port_space_RDMA_PS_IB
        } else {
            ffi::rdma_ucm_port_space_RDMA_PS_TCP
        };
        Self::new_ps(handler, ps)
    }

    fn new_ps(handler: Arc<H>, ps: ffi::rdma_ucm_port_space) -> Result<Self> {
        let inner = new_inner(handler)?;
        // SAFETY: `inner` is live and becomes the context of the new id, with
        // the matching trampoline; `init_net` is static.
        let id = unsafe {
            ffi::rdma_create_id(
                core::ptr::addr_of_mut!(ffi::init_net),
                Some(event::<H>),
                inner.as_ptr().cast(),
                ps,
                ffi::ib_qp_type_IB_QPT_RC,
            )
        };
        if let Err(e) = kernel::error::from_err_ptr(id) {
            // SAFETY: `inner` came from `KBox::leak` and was not shared.
            drop(unsafe { KBox::from_raw(inner.as_ptr()) });
            return Err(e);
        }
        // SAFETY: no event can run before an operation on the id is started,
        // so nobody else reads `id` yet.
        unsafe { (*inner.as_ptr()).id = id };
        // INVARIANT: a live id whose context is `inner`.
        Ok(Self { inner })
    }
}

impl<H: CmHandler> CmIdRef<H> {
    fn raw(&self) -> *mut ffi::rdma_cm_id {
        self.0.id
    }

    /// The connection's handler.
    pub fn handler(&self) -> &H {
        &self.0.handler
    }

    /// Whether `self` and `other` are the same connection.
    pub fn same(&self, other: &CmIdRef<H>) -> bool {
        core::ptr::eq(self, other)
    }

    /// The id's rdma_cm context for QP creation.
    fn inner_ptr(&self) -> *mut kernel::ffi::c_void {
        core::ptr::from_ref(&self.0).cast_mut().cast()
    }

    /// Whether this task runs this id's event handler right now.
    fn in_own_handler(&self) -> bool {
        self.0.state.own_frame().is_some()
    }

    /// Lets a later `bind` or `resolve_addr` reuse the source address.
    pub fn set_reuseaddr(&self, on: bool) -> Result {
        // SAFETY: the id is live (type invariant of `CmId`).
        to_result(unsafe { ffi::rdma_set_reuseaddr(self.raw(), on as i32) })
    }

    /// Starts resolving `dst` (and binding `src`, if given) to a device;
    /// ends with [`CmEvent::AddrResolved`] or [`CmEvent::AddrError`].
    pub fn resolve_addr(&self, src: Option<&SockAddr>, dst: &SockAddr, timeout_ms: u32) -> Result {
        let mut src = src.copied();
        let mut dst = *dst;
        let src_ptr = src.as_mut().map_or(null_mut(), |s| s.as_mut_ptr());
        // SAFETY: the id is live; the addresses are copied by rdma_cm.
        to_result(unsafe {
            ffi::rdma_resolve_addr(self.raw(), src_ptr, dst.as_mut_ptr(), timeout(timeout_ms)?)
        })
    }

    /// Starts resolving the route to the resolved address; ends with
    /// [`CmEvent::RouteResolved`] or [`CmEvent::RouteError`].
    pub fn resolve_route(&self, timeout_ms: u32) -> Result {
        // SAFETY: the id is live.
        to_result(unsafe { ffi::rdma_resolve_route(self.raw(), timeout(timeout_ms)?) })
    }

    /// Sends the connection request (active side).
    pub fn connect(&self, param: &ConnParam<'_>) -> Result {
        let mut p = param.raw()?;
        // SAFETY: the id is live; the `_locked` variant only from inside the
        // id's handler, which holds the handler lock it needs.
        to_result(unsafe {
            if self.in_own_handler() {
                ffi::rdma_connect_locked(self.raw(), &mut p)
            } else {
                ffi::rdma_connect(self.raw(), &mut p)
            }
        })
    }

    /// Accepts the connection request this id was adopted from (passive
    /// side), replying with `param`.
    pub fn accept(&self, param: &ConnParam<'_>) -> Result {
        let mut p = param.raw()?;
        let own = self.in_own_handler();
        // SAFETY: the id is live; `rdma_accept` needs the handler lock: held
        // inside the handler, taken around the call otherwise.
        let ret = unsafe {
            if !own {
                ffi::rdma_lock_handler(self.raw());
            }
            let ret = ffi::rdma_accept(self.raw(), &mut p);
            if !own {
                ffi::rdma_unlock_handler(self.raw());
            }
            ret
        };
        to_result(ret)
    }

    /// Rejects the connection request this id was adopted from, with
    /// consumer-defined `private_data`.
    pub fn reject(&self, private_data: &[u8]) -> Result {
        reject(self.raw(), private_data)
    }

    /// Disconnects; both sides then get [`CmEvent::Disconnected`].
    pub fn disconnect(&self) -> Result {
        // SAFETY: the id is live.
        to_result(unsafe { ffi::rdma_disconnect(self.raw()) })
    }

    /// The device the id is bound to, once its address is resolved (or, for
    /// an adopted id, from the start).
    pub fn device(&self) -> Option<&Device> {
        // SAFETY: the id is live; a non-null `device` stays valid while the id
        // exists (rdma_cm holds the device for it).
        unsafe {
            let dev = (*self.raw()).device;
            (!dev.is_null()).then(|| Device::from_raw(dev))
        }
    }

    /// The device port the id is bound to.
    pub fn port_num(&self) -> u32 {
        // SAFETY: the id is live; reading a plain field.
        unsafe { (*self.raw()).port_num }
    }

    /// The local address of the id.
    pub fn src_addr(&self) -> SockAddr {
        // SAFETY: the id is live; `route.addr` is a plain struct in it.
        unsafe { SockAddr::from_raw(&(*self.raw()).route.addr.src_addr) }
    }

    /// The remote address of the id.
    pub fn dst_addr(&self) -> SockAddr {
        // SAFETY: as above.
        unsafe { SockAddr::from_raw(&(*self.raw()).route.addr.dst_addr) }
    }

    fn res(&self) -> Option<&QpRes> {
        // SAFETY: a non-null `res` is a live `QpRes`; `Drop` frees it only
        // after unpublishing it and waiting for `posters` (see `post`). This
        // accessor is for reads that do not reach the QP's queues.
        NonNull::new(self.0.res.load(Ordering::Acquire)).map(|r| unsafe { &*r.as_ptr() })
    }

    /// Runs `f` on the QP resources, counted in `posters` so that `Drop`
    /// does not drain and destroy them meanwhile.
    fn with_res<R>(&self, f: impl FnOnce(&QpRes) -> Result<R>) -> Result<R> {
        self.0.posters.fetch_add(1, Ordering::SeqCst);
        let r = self.0.res.load(Ordering::SeqCst);
        let ret = match NonNull::new(r) {
            // SAFETY: published and not yet unpublished when we counted
            // ourselves in; `Drop` waits for us before freeing it.
            Some(r) => f(unsafe { r.as_ref() }),
            None => Err(rb::errno::ENOTCONN()),
        };
        self.0.posters.fetch_sub(1, Ordering::Release);
        ret
    }

    /// Creates the id's RC QP and its CQ on the id's device, within `pd`. The
    /// QP's work requests complete to handlers whose `Conn` is `H`.
    pub fn create_qp(&self, pd: &Arc<Pd>, attr: &QpAttr) -> Result {
        if self.res().is_some() {
            return Err(EEXIST);
        }
        let dev = self.device().ok_or(ENODEV)?;
        if !core::ptr::eq(dev.as_raw(), pd.device().as_raw()) {
            return Err(EINVAL);
        }
        let cq = Cq::new(dev.as_raw(), attr.nr_cqe, attr.comp_vector, attr.poll)?;
        // SAFETY: all-zero is a valid `ib_qp_init_attr`.
        let mut init: ffi::ib_qp_init_attr = unsafe { core::mem::zeroed() };
        init.event_handler = Some(qp_event::<H>);
        init.qp_context = self.inner_ptr();
        init.send_cq = cq.as_raw();
        init.recv_cq = cq.as_raw();
        init.cap.max_send_wr = attr.max_send_wr;
        init.cap.max_recv_wr = attr.max_recv_wr;
        init.cap.max_send_sge = attr.max_send_sge;
        init.cap.max_recv_sge = attr.max_recv_sge;
        init.sq_sig_type = ffi::ib_sig_type_IB_SIGNAL_REQ_WR;
        init.qp_type = ffi::ib_qp_type_IB_QPT_RC;
        // SAFETY: the id, PD and CQ are live; the QP's context is our `Inner`,
        // which outlives the QP (destroyed in `Drop` before `Inner`).
        to_result(unsafe { ffi::rdma_create_qp(self.raw(), pd.as_raw(), &mut init) })?;
        // SAFETY: `rdma_create_qp` succeeded, so `id->qp` is the new QP.
        let qp = unsafe { (*self.raw()).qp };
        let res = KBox::new(
            QpRes {
                qp: NonNull::new(qp).ok_or(EINVAL)?,
                cq,
                _pd: pd.clone(),
            },
            GFP_KERNEL,
        );
        let res = match res {
            Ok(r) => KBox::into_raw(r),
            Err(e) => {
                // SAFETY: the QP was just created on this id and is unused.
                unsafe { ffi::rdma_destroy_qp(self.raw()) };
                return Err(e.into());
            }
        };
        if self
            .0
            .res
            .compare_exchange(null_mut(), res, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // Another thread created one meanwhile: undo ours.
            // SAFETY: `res` is ours and unpublished.
            let r = unsafe { KBox::from_raw(res) };
            // SAFETY: our QP, unused.
            unsafe { ffi::ib_destroy_qp(r.qp.as_ptr()) };
            return Err(EEXIST);
        }
        Ok(())
    }

    /// The QP number, once the QP exists.
    pub fn qp_num(&self) -> Option<u32> {
        // SAFETY: the QP is live while `res` is set.
        self.res().map(|r| unsafe { (*r.qp.as_ptr()).qp_num })
    }

    /// Posts a chain of `N` send work requests, built by `f` from the
    /// connection's handler (see the `wr` module for why); nothing is posted
    /// if `f` fails.
    pub fn post_send<'s, const N: usize, F>(&self, f: F) -> Result
    where
        F: for<'h> FnOnce(&'h H) -> Result<[SendWr<'h, 's, H>; N]>,
    {
        self.post_chain::<N, _>(|h, chain| {
            for wr in f(h)? {
                chain.push(wr)?;
            }
            Ok(())
        })
    }

    /// Posts the chain of at most `MAX` send work requests that `f` pushes
    /// into a [`WrChain`] from the connection's handler, in order, with one
    /// `ib_post_send()`; nothing is posted if `f` fails or pushes nothing.
    pub fn post_chain<'s, const MAX: usize, F>(&self, f: F) -> Result
    where
        F: for<'h> FnOnce(&'h H, &mut WrChain<'h, 's, H, MAX>) -> Result,
    {
        let mut chain = WrChain::new();
        f(&self.0.handler, &mut chain)?;
        let n = chain.len();
        if n == 0 {
            return Ok(());
        }
        let mut raw: [RawSendWr; MAX] = core::array::from_fn(|_| RawSendWr::zeroed());
        for (r, w) in raw.iter_mut().zip(chain.requests()) {
            *r = RawSendWr::from_wr(w);
        }
        for i in 1..n {
            let next: *mut RawSendWr = &mut raw[i];
            // Every member starts with the `ib_send_wr`: link them. The last
            // one pushed keeps its NULL `next`.
            raw[i - 1].wr.next = next.cast();
        }
        let mut bad: *const ffi::ib_send_wr = core::ptr::null();
        self.with_res(|res| {
            // SAFETY: the QP is live (`with_res`); the chain is valid for the
            // call; what it points at outlives its completion (`wr` module).
            to_result(unsafe { ffi::ib_post_send(res.qp.as_ptr(), &raw[0].wr, &mut bad) })
        })
    }

    /// Posts `N` receive work requests built by `f`; nothing is posted if
    /// `f` fails.
    pub fn post_recv<'s, const N: usize, F>(&self, f: F) -> Result
    where
        F: for<'h> FnOnce(&'h H) -> Result<[RecvWr<'h, 's, H>; N]>,
    {
        let wrs = f(&self.0.handler)?;
        if N == 0 {
            return Ok(());
        }
        let mut raw: [ffi::ib_recv_wr; N] = core::array::from_fn(|i| {
            // SAFETY: all-zero is a valid `ib_recv_wr`.
            let mut r: ffi::ib_recv_wr = unsafe { core::mem::zeroed() };
            r.__bindgen_anon_1.wr_cqe = wrs[i].cqe;
            r.sg_list = wrs[i].sges.as_ptr().cast_mut().cast();
            r.num_sge = wrs[i].sges.len() as i32;
            r
        });
        for i in 0..N - 1 {
            let next: *mut ffi::ib_recv_wr = &mut raw[i + 1];
            raw[i].next = next;
        }
        let mut bad: *const ffi::ib_recv_wr = core::ptr::null();
        self.with_res(|res| {
            // SAFETY: as for `post_send`.
            to_result(unsafe { ffi::ib_post_recv(res.qp.as_ptr(), &raw[0], &mut bad) })
        })
    }

    /// Moves the QP to the error state and waits until every work request
    /// posted so far has completed (flushed); later posts complete at once
    /// with a flush error. The CM id and QP stay. For a connection's close,
    /// before its users are told; `Drop` drains anyway.
    pub fn drain(&self) {
        let _ = self.with_res(|res| {
            // SAFETY: the QP is live (`with_res`); draining is allowed in
            // process context at any time, and more than once.
            unsafe { ffi::ib_drain_qp(res.qp.as_ptr()) };
            Ok(())
        });
    }

    /// Polls a [`PollContext::Direct`] CQ, running up to `budget` completion
    /// handlers here (all if negative); returns how many ran.
    pub fn poll_cq(&self, budget: i32) -> Result<u32> {
        self.with_res(|res| {
            // SAFETY: the CQ is live (`with_res`); for a non-direct CQ the core
            // warns and returns 0.
            let n = unsafe { ffi::ib_process_cq_direct(res.cq.as_raw(), budget) };
            Ok(n.max(0) as u32)
        })
    }
}

fn reject(id: *mut ffi::rdma_cm_id, private_data: &[u8]) -> Result {
    let len = u8::try_from(private_data.len()).map_err(|_| EINVAL)?;
    // SAFETY: `id` is a live id; the data is copied into the reject message.
    to_result(unsafe {
        ffi::rdma_reject(id, private_data.as_ptr().cast(), len, REJ_CONSUMER_DEFINED)
    })
}

impl<H: CmHandler> CmId<H> {
    /// Unpublishes the QP resources, waits for posts that saw them, drains
    /// the QP (completion handlers run with `H` still alive) and destroys it,
    /// its CQ and its reference on the PD. `id_live`: the id still exists,
    /// so the QP goes with `rdma_destroy_qp` and rdma_cm forgets it.
    fn destroy_res(inner: &Inner<H>, id_live: bool) {
        let res = inner.res.swap(null_mut(), Ordering::SeqCst);
        // Later posts fail with ENOTCONN; those under way run briefly, in
        // completion handlers.
        while inner.posters.load(Ordering::Acquire) != 0 {
            core::hint::spin_loop();
        }
        if res.is_null() {
            return;
        }
        // SAFETY: `res` is ours (swapped out) and no post uses it any more.
        let res = unsafe { KBox::from_raw(res) };
        // SAFETY: the QP is live; draining and destroying it are allowed in
        // process context. While the id lives `rdma_destroy_qp` is the way.
        unsafe {
            ffi::ib_drain_qp(res.qp.as_ptr());
            if id_live {
                ffi::rdma_destroy_qp(inner.id);
            } else {
                ffi::ib_destroy_qp(res.qp.as_ptr());
            }
        }
        drop(res);
    }
}

impl<H: CmHandler> Drop for CmId<H> {
    fn drop(&mut self) {
        // Destroying a connection sleeps (drain, `rdma_destroy_id`): complain
        // loudly if this runs in atomic context, e.g. a softirq completion.
        // SAFETY: `might_sleep` only checks the context.
        unsafe { ffi::might_sleep() };
        let inner_ptr = self.inner.as_ptr();
        // SAFETY: `inner` is live and exclusively ours now (type invariant;
        // `&mut self` excludes other handles, and a handler running on another
        // thread only reads it until `rdma_destroy_id` below returns).
        let inner = unsafe { &*inner_ptr };
        let frame = inner.state.own_frame().map(core::ptr::from_ref);
        *inner.id_alive.lock() = false;
        // The QP and its CQ go before the id (as C's ULPs do:
        // `rdma_destroy_qp`, `ib_cq_pool_put`, then `rdma_destroy_id`): a
        // device being removed waits for its ids, then frees its pooled CQs
        // (warning about those still in use) and only then waits for the
        // registration references (`DeviceRef`: PDs, and so MRs, and DMA
        // buffers), so only the CQ, and the QP on it, must be gone first.
        Self::destroy_res(inner, true);
        if frame.is_none() {
            // Stop the events (waits for a handler running on another thread).
            // SAFETY: the id is live and destroyed only here.
            unsafe { ffi::rdma_destroy_id(inner.id) };
            // A handler that ran meanwhile may have created a QP again.
            Self::destroy_res(inner, false);
        }
        // SAFETY: `inner_ptr` came from `KBox::leak`; nothing uses it after
        // this (a handler of this task returns without touching it, as its
        // frame says `destroy`).
        let inner = unsafe { KBox::from_raw(inner_ptr) };
        match frame {
            None => drop(inner),
            Some(frame) => {
                // SAFETY: `frame` is this task's handler frame, up the stack.
                let frame = unsafe { &*frame };
                let Inner { handler, .. } = KBox::into_inner(inner);
                frame
                    .deferred
                    .set(Some((Arc::into_raw(handler).cast(), drop_arc::<H>)));
                frame.destroy.set(true);
            }
        }
    }
}

/// The handler of a listening id.
pub trait ListenHandler: Send + Sync + Sized + 'static {
    /// A connection request to the listener `this`. Adopt it
    /// ([`ConnectRequest::adopt`]) to take the new id as a `CmId` of your own,
    /// then accept or reject; if it is not adopted, rdma_cm destroys the new
    /// id when this returns.
    fn connect_request(this: &Arc<Self>, req: ConnectRequest<'_>);

    /// Another event on the listening id (device removal, address change).
    fn event(&self, _event: &CmEvent<'_>) {}
}

/// A connection request, valid during [`ListenHandler::connect_request`].
pub struct ConnectRequest<'a> {
    id: *mut ffi::rdma_cm_id,
    private_data: &'a [u8],
    frame: &'a Frame,
}

impl<'a> ConnectRequest<'a> {
    /// The private data of the request.
    pub fn private_data(&self) -> &'a [u8] {
        self.private_data
    }

    /// The device the request came in on.
    pub fn device(&self) -> &'a Device {
        // SAFETY: a connection request's id is bound to the device it arrived
        // on, which stays registered for the duration of the callback.
        unsafe { Device::from_raw((*self.id).device) }
    }

    /// The local and remote addresses of the request.
    pub fn addrs(&self) -> (SockAddr, SockAddr) {
        // SAFETY: the new id is live during the callback.
        unsafe {
            (
                SockAddr::from_raw(&(*self.id).route.addr.src_addr),
                SockAddr::from_raw(&(*self.id).route.addr.dst_addr),
            )
        }
    }

    /// Rejects the request with consumer-defined `private_data`; rdma_cm then
    /// destroys the new id.
    pub fn reject(self, private_data: &[u8]) -> Result {
        reject(self.id, private_data)
    }

    /// Takes the new id as a connection whose events go to `handler`. Create
    /// its QP and `accept` (or `reject`) next, still inside this callback.
    pub fn adopt<H: CmHandler>(self, handler: Arc<H>) -> Result<CmId<H>> {
        let inner = new_inner(handler)?;
        // SAFETY: `inner` is live; the new id's handler lock is held during
        // this callback, so no event of it runs while we switch it to us.
        unsafe {
            (*inner.as_ptr()).id = self.id;
            (*inner.as_ptr()).state.enter(self.frame);
            (*self.id).context = inner.as_ptr().cast();
            (*self.id).event_handler = Some(event::<H>);
        }
        // SAFETY: as above, `inner` is live.
        self.frame.adopted.set(unsafe { &(*inner.as_ptr()).state });
        // INVARIANT: a live id whose context is `inner`, handler `event::<H>`.
        Ok(CmId { inner })
    }
}

/// A listening id. `Drop` destroys it (waiting for running handlers).
///
/// # Invariants
///
/// `inner` is a live `ListenInner<L>` from `KBox::leak`, owned by this object,
/// context of the live listening id `inner.id`.
pub struct Listener<L: ListenHandler> {
    inner: NonNull<ListenInner<L>>,
}

struct ListenInner<L: ListenHandler> {
    state: HandlerState,
    id: *mut ffi::rdma_cm_id,
    handler: Arc<L>,
}

// SAFETY: the handler is `Send + Sync`, the id's calls are thread safe.
unsafe impl<L: ListenHandler> Send for Listener<L> {}
// SAFETY: as above.
unsafe impl<L: ListenHandler> Sync for Listener<L> {}

/// rdma_cm's event callback for listening ids of handler type `L`.
///
/// # Safety
///
/// Called by rdma_cm for the listening id whose context is a live
/// `ListenInner<L>`, or for a connection request on it (whose new id starts
/// with the same context).
unsafe extern "C" fn listen_event<L: ListenHandler>(
    id: *mut ffi::rdma_cm_id,
    ev: *mut ffi::rdma_cm_event,
) -> kernel::ffi::c_int {
    // SAFETY: the context is the listener's live `ListenInner` (contract);
    // `Drop` destroys the listening id, waiting for this handler, first.
    let inner = unsafe { &*(*id).context.cast::<ListenInner<L>>() };
    // SAFETY: `ev` is valid during the callback.
    if unsafe { (*ev).event } != ffi::rdma_cm_event_type_RDMA_CM_EVENT_CONNECT_REQUEST {
        // SAFETY: the callback's arguments are valid during the callback.
        let event = unsafe { CmEvent::from_raw(id, ev) };
        let frame = Frame::new();
        inner.state.enter(&frame);
        inner.handler.event(&event);
        inner.state.leave();
        return 0;
    }
    // SAFETY: for a connection request `param.conn` is the active member.
    let private_data = unsafe {
        let c = &(*ev).param.conn;
        if c.private_data.is_null() {
            &[][..]
        } else {
            core::slice::from_raw_parts(c.private_data.cast::<u8>(), c.private_data_len as usize)
        }
    };
    let listen_frame = Frame::new();
    let conn_frame = Frame::new();
    inner.state.enter(&listen_frame);
    L::connect_request(
        &inner.handler,
        ConnectRequest {
            id,
            private_data,
            frame: &conn_frame,
        },
    );
    inner.state.leave();
    if conn_frame.destroy.get() {
        // Adopted, then dropped inside the callback: rdma_cm destroys the id.
        conn_frame.release_deferred();
        return 1;
    }
    let adopted = conn_frame.adopted.get();
    if adopted.is_null() {
        // Not adopted: rdma_cm destroys the new id.
        return 1;
    }
    // SAFETY: the adopted id's `Inner` is alive (it was not dropped: no
    // `destroy` in its frame) and its state points at `conn_frame`.
    unsafe { (*adopted).leave() };
    0
}

/// The step of making a [`Listener`] that failed, for a caller that logs
/// each as C does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListenStep {
    /// `rdma_create_id()` (or an allocation before it).
    Create,
    /// `rdma_bind_addr()` (or `rdma_set_afonly()`).
    Bind,
    /// `rdma_listen()`.
    Listen,
}

/// Why a [`Listener`] could not be made.
#[derive(Clone, Copy, Debug)]
pub struct ListenError {
    /// The step that failed.
    pub step: ListenStep,
    /// Its error.
    pub err: Error,
}

impl From<ListenError> for Error {
    fn from(e: ListenError) -> Error {
        e.err
    }
}

impl<L: ListenHandler> Listener<L> {
    /// Listens on `addr` (a wildcard address listens on all devices; an
    /// `AF_IB` one in the IB port space) with a backlog of `backlog`
    /// requests. `afonly`: for IPv6, whether to refuse IPv4-mapped
    /// connections.
    pub fn new(
        handler: Arc<L>,
        addr: &SockAddr,
        backlog: i32,
        afonly: Option<bool>,
    ) -> core::result::Result<Self, ListenError> {
        let fail = |step| move |err| ListenError { step, err };
        let inner = NonNull::from(KBox::leak(
            KBox::new(
                ListenInner {
                    state: HandlerState::default(),
                    id: null_mut(),
                    handler,
                },
                GFP_KERNEL,
            )
            .map_err(|e| fail(ListenStep::Create)(e.into()))?,
        ));
        // Native IB addresses live in the IB port space, IP ones in TCP's.
        let ps = if u32::from(addr.family()) == ffi::AF_IB {
            ffi::rdma_ucm_port_space_RDMA_PS_IB
        } else {
            ffi::rdma_ucm_port_space_RDMA_PS_TCP
        };
        // SAFETY: `inner` becomes the context of the new id, with the
        // matching trampoline; `init_net` is static.
        let id = unsafe {
            ffi::rdma_create_id(
                core::ptr::addr_of_mut!(ffi::init_net),
                Some(listen_event::<L>),
                inner.as_ptr().cast(),
                ps,
                ffi::ib_qp_type_IB_QPT_RC,
            )
        };
        if let Err(e) = kernel::error::from_err_ptr(id) {
            // SAFETY: `inner` is ours and unshared.
            drop(unsafe { KBox::from_raw(inner.as_ptr()) });
            return Err(fail(ListenStep::Create)(e));
        }
        // SAFETY: no event before `rdma_listen`.
        unsafe { (*inner.as_ptr()).id = id };
        // INVARIANT: a live id with `inner` as context; on error, `Drop`
        // destroys it.
        let this = Self { inner };
        let mut a = *addr;
        // SAFETY: the id is live; the address is copied.
        unsafe {
            if let Some(only) = afonly {
                to_result(ffi::rdma_set_afonly(id, only as i32)).map_err(fail(ListenStep::Bind))?;
            }
            to_result(ffi::rdma_bind_addr(id, a.as_mut_ptr())).map_err(fail(ListenStep::Bind))?;
            to_result(ffi::rdma_listen(id, backlog)).map_err(fail(ListenStep::Listen))?;
        }
        Ok(this)
    }

    /// The listener's handler.
    pub fn handler(&self) -> &L {
        // SAFETY: `inner` is live (type invariant).
        unsafe { &(*self.inner.as_ptr()).handler }
    }
}

impl<L: ListenHandler> Drop for Listener<L> {
    fn drop(&mut self) {
        // SAFETY: `inner` is live and ours (type invariant).
        let inner = unsafe { &*self.inner.as_ptr() };
        if inner.state.own_frame().is_some() {
            // Dropped inside its own callback: rdma_cm cannot be asked to
            // destroy a listening id from there. Leak rather than deadlock.
            pr_err!("rb: listener dropped in its own event handler; leaking it\n");
            return;
        }
        // SAFETY: the id is live and destroyed only here; this waits for
        // running handlers, after which none runs again.
        unsafe { ffi::rdma_destroy_id(inner.id) };
        // SAFETY: `inner` came from `KBox::leak` and nothing uses it now.
        drop(unsafe { KBox::from_raw(self.inner.as_ptr()) });
    }
}
