// SPDX-License-Identifier: GPL-2.0-or-later

//! The C ABI that `rtrs-server` exports (`rtrs.h`): `rtrs_srv_open`,
//! `rtrs_srv_close`, `rtrs_srv_resp_rdma`, `rtrs_srv_set_sess_priv`,
//! `rtrs_srv_get_path_name`, `rtrs_srv_get_queue_depth`; and the upper
//! layer's callbacks (`struct rtrs_srv_ops`) as the server calls them.
//!
//! The one place of this module with `unsafe`: each entry point turns its C
//! caller's pointers into safe values under the contract its `# Safety`
//! section states, then calls the server's context, session or path. The
//! `EXPORT_SYMBOL` lines are in `exports.c` beside this file.
//!
//! The C user holds three kinds of pointers into the server: the context
//! (`rtrs_srv_ctx`, an `Arc` handed over by `open` and taken back by
//! `close`), sessions (`rtrs_srv_sess`, valid from the CONNECTED link event
//! until the DISCONNECTED one, which the server sends before it lets a
//! session go), and IO ids (`rtrs_srv_op`, a slot of [`OpSlots`] that holds
//! a reference on its path until the user answers with `resp_rdma`).

use super::ctx::Ctx;
use super::path::Path;
use super::sess::Session;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::alloc::{flags::GFP_KERNEL, KVec};
use kernel::ffi::{c_char, c_int, c_void};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};
use rb::ffi;
use rb_rdma::blocks::PageBlocks;

/// A link event for the upper layer (`enum rtrs_srv_link_ev`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SrvLinkEv {
    /// The first path of a session is up.
    Connected,
    /// The last path of a session went down.
    Disconnected,
}

/// The upper layer's pointer for a session (`rtrs_srv_set_sess_priv`),
/// opaque to the server.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UpperPriv(*mut kernel::ffi::c_void);

// SAFETY: the server never dereferences it; it only hands it back.
unsafe impl Send for UpperPriv {}
// SAFETY: as above.
unsafe impl Sync for UpperPriv {}

impl UpperPriv {
    /// No pointer.
    pub(crate) const fn null() -> Self {
        Self(null_mut())
    }

    /// The pointer a C user passed.
    pub(crate) fn from_c(p: *mut kernel::ffi::c_void) -> Self {
        Self(p)
    }
}

/// A session's [`UpperPriv`]: set by `rtrs_srv_set_sess_priv`, read per IO
/// without a lock.
pub(crate) struct UpperPrivCell(AtomicPtr<kernel::ffi::c_void>);

impl UpperPrivCell {
    /// No pointer yet.
    pub(crate) const fn new() -> Self {
        Self(AtomicPtr::new(null_mut()))
    }

    /// The pointer now.
    pub(crate) fn get(&self) -> UpperPriv {
        UpperPriv(self.0.load(Ordering::Acquire))
    }

    /// Sets the pointer.
    pub(crate) fn set(&self, p: UpperPriv) {
        self.0.store(p.0, Ordering::Release);
    }
}

/// The id of one IO, as the upper layer sees it (`struct rtrs_srv_op *`).
/// `C`-visible, so its address is what the user gets.
#[repr(C)]
pub(crate) struct OpSlot<P> {
    owner: AtomicPtr<P>,
    idx: u32,
}

/// One [`OpSlot`] per chunk of a path. A started IO's slot holds a
/// reference on the path `P` until [`OpSlots::finish`].
pub(crate) struct OpSlots<P> {
    slots: KVec<OpSlot<P>>,
}

/// An IO id handed to the upper layer (created by [`OpSlots::start`]).
pub(crate) struct OpId(*mut ffi::rtrs_srv_op);

impl<P> OpSlots<P> {
    /// `n` idle slots.
    pub(crate) fn new(n: u32) -> Result<Self> {
        let mut slots = KVec::with_capacity(n as usize, GFP_KERNEL)?;
        for idx in 0..n {
            slots.push(
                OpSlot {
                    owner: AtomicPtr::new(null_mut()),
                    idx,
                },
                GFP_KERNEL,
            )?;
        }
        Ok(Self { slots })
    }

