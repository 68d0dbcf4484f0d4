// SPDX-License-Identifier: GPL-2.0-or-later

//! The RTRS client API of `rtrs.h` as its user (rnbd-client) calls it, on
//! either RTRS client (ours or C's, same symbols): open a session with a
//! [`LinkHandler`], query it, take [`Permit`]s, send block requests with a
//! typed confirmation ([`IoConfirm`]) or user messages and wait for their
//! answer, poll a completion queue, close the session in `Drop`. A crate on
//! `rb`, `rb_block` and `rb_rtrs`.

use core::ops::Range;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicI32, Ordering};
use kernel::error::from_err_ptr;
use kernel::ffi::c_void;
use kernel::page::PAGE_SIZE;
use kernel::prelude::*;
use kernel::sync::{Arc, ArcBorrow};
use kernel::types::Opaque;
use rb::ffi;
use rb::net::SockAddr;
use rb_block::mq::Operations;
use rb_block::request::Request;

/// A link event of a session (`enum rtrs_clt_link_ev`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkEv {
    /// A path of a session whose paths were all down is up again.
    Reconnected,
    /// The last connected path went down.
    Disconnected,
}

/// Receives the link events of a session (`rtrs_clt_ops.link_ev`).
pub trait LinkHandler: Send + Sync + 'static {
    /// Called from RTRS work context.
    fn link_ev(this: ArcBorrow<'_, Self>, ev: LinkEv);
}

/// One path's addresses, parsed by `rtrs_addr_to_sockaddr` (of the loaded
/// rtrs-core).
pub struct PathAddr {
    src: Option<SockAddr>,
    dst: SockAddr,
}

impl PathAddr {
    /// Parses `[src@|src,]dst` with destination port `port`.
    ///
    /// C's `rtrs_addr_to_sockaddr` looks for the separator with `strchr`,
    /// past `len` up to a NUL, so it gets a NUL-terminated copy (C's
    /// rnbd-client hands it one from `match_strdup`): `addr` itself is
    /// usually part of a larger buffer, such as a `map_device` line. An
    /// `addr` with a NUL inside is `EINVAL`.
    pub fn parse(addr: &[u8], port: u16) -> Result<Self> {
        let (src, dst) = rb_rtrs::addr_bytes_to_sockaddr(addr, port)?;
        Ok(Self { src, dst })
    }
}

/// What `rtrs_clt_open` takes besides the handler.
pub struct OpenParams<'a> {
    /// The session name (no NUL).
    pub sessname: &'a [u8],
    /// Paths, at least one.
    pub paths: &'a [PathAddr],
    /// The server port of paths added later through sysfs `add_path`
    /// (those given here carry theirs).
    pub port: u16,
    /// Seconds between reconnect attempts.
    pub reconnect_delay_sec: u8,
    /// Reconnect attempts before giving up (-1: forever).
    pub max_reconnect_attempts: i16,
    /// Poll queues (connections polled with [`Clt::cq_direct`]).
    pub nr_poll_queues: u32,
}

/// What `rtrs_clt_query` returns.
#[derive(Clone, Copy, Debug)]
pub struct Attrs {
    /// Permits, i.e. requests in flight at most.
    pub queue_depth: u32,
    /// Largest request in bytes.
    pub max_io_size: u32,
    /// Most scatterlist entries per request.
    pub max_segments: u32,
}

/// The direction of a request's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// The server's answer lands in the data (an RTRS READ).
    Read,
    /// The data goes to the server (an RTRS WRITE).
    Write,
}

/// Which connection a permit is for (`enum rtrs_clt_con_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConType {
    /// The service connection, for user messages.
    Admin,
    /// An IO connection (by CPU).
    Io,
}

/// An open RTRS client session; `rtrs_clt_close` in `Drop`.
///
/// # Invariants
///
/// `sess` was returned by `rtrs_clt_open` with `priv` = `handler`, a leaked
/// `Arc` released by `drop_handler` only after the close.
pub struct Clt {
    sess: NonNull<ffi::rtrs_clt_sess>,
    handler: *const kernel::ffi::c_void,
    drop_handler: unsafe fn(*const kernel::ffi::c_void),
}

