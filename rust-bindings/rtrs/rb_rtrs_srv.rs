// SPDX-License-Identifier: GPL-2.0-or-later

//! The RTRS server API of `rtrs.h` as its user (the RNBD server) calls it
//! (a crate on `rb`, `rb_block`): listen with
//! [`SrvCtx::open`] (`rtrs_srv_open`), get sessions and IO through a
//! [`SrvUser`], answer each IO once through its [`SrvIo`]
//! (`rtrs_srv_resp_rdma`), stop with `Drop` (`rtrs_srv_close`).
//!
//! Lifetimes, as `rtrs.h` defines them:
//!
//! - A session (`struct rtrs_srv_sess`) is RTRS's, valid from its CONNECTED
//!   link event until its DISCONNECTED one returns. The user only sees it as
//!   a [`SessRef`] borrowed for the CONNECTED callback; what it keeps is its
//!   own session data `U::Session`, an `Arc` whose reference RTRS holds as
//!   the session's private pointer until DISCONNECTED hands it back.
//! - RTRS delivers no IO of a session after or during its DISCONNECTED event,
//!   and before that event waits for every IO of the session to be answered.
//! - An IO id (`struct rtrs_srv_op`) and the chunk its data and message are
//!   in stay valid until the IO is answered, which [`SrvIo`] does exactly
//!   once.

use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use kernel::ffi::{c_int, c_void};
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};
use kernel::types::Opaque;
use rb::ffi;
use rb::__LOG_PREFIX;
use rb_block::bio::BioBuffer;

/// The user of an RTRS server: its per-session data and its callbacks
/// (`struct rtrs_srv_ops`). There is no user context pointer in the C API,
/// so the callbacks are associated functions; keep module state in statics.
pub trait SrvUser: 'static {
    /// The user's data for one session.
    type Session: Send + Sync + 'static;

    /// A session came up (`RTRS_SRV_LINK_EV_CONNECTED`). Its data, or the
    /// errno that refuses the session. May sleep.
    fn connected(sess: &SessRef<Self>) -> Result<Arc<Self::Session>>;

    /// The session went down (`RTRS_SRV_LINK_EV_DISCONNECTED`): no more IO
    /// comes for it and all of its IO was answered. May sleep.
    fn disconnected(sess: Arc<Self::Session>);

    /// A request arrived (`rdma_ev`): `usr` is the client's message (valid
    /// for this call), `io` the data and the id to answer, now or later, from
    /// any context. Runs in process context and may sleep.
    fn rdma_ev(sess: ArcBorrow<'_, Self::Session>, io: SrvIo<Self>, usr: &[u8]);
}

/// A session of the RTRS server, borrowed during its CONNECTED event.
///
/// Typed by the user it is handed to, as [`SrvIo`] is.
#[repr(transparent)]
pub struct SessRef<U: SrvUser + ?Sized>(Opaque<ffi::rtrs_srv_sess>, PhantomData<fn(&U)>);

impl<U: SrvUser + ?Sized> SessRef<U> {
    fn as_ptr(&self) -> *mut ffi::rtrs_srv_sess {
        self.0.get()
    }

    /// Writes the session's name (`rtrs_srv_get_path_name`: the name the
    /// client gave), NUL-terminated, into `buf` and returns it without the
    /// NUL.
    pub fn path_name<'b>(&self, buf: &'b mut [u8]) -> Result<&'b [u8]> {
        // SAFETY: a live session (borrowed during its CONNECTED event);
        // `buf` has `buf.len()` writable bytes.
        let ret = unsafe {
            ffi::rtrs_srv_get_path_name(self.as_ptr(), buf.as_mut_ptr().cast(), buf.len())
        };
        kernel::error::to_result(ret)?;
        let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        Ok(&buf[..n])
    }

    /// The session's queue depth (`rtrs_srv_get_queue_depth`).
    pub fn queue_depth(&self) -> i32 {
        // SAFETY: a live session, as above.
        unsafe { ffi::rtrs_srv_get_queue_depth(self.as_ptr()) }
    }
}