    /// Starts IO `idx` of `owner`: its slot keeps `owner` alive until
    /// `finish(idx)`. EBUSY if it is already in flight.
    pub(crate) fn start(&self, idx: u32, owner: &Arc<P>) -> Result<OpId> {
        let slot = self.slots.get(idx as usize).ok_or(EINVAL)?;
        let ptr = Arc::into_raw(owner.clone()).cast_mut();
        if slot
            .owner
            .compare_exchange(null_mut(), ptr, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // SAFETY: the reference we just made, not stored.
            drop(unsafe { Arc::from_raw(ptr) });
            return Err(EBUSY);
        }
        Ok(OpId(core::ptr::from_ref(slot).cast_mut().cast()))
    }

    /// Ends IO `idx`, releasing the reference its slot held; false if it was
    /// not in flight.
    pub(crate) fn finish(&self, idx: u32) -> bool {
        let Some(slot) = self.slots.get(idx as usize) else {
            return false;
        };
        let ptr = slot.owner.swap(null_mut(), Ordering::AcqRel);
        if ptr.is_null() {
            return false;
        }
        // SAFETY: a non-null owner came from `Arc::into_raw` in `start`, and
        // the swap made us its only holder.
        drop(unsafe { Arc::from_raw(ptr) });
        true
    }

    /// IOs in flight.
    pub(crate) fn in_flight(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| !s.owner.load(Ordering::Acquire).is_null())
            .count()
    }
}

impl<P> Drop for OpSlots<P> {
    fn drop(&mut self) {
        for i in 0..self.slots.len() as u32 {
            self.finish(i);
        }
    }
}

/// The server's side of the upper layer (`struct rtrs_srv_ops`).
pub(crate) struct UpperOps {
    ops: ffi::rtrs_srv_ops,
}

// SAFETY: the callbacks are C functions that may be called from any thread.
unsafe impl Send for UpperOps {}
// SAFETY: as above.
unsafe impl Sync for UpperOps {}

impl UpperOps {
    /// Tells the upper layer about IO `id`: the client wrote `data_len`
    /// bytes of data followed by `usr_len` bytes of its own message into
    /// chunk `chunk` of `pages` (for a READ, the data part is where the
    /// upper layer puts what the client reads). Returns its errno, or EINVAL
    /// if the lengths do not fit the chunk.
    pub(crate) fn rdma_ev(
        &self,
        priv_: UpperPriv,
        id: OpId,
        pages: &PageBlocks,
        chunk: u32,
        data_len: usize,
        usr_len: usize,
    ) -> i32 {
        let fits = data_len
            .checked_add(usr_len)
            .is_some_and(|n| n <= pages.block_size());
        let (Some(f), true, Ok(data)) = (self.ops.rdma_ev, fits, pages.block_ptr(chunk as usize))
        else {
            return -(ffi::EINVAL as i32);
        };
        // SAFETY: `data` is the chunk's kernel address with `data_len +
        // usr_len` bytes in it, which the user may access until it answers
        // `id` (the chunk is not reused before); `f` is the user's callback.
        unsafe {
            f(
                priv_.0,
                id.0,
                data.cast(),
                data_len,
                data.add(data_len).cast(),
                usr_len,
            )
        }
    }

    /// Tells the upper layer that session `sess` is up or down. A non-zero
    /// answer to `Connected` refuses the session.
    pub(crate) fn link_ev(&self, sess: &Session, ev: SrvLinkEv, priv_: UpperPriv) -> i32 {
        let Some(f) = self.ops.link_ev else {
            return 0;
        };
        let ev = match ev {
            SrvLinkEv::Connected => ffi::rtrs_srv_link_ev_RTRS_SRV_LINK_EV_CONNECTED,
            SrvLinkEv::Disconnected => ffi::rtrs_srv_link_ev_RTRS_SRV_LINK_EV_DISCONNECTED,
        };
        // SAFETY: the user's callback; the session pointer it gets stays
        // valid until after the matching `Disconnected` (the session sends
        // it before it goes, `Session::path_down`), and the user only passes
        // it back to our functions.
        unsafe { f(core::ptr::from_ref(sess).cast_mut().cast(), ev, priv_.0) }
    }
}