// SAFETY: the RTRS client API is thread safe.
unsafe impl Send for Clt {}
// SAFETY: as above.
unsafe impl Sync for Clt {}

/// `rtrs_clt_ops.link_ev`.
///
/// # Safety
///
/// Called by RTRS with the `priv` `Clt::open` gave it: the handler it
/// leaked, alive until after `rtrs_clt_close`.
unsafe extern "C" fn link_ev<H: LinkHandler>(
    p: *mut kernel::ffi::c_void,
    ev: ffi::rtrs_clt_link_ev,
) {
    // SAFETY: `p` is the handler leaked in `Clt::open`, released only after
    // `rtrs_clt_close`, after which no event comes.
    let h = unsafe { ArcBorrow::from_raw(p.cast::<H>()) };
    H::link_ev(
        h,
        if ev == ffi::rtrs_clt_link_ev_RTRS_CLT_LINK_EV_RECONNECTED {
            LinkEv::Reconnected
        } else {
            LinkEv::Disconnected
        },
    );
}

/// # Safety
///
/// `p` came from `Arc::<H>::into_raw` and is not used afterwards.
unsafe fn drop_arc<H: LinkHandler>(p: *const kernel::ffi::c_void) {
    // SAFETY: per the contract.
    drop(unsafe { Arc::from_raw(p.cast::<H>()) });
}

impl Clt {
    /// Opens a session (`rtrs_clt_open`): connects all paths, sleeps until
    /// one is up or all failed. The handler gets the link events until the
    /// session is closed.
    pub fn open<H: LinkHandler>(handler: Arc<H>, p: &OpenParams<'_>) -> Result<Arc<Self>> {
        if p.paths.is_empty() || p.sessname.len() >= 256 {
            return Err(EINVAL);
        }
        let mut name = KVec::with_capacity(p.sessname.len() + 1, GFP_KERNEL)?;
        name.extend_from_slice(p.sessname, GFP_KERNEL)?;
        name.push(0, GFP_KERNEL)?;
        let mut addrs = KVec::with_capacity(p.paths.len(), GFP_KERNEL)?;
        for a in p.paths {
            addrs.push(
                ffi::rtrs_addr {
                    src: a
                        .src
                        .as_ref()
                        .map_or(core::ptr::null_mut(), SockAddr::as_storage_ptr),
                    dst: a.dst.as_storage_ptr(),
                },
                GFP_KERNEL,
            )?;
        }
        let hp = Arc::into_raw(handler);
        let mut ops = ffi::rtrs_clt_ops {
            priv_: hp.cast_mut().cast(),
            link_ev: Some(link_ev::<H>),
        };
        // SAFETY: all pointers are valid for the call; RTRS copies the ops,
        // the name and the addresses.
        let sess = from_err_ptr(unsafe {
            ffi::rtrs_clt_open(
                &mut ops,
                name.as_ptr().cast(),
                addrs.as_ptr(),
                addrs.len(),
                p.port,
                0, // no RTRS PDU
                p.reconnect_delay_sec,
                p.max_reconnect_attempts,
                p.nr_poll_queues,
            )
        });
        let sess = match sess {
            Ok(s) => s,
            Err(e) => {
                // SAFETY: RTRS did not keep `hp` (open failed).
                unsafe { drop_arc::<H>(hp.cast()) };
                return Err(e);
            }
        };
        // INVARIANT: opened with `hp` as its handler; if the allocation
        // fails, `Drop` closes the session.
        let this = Self {
            // SAFETY: `from_err_ptr` gave a valid pointer.
            sess: unsafe { NonNull::new_unchecked(sess) },
            handler: hp.cast(),
            drop_handler: drop_arc::<H>,
        };
        Ok(Arc::new(this, GFP_KERNEL)?)
    }

    fn raw(&self) -> *mut ffi::rtrs_clt_sess {
        self.sess.as_ptr()
    }