/// One IO from a client: the id RTRS wants answered and the data part of
/// its chunk (what the client wrote, or room for what it reads).
///
/// Answer it with [`SrvIo::respond`]; dropping it unanswered answers `EIO`
/// and logs it.
///
/// # Invariants
///
/// `id` is an IO id RTRS handed to `rdma_ev` and not yet answered; `data`
/// is its chunk's data part of `len` bytes (directly mapped, contiguous),
/// valid and not used by RTRS until the answer.
#[must_use = "an IO must be answered (respond), or the client waits for EIO"]
pub struct SrvIo<U: SrvUser + ?Sized> {
    id: NonNull<ffi::rtrs_srv_op>,
    data: *mut u8,
    len: usize,
    _user: PhantomData<fn(&U)>,
}

// SAFETY: `rtrs_srv_resp_rdma` may be called from any context (the C RNBD
// server calls it from bio completion); the chunk is plain memory.
unsafe impl<U: SrvUser + ?Sized> Send for SrvIo<U> {}

impl<U: SrvUser + ?Sized> SrvIo<U> {
    /// Bytes of data.
    pub fn data_len(&self) -> usize {
        self.len
    }

    /// The data: what the client wrote, or where to put what it reads (an
    /// RNBD response message, for SESS_INFO and OPEN).
    pub fn data_mut(&mut self) -> &mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: `data..data + len` is ours until the answer (type
        // invariant), which consumes `self`.
        unsafe { core::slice::from_raw_parts_mut(self.data, self.len) }
    }

    /// Answers the IO: `Ok` or the errno the client gets.
    pub fn respond(self, status: Result) {
        let this = ManuallyDrop::new(self);
        let errno = match status {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        };
        // SAFETY: an unanswered id (type invariant); `this` is not dropped,
        // so it is answered once.
        unsafe { ffi::rtrs_srv_resp_rdma(this.id.as_ptr(), errno) };
    }
}

impl<U: SrvUser + ?Sized> Drop for SrvIo<U> {
    fn drop(&mut self) {
        pr_err!("rtrs server IO dropped unanswered, answering EIO\n");
        // SAFETY: an unanswered id (type invariant), answered once here.
        unsafe { ffi::rtrs_srv_resp_rdma(self.id.as_ptr(), EIO.to_errno()) };
    }
}

// SAFETY: the chunk's data part is directly mapped, physically contiguous
// memory (RTRS allocates chunks with `alloc_pages`), fixed for the life of
// the value, which owns it until the answer; `len` is at most the chunk
// size (a u32 on the wire).
unsafe impl<U: SrvUser + ?Sized> BioBuffer for SrvIo<U> {
    fn bio_buffer(&self) -> (*mut u8, usize) {
        (self.data, self.len)
    }
}

/// The `rtrs_srv_ops` of `U`.
struct Ops<U>(PhantomData<U>);

impl<U: SrvUser> Ops<U> {
    const OPS: ffi::rtrs_srv_ops = ffi::rtrs_srv_ops {
        rdma_ev: Some(rdma_ev::<U>),
        link_ev: Some(link_ev::<U>),
    };
}

/// `rdma_ev` of `U`.
///
/// # Safety
///
/// Called by RTRS as `rtrs.h` documents: `priv_` is what `link_ev::<U>`
/// set for the session (an `Arc<U::Session>` it owns until DISCONNECTED),
/// `id` an unanswered IO whose chunk holds `datalen` bytes of data at
/// `data` followed by `usrlen` bytes of message at `usr`.
unsafe extern "C" fn rdma_ev<U: SrvUser>(
    priv_: *mut c_void,
    id: *mut ffi::rtrs_srv_op,
    data: *mut c_void,
    datalen: usize,
    usr: *const c_void,
    usrlen: usize,
) -> c_int {
    let Some(id) = NonNull::new(id) else {
        return EINVAL.to_errno();
    };
    if priv_.is_null() {
        // RTRS answers the IO with our error.
        pr_err!("rtrs server IO on a session without data\n");
        return ENODEV.to_errno();
    }
    // SAFETY: `priv_` came from `Arc::into_raw` in `link_ev`, and the
    // reference it stands for is released only at DISCONNECTED, which does
    // not run during IO (function contract).
    let sess = unsafe { ArcBorrow::from_raw(priv_.cast::<U::Session>()) };
    // INVARIANT: an unanswered id and its chunk's data (function contract).
    let io = SrvIo::<U> {
        id,
        data: data.cast(),
        len: if data.is_null() { 0 } else { datalen },
        _user: PhantomData,
    };
    let usr = if usr.is_null() || usrlen == 0 {
        &[][..]
    } else {
        // SAFETY: `usrlen` readable bytes, valid until the answer and so
        // for this call (the IO is answered at the earliest inside it).
        unsafe { core::slice::from_raw_parts(usr.cast::<u8>(), usrlen) }
    };
    U::rdma_ev(sess, io, usr);
    0
}