/// The path that owns the in-flight IO `id`, and the IO's index.
///
/// # Safety
///
/// `id` is a pointer `OpSlots::<P>::start` returned whose IO has not been
/// finished yet.
unsafe fn op_from_raw<P>(id: *mut ffi::rtrs_srv_op) -> Option<(Arc<P>, u32)> {
    // SAFETY: `id` points to a live `OpSlot<P>` (function contract): its
    // owner keeps the `OpSlots` (and so the slot) alive while in flight.
    let slot = unsafe { &*id.cast::<OpSlot<P>>() };
    let owner = slot.owner.load(Ordering::Acquire);
    if owner.is_null() {
        return None;
    }
    // SAFETY: the slot holds a reference on `owner` until `finish`, which
    // only the answer to this IO calls: it cannot drop under us.
    let owner: Arc<P> = unsafe { ArcBorrow::from_raw(owner) }.into();
    Some((owner, slot.idx))
}

/// Writes `name` NUL-terminated into the C buffer, as `strscpy` would.
pub(crate) fn copy_name(name: &[u8], out: &mut [u8]) {
    let n = name.len().min(out.len().saturating_sub(1));
    out[..n].copy_from_slice(&name[..n]);
    if let Some(b) = out.get_mut(n) {
        *b = 0;
    }
}

/// `struct rtrs_srv_ctx *rtrs_srv_open(struct rtrs_srv_ops *ops, u16 port)`.
///
/// # Safety
///
/// `ops` points to a valid `struct rtrs_srv_ops`.
#[no_mangle]
unsafe extern "C" fn rtrs_srv_open(
    ops: *mut ffi::rtrs_srv_ops,
    port: u16,
) -> *mut ffi::rtrs_srv_ctx {
    if ops.is_null() {
        return EINVAL.to_ptr();
    }
    // SAFETY: valid for reads (function contract); a plain copy.
    let upper = UpperOps {
        ops: unsafe { core::ptr::read(ops) },
    };
    match Ctx::open(upper, port) {
        Ok(ctx) => Arc::into_raw(ctx).cast_mut().cast(),
        Err(e) => e.to_ptr(),
    }
}

/// `void rtrs_srv_close(struct rtrs_srv_ctx *ctx)`.
///
/// # Safety
///
/// `ctx` came from `rtrs_srv_open` and is closed once.
#[no_mangle]
unsafe extern "C" fn rtrs_srv_close(ctx: *mut ffi::rtrs_srv_ctx) {
    if ctx.is_null() {
        return;
    }
    // SAFETY: the reference `rtrs_srv_open` handed over (function contract).
    let ctx = unsafe { Arc::from_raw(ctx.cast::<Ctx>()) };
    ctx.close();
}

/// `bool rtrs_srv_resp_rdma(struct rtrs_srv_op *id, int errno)`.
///
/// # Safety
///
/// `id` is an IO the server gave to `rdma_ev`, answered once.
#[no_mangle]
unsafe extern "C" fn rtrs_srv_resp_rdma(id: *mut ffi::rtrs_srv_op, errno: c_int) -> bool {
    if id.is_null() {
        pr_err!("rtrs_srv_resp_rdma: no IO id\n");
        return true;
    }
    // SAFETY: an unanswered IO id (function contract).
    match unsafe { op_from_raw::<Path>(id) } {
        Some((path, idx)) => {
            path.answer_begin();
            let done = Path::resp_rdma(&path, idx, errno);
            let raw: *const Path = &*path;
            drop(path);
            // SAFETY: the path's other references are let go of by its
            // close work alone, after it waited for `answer_end`: the
            // path is alive until that returns.
            unsafe { (*raw).answer_end() };
            done
        }
        None => {
            pr_err!("rtrs_srv_resp_rdma: IO answered twice\n");
            true
        }
    }
}