    /// The session's limits (`rtrs_clt_query`); `ECOMM` if it is not
    /// connected.
    pub fn query(&self) -> Result<Attrs> {
        let mut a = ffi::rtrs_attrs::default();
        // SAFETY: open session; `a` writable.
        kernel::error::to_result(unsafe { ffi::rtrs_clt_query(self.raw(), &mut a) })?;
        Ok(Attrs {
            queue_depth: a.queue_depth,
            max_io_size: a.max_io_size,
            max_segments: a.max_segments,
        })
    }

    /// Takes a permit (`rtrs_clt_get_permit`); with `wait` sleeps for one,
    /// else `None` when all are taken.
    #[inline]
    pub fn get_permit(self: &Arc<Self>, con: ConType, wait: bool) -> Option<Permit> {
        let ct = match con {
            ConType::Admin => ffi::rtrs_clt_con_type_RTRS_ADMIN_CON,
            ConType::Io => ffi::rtrs_clt_con_type_RTRS_IO_CON,
        };
        let w = if wait {
            ffi::wait_type_RTRS_PERMIT_WAIT
        } else {
            ffi::wait_type_RTRS_PERMIT_NOWAIT
        };
        // SAFETY: open session.
        let p = unsafe { ffi::rtrs_clt_get_permit(self.raw(), ct, w) };
        // INVARIANT: a permit of this session.
        NonNull::new(p).map(|permit| Permit {
            clt: self.clone(),
            permit,
        })
    }

    /// Polls the completion queue of connection `index`
    /// (`rtrs_clt_rdma_cq_direct`); returns the completions.
    #[inline]
    pub fn cq_direct(&self, index: u32) -> i32 {
        // SAFETY: open session; RTRS checks the index.
        unsafe { ffi::rtrs_clt_rdma_cq_direct(self.raw(), index) }
    }

    /// Sends block request `rq` (`rtrs_clt_request`) with the user message
    /// `msg` and the request's scatterlist (`sg_cnt` entries mapped by
    /// [`Request::map_sg`], `len` bytes). `T::confirm` gets it back with
    /// the result. On error the request comes back with the errno.
    pub fn request<T: IoConfirm>(
        &self,
        rq: Request<T>,
        sg_cnt: u32,
        len: usize,
        msg: &[u8],
    ) -> core::result::Result<(), (Request<T>, Error)>
    where
        T::Pdu: IoPdu,
    {
        let permit = match rq.pdu().permit() {
            Some(p) if core::ptr::eq(&*p.clt, self) => p.permit.as_ptr(),
            _ => return Err((rq, EINVAL)),
        };
        let dir = i32::from(rq.is_write());
        let sgl = rq.sgl();
        let vec = ffi::kvec {
            iov_base: msg.as_ptr().cast_mut().cast(),
            iov_len: msg.len(),
        };
        let raw = rq.into_raw();
        let mut ops = ffi::rtrs_clt_req_ops {
            priv_: raw.cast(),
            conf_fn: Some(io_conf::<T>),
        };
        // SAFETY: the permit is this session's and lives in the request's
        // PDU, as does the scatterlist; both stay valid until `io_conf`
        // gives the request back. RTRS copies `msg` and `ops`.
        let ret = unsafe {
            ffi::rtrs_clt_request(dir, &mut ops, self.raw(), permit, &vec, 1, len, sgl, sg_cnt)
        };
        if ret != 0 {
            // SAFETY: on error RTRS did not keep the request.
            return Err((unsafe { Request::from_raw(raw) }, Error::from_errno(ret)));
        }
        Ok(())
    }

    /// Sends user message `msg` and waits for its confirmation; with `rsp`
    /// the server writes its answer there (an RTRS READ), else nothing comes
    /// back (a WRITE). Sleeps for an admin permit. Returns the errno of the
    /// confirmation.
    pub fn send_usr_msg(self: &Arc<Self>, msg: &[u8], rsp: Option<&mut [u8]>) -> Result {
        let rsp_len = rsp.as_ref().map_or(0, |r| r.len());
        let mut buf = KVec::from_elem(0u8, rsp_len, GFP_KERNEL)?;
        let dir = if rsp_len > 0 { Dir::Read } else { Dir::Write };
        self.request_wait(ConType::Admin, dir, msg, &mut buf, 0..rsp_len)?;
        if let Some(r) = rsp {
            r.copy_from_slice(&buf[..rsp_len]);
        }
        Ok(())
    }