/// `link_ev` of `U`.
///
/// # Safety
///
/// Called by RTRS as `rtrs.h` documents: `sess` is valid during the call;
/// for DISCONNECTED, `priv_` is what this function set at CONNECTED.
unsafe extern "C" fn link_ev<U: SrvUser>(
    sess: *mut ffi::rtrs_srv_sess,
    ev: ffi::rtrs_srv_link_ev,
    priv_: *mut c_void,
) -> c_int {
    match ev {
        ffi::rtrs_srv_link_ev_RTRS_SRV_LINK_EV_CONNECTED => {
            if sess.is_null() {
                return EINVAL.to_errno();
            }
            // SAFETY: valid during the event (function contract).
            let sref = unsafe { &*sess.cast::<SessRef<U>>() };
            match U::connected(sref) {
                Ok(data) => {
                    // SAFETY: a live session; RTRS keeps the pointer and
                    // passes it back, and the reference it stands for is
                    // taken back at DISCONNECTED.
                    unsafe {
                        ffi::rtrs_srv_set_sess_priv(sess, Arc::into_raw(data).cast_mut().cast())
                    };
                    0
                }
                Err(e) => e.to_errno(),
            }
        }
        ffi::rtrs_srv_link_ev_RTRS_SRV_LINK_EV_DISCONNECTED => {
            if priv_.is_null() {
                pr_warn!("rtrs server session down without data\n");
                return EINVAL.to_errno();
            }
            // SAFETY: the reference `Arc::into_raw` made at CONNECTED, which
            // RTRS hands back once, at the session's end.
            let data = unsafe { Arc::from_raw(priv_.cast::<U::Session>()) };
            U::disconnected(data);
            0
        }
        _ => {
            pr_warn!("Received unknown RTRS session event {}\n", ev);
            EINVAL.to_errno()
        }
    }
}

/// A listening RTRS server (`struct rtrs_srv_ctx`) that reports to `U`,
/// closed (`rtrs_srv_close`) in `Drop`.
///
/// # Invariants
///
/// `ctx` came from a successful `rtrs_srv_open` with `Ops::<U>::OPS` and is
/// closed only by `Drop`.
pub struct SrvCtx<U: SrvUser> {
    ctx: NonNull<ffi::rtrs_srv_ctx>,
    _user: PhantomData<fn(&U)>,
}

// SAFETY: the context is only passed back to `rtrs_srv_close`, from any
// thread.
unsafe impl<U: SrvUser> Send for SrvCtx<U> {}
// SAFETY: `&SrvCtx` gives access to nothing.
unsafe impl<U: SrvUser> Sync for SrvCtx<U> {}

impl<U: SrvUser> SrvCtx<U> {
    /// Listens on `port` (`rtrs_srv_open`).
    pub fn open(port: u16) -> Result<Self> {
        let ops: &'static ffi::rtrs_srv_ops = &Ops::<U>::OPS;
        // SAFETY: `ops` is a static table that RTRS reads (C copies it);
        // its callbacks are the trampolines of `U`.
        let ctx = kernel::error::from_err_ptr(unsafe {
            ffi::rtrs_srv_open(core::ptr::from_ref(ops).cast_mut(), port)
        })?;
        // INVARIANT: a successful open, with `Ops::<U>::OPS`.
        Ok(Self {
            ctx: NonNull::new(ctx).ok_or(EINVAL)?,
            _user: PhantomData,
        })
    }
}

impl<U: SrvUser> Drop for SrvCtx<U> {
    fn drop(&mut self) {
        // SAFETY: opened and not yet closed (type invariant). It closes all
        // sessions (their DISCONNECTED events run in it) and stops listening.
        unsafe { ffi::rtrs_srv_close(self.ctx.as_ptr()) };
    }
}