/// The session behind a pointer the server gave its user.
///
/// # Safety
///
/// `sess` is a session the server reported as connected and not yet as
/// disconnected (it lives until after that event), or null.
unsafe fn sess_ref<'a>(sess: *mut ffi::rtrs_srv_sess) -> Option<&'a Session> {
    // SAFETY: null, or a live session (function contract).
    unsafe { sess.cast::<Session>().as_ref() }
}

/// `void rtrs_srv_set_sess_priv(struct rtrs_srv_sess *sess, void *priv)`.
///
/// # Safety
///
/// `sess` is a session the server reported as connected and not yet as
/// disconnected.
#[no_mangle]
unsafe extern "C" fn rtrs_srv_set_sess_priv(sess: *mut ffi::rtrs_srv_sess, priv_: *mut c_void) {
    // SAFETY: a live session (function contract).
    if let Some(sess) = unsafe { sess_ref(sess) } {
        sess.priv_.set(UpperPriv::from_c(priv_));
    }
}

/// `int rtrs_srv_get_path_name(struct rtrs_srv_sess *sess, char *pathname,
/// size_t len)`.
///
/// # Safety
///
/// `sess` as for `rtrs_srv_set_sess_priv`; `pathname` has `len` writable
/// bytes.
#[no_mangle]
unsafe extern "C" fn rtrs_srv_get_path_name(
    sess: *mut ffi::rtrs_srv_sess,
    pathname: *mut c_char,
    len: usize,
) -> c_int {
    // SAFETY: a live session (function contract).
    let Some(sess) = (unsafe { sess_ref(sess) }) else {
        return EINVAL.to_errno();
    };
    if pathname.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: `len` writable bytes (function contract).
    let out = unsafe { core::slice::from_raw_parts_mut(pathname.cast::<u8>(), len) };
    match sess.connected_path_name() {
        Some(name) => {
            copy_name(name.as_bytes(), out);
            0
        }
        None => rb::errno::ENOTCONN().to_errno(),
    }
}

/// `int rtrs_srv_get_queue_depth(struct rtrs_srv_sess *sess)`.
///
/// # Safety
///
/// `sess` as for `rtrs_srv_set_sess_priv`.
#[no_mangle]
unsafe extern "C" fn rtrs_srv_get_queue_depth(sess: *mut ffi::rtrs_srv_sess) -> c_int {
    // SAFETY: a live session (function contract).
    match unsafe { sess_ref(sess) } {
        Some(sess) => sess.queue_depth as c_int,
        None => EINVAL.to_errno(),
    }
}

// Same prototypes as the kernel's rtrs.h (see `rtrs/core/abi.rs`).
const _: () = {
    #[allow(unused_assignments, dead_code)]
    fn check() {
        let mut a = ffi::rtrs_srv_open as unsafe extern "C" fn(_, _) -> _;
        a = rtrs_srv_open;
        let mut b = ffi::rtrs_srv_close as unsafe extern "C" fn(_);
        b = rtrs_srv_close;
        let mut c = ffi::rtrs_srv_resp_rdma as unsafe extern "C" fn(_, _) -> _;
        c = rtrs_srv_resp_rdma;
        let mut d = ffi::rtrs_srv_set_sess_priv as unsafe extern "C" fn(_, _);
        d = rtrs_srv_set_sess_priv;
        let mut e = ffi::rtrs_srv_get_path_name as unsafe extern "C" fn(_, _, _) -> _;
        e = rtrs_srv_get_path_name;
        let mut f = ffi::rtrs_srv_get_queue_depth as unsafe extern "C" fn(_) -> _;
        f = rtrs_srv_get_queue_depth;
        let _ = (a, b, c, d, e, f);
    }
};