    /// Sends user message `msg` on an IO connection (the current CPU's, as
    /// RTRS picks it when the permit is taken) with `buf[range]` as its
    /// data, and waits for the confirmation: a `Write` sends those bytes
    /// ahead of the message, a `Read` gets the server's answer into them.
    /// RTRS sees them as one scatterlist entry per page they touch. Sleeps
    /// for a permit. Returns the errno of the confirmation; `EINVAL` if
    /// `range` is not within `buf`, or is empty for a `Read`.
    pub fn transfer(
        self: &Arc<Self>,
        dir: Dir,
        msg: &[u8],
        buf: &mut KVec<u8>,
        range: Range<usize>,
    ) -> Result {
        if dir == Dir::Read && range.is_empty() {
            return Err(EINVAL);
        }
        self.request_wait(ConType::Io, dir, msg, buf, range)
    }

    /// What [`Clt::send_usr_msg`] and [`Clt::transfer`] share: one request
    /// over `buf[range]` on a connection of kind `con`, waited for.
    fn request_wait(
        self: &Arc<Self>,
        con: ConType,
        dir: Dir,
        msg: &[u8],
        buf: &mut KVec<u8>,
        range: Range<usize>,
    ) -> Result {
        let data = buf.get_mut(range).ok_or(EINVAL)?;
        let len = data.len();
        let start = data.as_mut_ptr() as usize;
        let nents = if len == 0 {
            0
        } else {
            (start + len - 1) / PAGE_SIZE - start / PAGE_SIZE + 1
        };
        let mut sgl = KVec::with_capacity(nents, GFP_KERNEL)?;
        for _ in 0..nents {
            sgl.push(Opaque::<ffi::scatterlist>::uninit(), GFP_KERNEL)?;
        }
        if nents > 0 {
            // SAFETY: `sgl` holds `nents` entries, which are ours.
            unsafe { ffi::sg_init_table(sgl.as_mut_ptr().cast(), nents as u32) };
        }
        let (mut at, end) = (start, start + len);
        for e in sgl.iter() {
            let piece = end.min((at & !(PAGE_SIZE - 1)) + PAGE_SIZE) - at;
            // SAFETY: `at..at + piece` lies in `data`, part of a `KVec`:
            // kmalloc memory, directly mapped, so `virt_to_page` (in
            // `sg_set_buf`) is valid for it; `piece` is at most a page.
            unsafe { ffi::sg_set_buf(e.get(), at as *const c_void, piece as u32) };
            at += piece;
        }
        let iu = Arc::new(
            UsrIu {
                done: Opaque::uninit(),
                errno: AtomicI32::new(0),
            },
            GFP_KERNEL,
        )?;
        // SAFETY: `iu` is not shared yet; the completion is initialised in
        // place, where it stays (an `Arc` never moves).
        unsafe { ffi::init_completion(iu.done.get()) };
        let permit = self.get_permit(con, true).ok_or(ENOMEM)?;
        let vec = ffi::kvec {
            iov_base: msg.as_ptr().cast_mut().cast(),
            iov_len: msg.len(),
        };
        let raw = Arc::into_raw(iu.clone());
        let mut ops = ffi::rtrs_clt_req_ops {
            priv_: raw.cast_mut().cast(),
            conf_fn: Some(usr_conf),
        };
        // The scatterlist and the data it points to (borrowed from the
        // caller) outlive the request: we wait for its confirmation below.
        // SAFETY: the permit is ours until the confirmation; so are `sgl` and
        // `data` (above); `raw` keeps `iu` alive until `usr_conf` drops it.
        // RTRS copies `msg` and `ops`.
        let ret = unsafe {
            ffi::rtrs_clt_request(
                i32::from(dir == Dir::Write),
                &mut ops,
                self.raw(),
                permit.permit.as_ptr(),
                &vec,
                1,
                len,
                if nents > 0 {
                    sgl.as_mut_ptr().cast()
                } else {
                    core::ptr::null_mut()
                },
                nents as u32,
            )
        };
        if ret != 0 {
            // SAFETY: RTRS did not keep `raw`.
            drop(unsafe { Arc::from_raw(raw) });
            return Err(Error::from_errno(ret));
        }
        // SAFETY: initialised above; `usr_conf` completes it once. Not
        // interruptible: RTRS uses the data until then.
        unsafe { ffi::wait_for_completion(iu.done.get()) };
        drop(permit);
        let errno = iu.errno.load(Ordering::Acquire);
        if errno != 0 {
            return Err(Error::from_errno(errno));
        }
        Ok(())
    }
}

impl Drop for Clt {
    // Inline: only a module that uses a `Clt` instantiates it, so the other
    // modules sharing rust-bindings do not reference `rtrs_clt_close`.
    fn drop(&mut self) {
        // SAFETY: open session (invariant); after the close no link event
        // comes, so the handler can go.
        unsafe {
            ffi::rtrs_clt_close(self.raw());
            (self.drop_handler)(self.handler);
        }
    }
}

/// A request of [`Clt::request_wait`] in flight: what its confirmation
/// tells the waiter.
struct UsrIu {
    done: Opaque<ffi::completion>,
    errno: AtomicI32,
}

// SAFETY: the C parts are only touched through the completion API and by
// RTRS; the rest is atomic or written before sharing.
unsafe impl Send for UsrIu {}
// SAFETY: as above.
unsafe impl Sync for UsrIu {}

/// The confirmation of a user message (`rtrs_clt_req_ops.conf_fn`).
///
/// # Safety
///
/// Called by RTRS once, with the `priv` `send_usr_msg` gave it: a reference
/// to a `UsrIu` leaked for RTRS.
unsafe extern "C" fn usr_conf(p: *mut kernel::ffi::c_void, errno: kernel::ffi::c_int) {
    // SAFETY: `p` is the reference `send_usr_msg` leaked for RTRS.
    let iu = unsafe { Arc::from_raw(p.cast::<UsrIu>()) };
    iu.errno.store(errno, Ordering::Release);
    // SAFETY: initialised; the waiter holds its own reference.
    unsafe { ffi::complete(iu.done.get()) };
}

/// A permit of a session (`rtrs_clt_get_permit`), put back in `Drop`.
///
/// # Invariants
///
/// `permit` was taken from `clt` and is put only by `Drop`.
pub struct Permit {
    clt: Arc<Clt>,
    permit: NonNull<ffi::rtrs_permit>,
}

// SAFETY: a permit may be put from any context.
unsafe impl Send for Permit {}
// SAFETY: `&Permit` gives nothing but the session.
unsafe impl Sync for Permit {}

impl Drop for Permit {
    // Inline: as `Clt::drop`.
    fn drop(&mut self) {
        // SAFETY: ours (invariant); the session is open while we hold it.
        unsafe { ffi::rtrs_clt_put_permit(self.clt.raw(), self.permit.as_ptr()) };
    }
}

/// The PDU of a request sent with [`Clt::request`]: it holds the permit.
pub trait IoPdu {
    /// The permit taken for the request.
    fn permit(&self) -> Option<&Permit>;
}

/// Gets a block request back from RTRS with its result.
pub trait IoConfirm: Operations {
    /// Called in softirq (or polling) context with 0 or a negative errno.
    fn confirm(rq: Request<Self>, errno: i32);
}

/// The confirmation of a block request (`rtrs_clt_req_ops.conf_fn`).
///
/// # Safety
///
/// Called by RTRS once, with the `priv` `Clt::request` gave it: the block
/// request it handed to RTRS.
unsafe extern "C" fn io_conf<T: IoConfirm>(p: *mut kernel::ffi::c_void, errno: kernel::ffi::c_int)
where
    T::Pdu: IoPdu,
{
    // SAFETY: `p` is the request `Clt::request` handed to RTRS; it comes
    // back once.
    let rq = unsafe { Request::<T>::from_raw(p.cast()) };
    T::confirm(rq, errno);
}
