// SPDX-License-Identifier: GPL-2.0-or-later

//! The C ABI that `rtrs-client` exports (`rtrs.h`): `rtrs_clt_open`,
//! `rtrs_clt_close`, `rtrs_clt_get_permit`, `rtrs_clt_put_permit`,
//! `rtrs_clt_request`, `rtrs_clt_rdma_cq_direct`, `rtrs_clt_query`; and what
//! the client gets from its C user: the link event callback, the
//! confirmation of each IO, the user's message and its scatterlist.
//!
//! The one place of this module with `unsafe`: each entry point turns its C
//! caller's pointers into safe values under the contract its `# Safety`
//! section states, then calls the session ([`super::sess::Sess`]). The
//! `EXPORT_SYMBOL` lines are in `exports.c` beside this file.
//!
//! The C user holds two kinds of pointers into the client: the session (an
//! `Arc` handed over by `open` and taken back by `close`) and permits, slots
//! of a [`Permits`] pool that the session owns and frees only after every
//! permit is back.

use super::chunks::{ChunkPool, CloseFence};
use super::sess::Sess;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, AtomicUsize};
use kernel::alloc::{flags::GFP_KERNEL, KVec};
use kernel::ffi::{c_char, c_int, c_uint};
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::ffi;
use rb::net::SockAddr;
use rb_rdma::BorrowedSg;
use rtrs_common::name::NameBuf;
use rtrs_proto::chunks::{permits_for, words_for, Bitmap};

/// A link event for the upper layer (`enum rtrs_clt_link_ev`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CltLinkEv {
    /// A path is up again after all were down.
    Reconnected,
    /// The last path went down.
    Disconnected,
}

/// The upper layer's link event callback (`struct rtrs_clt_ops`).
pub(crate) struct LinkOps(ffi::rtrs_clt_ops);

// SAFETY: a C callback and the pointer it gets back, callable anywhere.
unsafe impl Send for LinkOps {}
// SAFETY: as above.
unsafe impl Sync for LinkOps {}

impl LinkOps {
    /// Tells the upper layer.
    pub(crate) fn link_ev(&self, ev: CltLinkEv) {
        let ev = match ev {
            CltLinkEv::Reconnected => ffi::rtrs_clt_link_ev_RTRS_CLT_LINK_EV_RECONNECTED,
            CltLinkEv::Disconnected => ffi::rtrs_clt_link_ev_RTRS_CLT_LINK_EV_DISCONNECTED,
        };
        if let Some(f) = self.0.link_ev {
            // SAFETY: the user's callback with the user's pointer.
            unsafe { f(self.0.priv_, ev) };
        }
    }
}

/// Kind of connection a permit is for (`enum rtrs_clt_con_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConType {
    /// The service connection (cid 0).
    Admin,
    /// The IO connection of the permit's CPU.
    Io,
}

/// A permit as C sees it (`struct rtrs_permit` of `rtrs-clt.h`), followed
/// by `pdu_sz` bytes for the user.
#[repr(C)]
struct PermitC {
    con_type: u32,
    cpu_id: u32,
    mem_id: u32,
    mem_off: u32,
}

/// The permits of a session: as many as the server has chunks, taken by
/// the user for each IO and given back after its confirmation, often from
/// softirq (`permits`, `permits_map`, `permits_wait`). Each taken permit
/// holds a chunk of `chunks`, its own while no chunk is fenced, until its
/// IO fails over from a path whose close is not confirmed: then the chunk
/// goes to that path's fence and the permit moves to a free one
/// ([`Permits::move_out`], [`Permits::move_to`]). Taking and giving back
/// are lock-free; a taker that finds no permit or no chunk sleeps in
/// `chunks`.
///
/// # Invariants
///
/// `mem` holds `n` `PermitC`s, `stride` bytes apart, at fixed addresses.
/// `con_type`/`cpu_id` of a permit are written only by the holder of its
/// bit in `map`, when it takes it; `mem_id`/`mem_off` too, and while its
/// IO is in flight (between `rtrs_clt_request` and the confirmation, when
/// neither the user nor the request path reads them) by its failover.
/// `mem_id` is [`NO_CHUNK`] or a chunk the permit holds in `chunks`.
#[pin_data]
pub(crate) struct Permits {
    mem: KVec<u64>,
    stride: usize,
    n: usize,
    map: Bitmap<KVec<AtomicUsize>>,
    /// The server's chunks, and where takers wait (`close` too).
    #[pin]
    chunks: ChunkPool,
}

// SAFETY: the permit memory is written by bit holders only (invariant); the
// rest are atomics, a lock and a wait queue.
unsafe impl Send for Permits {}
// SAFETY: as above.
unsafe impl Sync for Permits {}

/// `mem_id` of a permit that holds no chunk: its IO's chunk went to a fence
/// and the IO found no path to fail over to.
const NO_CHUNK: u32 = u32::MAX;

/// A permit held by the caller, by index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PermitId(u32);

impl Permits {
    /// The permits of session `sess` of `chunks` chunks (one fewer: see
    /// [`permits_for`]), each followed by `pdu_sz` bytes; chunk `c` is at
    /// `c << mem_shift` in the IMM payload.
    pub(crate) fn new(
        sess: NameBuf,
        chunks: u32,
        pdu_sz: usize,
        mem_shift: u32,
        answering: Arc<AtomicU32>,
    ) -> impl PinInit<Self, Error> {
        let count = permits_for(chunks);
        let words = words_for(count as usize);
        try_pin_init!(Self {
            stride: (core::mem::size_of::<PermitC>() + pdu_sz).next_multiple_of(8),
            n: count as usize,
            mem: Self::alloc(count, pdu_sz)?,
            map: {
                let mut m = KVec::with_capacity(words, GFP_KERNEL)?;
                for _ in 0..words {
                    m.push(AtomicUsize::new(0), GFP_KERNEL)?;
                }
                Bitmap::new(m, count as usize).ok_or(EINVAL)?
            },
            chunks <- ChunkPool::new(sess, chunks, mem_shift, answering),
        }? Error)
    }

    fn alloc(n: u32, pdu_sz: usize) -> Result<KVec<u64>> {
        let stride = (core::mem::size_of::<PermitC>() + pdu_sz).next_multiple_of(8);
        let words = (stride / 8).checked_mul(n as usize).ok_or(EINVAL)?;
        // Zeroed: every permit starts with no chunk until taken.
        Ok(KVec::from_elem(0u64, words.max(1), GFP_KERNEL)?)
    }

    fn slot(&self, i: usize) -> *mut PermitC {
        // SAFETY: `i < n`, within `mem` (invariant); computing the address.
        unsafe {
            self.mem
                .as_ptr()
                .cast::<u8>()
                .add(i * self.stride)
                .cast::<PermitC>()
                .cast_mut()
        }
    }

    /// Sets the chunk permit `p` holds (`mem_id`, `mem_off`).
    fn set_chunk(&self, p: PermitId, c: u32) {
        let off = if c == NO_CHUNK {
            0
        } else {
            self.chunks.mem_off(c)
        };
        // SAFETY: the caller holds `p`'s bit, or `p`'s IO is in flight and
        // the caller fails it over (invariant): nobody else reads or writes
        // these fields now.
        unsafe {
            (*self.slot(p.0 as usize)).mem_id = c;
            (*self.slot(p.0 as usize)).mem_off = off;
        }
    }

    /// Takes a free permit and a chunk, if there are (`__rtrs_get_permit`).
    fn try_get(&self, con_type: ConType, cpu: u32) -> Option<PermitId> {
        let i = self.map.take_any()?;
        let Some(c) = self.chunks.take(i as u32) else {
            self.map.put(i);
            return None;
        };
        let p = PermitId(i as u32);
        // SAFETY: we hold bit `i`: only we write its permit.
        unsafe {
            (*self.slot(i)).cpu_id = cpu;
            (*self.slot(i)).con_type = con_type as u32;
        }
        self.set_chunk(p, c);
        Some(p)
    }

    /// Takes a permit for `con_type` on CPU `cpu`; if none (or no chunk) is
    /// free and `wait`, sleeps until one is given back.
    pub(crate) fn get(&self, con_type: ConType, cpu: u32, wait: bool) -> Option<PermitId> {
        if let Some(p) = self.try_get(con_type, cpu) {
            return Some(p);
        }
        if !wait {
            // Chunks of fences past their deadline may be all that is
            // missing; only a taker that finds none lifts those.
            return self
                .chunks
                .lift_expired()
                .then(|| self.try_get(con_type, cpu))
                .flatten();
        }
        Some(self.chunks.wait_for(|| self.try_get(con_type, cpu)))
    }

    /// Gives permit `p` and its chunk back; false if it was not taken.
    pub(crate) fn put(&self, p: PermitId) -> bool {
        if p.0 as usize >= self.n {
            return false;
        }
        // Read while we hold `p`: once its bit is free, a taker writes it.
        let c = self.chunk(p);
        if !self.map.put(p.0 as usize) {
            return false;
        }
        if c != NO_CHUNK {
            self.chunks.put(c);
        }
        self.chunks.wake();
        true
    }

    /// The chunk permit `p` holds ([`NO_CHUNK`] if none).
    pub(crate) fn chunk(&self, p: PermitId) -> u32 {
        // SAFETY: `p` is in range (it came from `get`); its fields change
        // only while nobody else reads them (invariant).
        unsafe { (*self.slot(p.0 as usize)).mem_id }
    }

    /// The chunks, for fencing and lifting.
    pub(crate) fn chunks(&self) -> &ChunkPool {
        &self.chunks
    }

    /// The IO of permit `p` leaves its chunk to the close's fence; the
    /// permit holds no chunk until
    /// [`Permits::move_to`]. False (and nothing changes) if `p` held no
    /// chunk or its chunk was fenced already. Only from the IO's failover.
    pub(crate) fn move_out(&self, p: PermitId, cf: &CloseFence) -> bool {
        let c = self.chunk(p);
        if c == NO_CHUNK || !self.chunks.fence(c, cf) {
            return false;
        }
        self.set_chunk(p, NO_CHUNK);
        true
    }

    /// The IO of permit `p`, which holds no chunk, takes a free one,
    /// waiting for one if none is; returns it, or `None` (the permit still
    /// holds no chunk) once `wanted` is false. Only from the IO's failover;
    /// process context.
    pub(crate) fn move_to(&self, p: PermitId, wanted: impl Fn() -> bool) -> Option<u32> {
        let c = self.chunks.take_for_failover(p.0, wanted)?;
        self.set_chunk(p, c);
        Some(c)
    }

    /// Whether no permit is taken.
    pub(crate) fn all_free(&self) -> bool {
        self.map.all_free()
    }

    /// Sleeps until every permit is back (`free_permits`).
    pub(crate) fn wait_all_free(&self) {
        self.chunks.wait_for(|| self.all_free().then_some(()));
    }

    /// What a taken permit says: connection kind, CPU, chunk offset.
    pub(crate) fn info(&self, p: PermitId) -> (ConType, u32, u32) {
        // SAFETY: `p` is in range (it came from `get`); its fields are only
        // written while nobody else reads them (invariant).
        let c = unsafe { &*self.slot(p.0 as usize) };
        let t = if c.con_type == ffi::rtrs_clt_con_type_RTRS_IO_CON {
            ConType::Io
        } else {
            ConType::Admin
        };
        (t, c.cpu_id, c.mem_off)
    }

    /// The C pointer of permit `p`.
    pub(crate) fn to_c(&self, p: PermitId) -> *mut ffi::rtrs_permit {
        self.slot(p.0 as usize).cast()
    }

    /// The permit a C pointer names, if it is one of ours.
    pub(crate) fn from_c(&self, p: *mut ffi::rtrs_permit) -> Option<PermitId> {
        let base = self.mem.as_ptr() as usize;
        let off = (p as usize).checked_sub(base)?;
        // Checked: a plain division by a runtime value leaves a panic path
        // 6.12's objtool cannot see.
        let i = off.checked_div(self.stride)?;
        if off.checked_rem(self.stride)? != 0 || i >= self.n {
            return None;
        }
        Some(PermitId(i as u32))
    }
}

/// The confirmation of one IO (`struct rtrs_clt_req_ops`): called exactly
/// once, when the IO is done or failed.
pub(crate) struct Confirm(ffi::rtrs_clt_req_ops);

// SAFETY: a C callback and its pointer, callable from any context.
unsafe impl Send for Confirm {}
// SAFETY: as above.
unsafe impl Sync for Confirm {}

impl Confirm {
    /// Confirms the IO with `errno` (0 or negative).
    pub(crate) fn confirm(self, errno: i32) {
        if let Some(f) = self.0.conf_fn {
            // SAFETY: the user's callback with the user's pointer, once
            // (`self` is consumed).
            unsafe { f(self.0.priv_, errno) };
        }
    }
}

/// The user's message of an IO (`const struct kvec *vec, size_t nr`), only
/// valid during `rtrs_clt_request`.
pub(crate) struct UsrMsg<'a> {
    vec: &'a [ffi::kvec],
}

impl UsrMsg<'_> {
    /// Its total length.
    pub(crate) fn len(&self) -> usize {
        self.vec.iter().map(|v| v.iov_len).sum()
    }

    /// Copies it into `out`, which must be large enough; returns the length.
    pub(crate) fn copy_into(&self, out: &mut [u8]) -> Result<usize> {
        let mut off = 0usize;
        for v in self.vec {
            let end = off
                .checked_add(v.iov_len)
                .filter(|e| *e <= out.len())
                .ok_or_else(rb::errno::EMSGSIZE)?;
            if v.iov_len > 0 {
                // SAFETY: `iov_base` has `iov_len` readable bytes for the
                // duration of `rtrs_clt_request` (its contract).
                let src =
                    unsafe { core::slice::from_raw_parts(v.iov_base.cast::<u8>(), v.iov_len) };
                out[off..end].copy_from_slice(src);
            }
            off = end;
        }
        Ok(off)
    }
}

/// Direction of an IO (`READ`/`WRITE` of `rtrs_clt_request`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    /// The server sends data into the user's scatterlist.
    Read,
    /// The user's data goes to the server.
    Write,
}

/// One IO as the user asked for it.
pub(crate) struct Request<'a> {
    /// Direction.
    pub(crate) dir: Dir,
    /// The permit it was given, which holds its chunk on the server.
    pub(crate) permit: PermitId,
    /// The user's message, sent with it.
    pub(crate) usr: UsrMsg<'a>,
    /// Length of the data.
    pub(crate) data_len: usize,
    /// The data's pages, if any.
    pub(crate) sg: Option<BorrowedSg>,
    /// The confirmation.
    pub(crate) conf: Confirm,
}

/// Session attributes (`struct rtrs_attrs`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Attrs {
    /// Permits (server chunks).
    pub(crate) queue_depth: u32,
    /// Largest IO.
    pub(crate) max_io_size: u32,
    /// Largest scatterlist.
    pub(crate) max_segments: u32,
}

/// How `rtrs_clt_open` was called.
pub(crate) struct OpenArgs<'a> {
    /// The session name (`pathname`).
    pub(crate) sessname: &'a CStr,
    /// `(src, dst)` of each path.
    pub(crate) paths: KVec<(Option<SockAddr>, SockAddr)>,
    /// The server port.
    pub(crate) port: u16,
    /// Bytes after each permit for the user.
    pub(crate) pdu_sz: usize,
    /// Seconds between reconnect attempts.
    pub(crate) reconnect_delay_sec: u8,
    /// Reconnect attempts before a path gives up; -1 forever.
    pub(crate) max_reconnect_attempts: i16,
    /// Polled IO connections per path.
    pub(crate) nr_poll_queues: u32,
    /// The upper layer's link callback.
    pub(crate) link: LinkOps,
}

/// Builds the arguments of `rtrs_clt_open`.
///
/// # Safety
///
/// The pointers are `rtrs_clt_open`'s: `ops` valid, `pathname` a C string,
/// `paths` an array of `path_cnt` valid `rtrs_addr` (with a possibly null
/// `src`).
pub(crate) unsafe fn open_args<'a>(
    ops: *const ffi::rtrs_clt_ops,
    pathname: *const c_char,
    paths: *const ffi::rtrs_addr,
    path_cnt: usize,
    port: u16,
    pdu_sz: usize,
    reconnect_delay_sec: u8,
    max_reconnect_attempts: i16,
    nr_poll_queues: u32,
) -> Result<OpenArgs<'a>> {
    if ops.is_null() || pathname.is_null() || (paths.is_null() && path_cnt > 0) {
        return Err(EINVAL);
    }
    let mut v = KVec::with_capacity(path_cnt, GFP_KERNEL)?;
    for i in 0..path_cnt {
        // SAFETY: `path_cnt` valid entries (function contract).
        let p = unsafe { &*paths.add(i) };
        if p.dst.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: non-null members point to valid addresses.
        let (src, dst) = unsafe {
            (
                (!p.src.is_null()).then(|| SockAddr::from_c(p.src.cast())),
                SockAddr::from_c(p.dst.cast()),
            )
        };
        v.push((src, dst), GFP_KERNEL)?;
    }
    Ok(OpenArgs {
        // SAFETY: a C string (function contract).
        sessname: unsafe { CStr::from_char_ptr(pathname) },
        paths: v,
        port,
        pdu_sz,
        reconnect_delay_sec,
        max_reconnect_attempts,
        nr_poll_queues,
        // SAFETY: valid (function contract); a plain copy.
        link: LinkOps(unsafe { core::ptr::read(ops) }),
    })
}

/// Builds a [`Request`] from `rtrs_clt_request`'s arguments.
///
/// # Safety
///
/// As `rtrs_clt_request`: `ops` valid; `vec` an array of `nr` kvecs valid
/// during the call; `sg` `sg_cnt` entries valid until the confirmation.
pub(crate) unsafe fn request_args<'a>(
    dir: i32,
    ops: *const ffi::rtrs_clt_req_ops,
    permit: PermitId,
    vec: *const ffi::kvec,
    nr: usize,
    data_len: usize,
    sg: *mut ffi::scatterlist,
    sg_cnt: u32,
) -> Result<Request<'a>> {
    if ops.is_null() || (vec.is_null() && nr > 0) {
        return Err(EINVAL);
    }
    Ok(Request {
        dir: if dir == 0 { Dir::Read } else { Dir::Write },
        permit,
        usr: UsrMsg {
            vec: if nr == 0 {
                &[]
            } else {
                // SAFETY: `nr` valid kvecs for the call (function contract).
                unsafe { core::slice::from_raw_parts(vec, nr) }
            },
        },
        data_len,
        sg: NonNull::new(sg).filter(|_| sg_cnt > 0).map(|sgl| {
            // SAFETY: `sg_cnt` entries, valid and left alone by the user
            // until the confirmation (function contract), which comes after
            // the client dropped them and their mapping.
            unsafe { BorrowedSg::from_raw(sgl, sg_cnt) }
        }),
        // SAFETY: valid (function contract); a plain copy.
        conf: Confirm(unsafe { core::ptr::read(ops) }),
    })
}

/// `rtrs_clt_open()`.
///
/// # Safety
///
/// As in `rtrs.h`: valid `ops`, `pathname`, and `path_cnt` paths.
#[no_mangle]
unsafe extern "C" fn rtrs_clt_open(
    ops: *mut ffi::rtrs_clt_ops,
    pathname: *const c_char,
    paths: *const ffi::rtrs_addr,
    path_cnt: usize,
    port: u16,
    pdu_sz: usize,
    reconnect_delay_sec: u8,
    max_reconnect_attempts: i16,
    nr_poll_queues: u32,
) -> *mut ffi::rtrs_clt_sess {
    // SAFETY: the caller's arguments (function contract).
    let args = unsafe {
        open_args(
            ops,
            pathname,
            paths,
            path_cnt,
            port,
            pdu_sz,
            reconnect_delay_sec,
            max_reconnect_attempts,
            nr_poll_queues,
        )
    };
    match args.and_then(Sess::open) {
        Ok(s) => Arc::into_raw(s).cast_mut().cast(),
        Err(e) => e.to_ptr(),
    }
}

/// `rtrs_clt_close()`.
///
/// # Safety
///
/// `clt` came from `rtrs_clt_open` and is closed once.
#[no_mangle]
unsafe extern "C" fn rtrs_clt_close(clt: *mut ffi::rtrs_clt_sess) {
    if clt.is_null() {
        return;
    }
    // SAFETY: the reference `rtrs_clt_open` handed over (function contract).
    let s = unsafe { Arc::from_raw(clt.cast::<Sess>()) };
    s.close();
}

/// The session behind a pointer `rtrs_clt_open` returned.
///
/// # Safety
///
/// `sess` is an open session (`rtrs_clt_open` returned it, `rtrs_clt_close`
/// has not been called), or null.
unsafe fn sess_ref<'a>(sess: *mut ffi::rtrs_clt_sess) -> Option<&'a Sess> {
    // SAFETY: null, or the `Arc<Sess>` that `rtrs_clt_open` leaked, alive
    // until `rtrs_clt_close` (function contract).
    unsafe { sess.cast::<Sess>().as_ref() }
}

/// `rtrs_clt_get_permit()`.
///
/// # Safety
///
/// `sess` is an open session.
#[no_mangle]
unsafe extern "C" fn rtrs_clt_get_permit(
    sess: *mut ffi::rtrs_clt_sess,
    con_type: ffi::rtrs_clt_con_type,
    wait: ffi::wait_type,
) -> *mut ffi::rtrs_permit {
    // SAFETY: an open session (function contract).
    let Some(s) = (unsafe { sess_ref(sess) }) else {
        return core::ptr::null_mut();
    };
    let t = if con_type == ffi::rtrs_clt_con_type_RTRS_IO_CON {
        ConType::Io
    } else {
        ConType::Admin
    };
    let wait = wait == ffi::wait_type_RTRS_PERMIT_WAIT;
    match s.permits.get(t, rb::cpu::current_cpu(), wait) {
        Some(id) => s.permits.to_c(id),
        None => core::ptr::null_mut(),
    }
}

/// `rtrs_clt_put_permit()`.
///
/// # Safety
///
/// `sess` is an open session.
#[no_mangle]
unsafe extern "C" fn rtrs_clt_put_permit(
    sess: *mut ffi::rtrs_clt_sess,
    permit: *mut ffi::rtrs_permit,
) {
    // SAFETY: an open session (function contract).
    let Some(s) = (unsafe { sess_ref(sess) }) else {
        return;
    };
    match s.permits.from_c(permit) {
        Some(id) if s.permits.put(id) => {}
        _ => pr_err!("rtrs_clt_put_permit: not a taken permit\n"),
    }
}

/// `rtrs_clt_request()`.
///
/// # Safety
///
/// As in `rtrs.h`: an open session, a permit of it, `nr` valid kvecs,
/// `sg_cnt` entries valid until the confirmation.
#[no_mangle]
unsafe extern "C" fn rtrs_clt_request(
    dir: c_int,
    ops: *mut ffi::rtrs_clt_req_ops,
    sess: *mut ffi::rtrs_clt_sess,
    permit: *mut ffi::rtrs_permit,
    vec: *const ffi::kvec,
    nr: usize,
    len: usize,
    sg: *mut ffi::scatterlist,
    sg_cnt: c_uint,
) -> c_int {
    // SAFETY: an open session (function contract).
    let Some(s) = (unsafe { sess_ref(sess) }) else {
        return EINVAL.to_errno();
    };
    let Some(pid) = s.permits.from_c(permit) else {
        return EINVAL.to_errno();
    };
    // SAFETY: the caller's arguments (function contract).
    let req = unsafe { request_args(dir, ops, pid, vec, nr, len, sg, sg_cnt) };
    match req.and_then(|r| s.request(r)) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `rtrs_clt_rdma_cq_direct()`.
///
/// # Safety
///
/// `clt` is an open session.
#[no_mangle]
unsafe extern "C" fn rtrs_clt_rdma_cq_direct(clt: *mut ffi::rtrs_clt_sess, index: c_uint) -> c_int {
    // SAFETY: an open session (function contract).
    match unsafe { sess_ref(clt) } {
        Some(s) => s.core.poll(index),
        None => -1,
    }
}

/// `rtrs_clt_query()`.
///
/// # Safety
///
/// `sess` is an open session, `attr` writable.
#[no_mangle]
unsafe extern "C" fn rtrs_clt_query(
    sess: *mut ffi::rtrs_clt_sess,
    attr: *mut ffi::rtrs_attrs,
) -> c_int {
    // SAFETY: an open session (function contract).
    let Some(s) = (unsafe { sess_ref(sess) }) else {
        return EINVAL.to_errno();
    };
    if attr.is_null() {
        return EINVAL.to_errno();
    }
    match s.core.query() {
        Ok(a) => {
            // SAFETY: writable (function contract).
            unsafe {
                *attr = ffi::rtrs_attrs {
                    queue_depth: a.queue_depth,
                    max_io_size: a.max_io_size,
                    max_segments: a.max_segments,
                }
            };
            0
        }
        Err(e) => e.to_errno(),
    }
}

// Same prototypes as the kernel's rtrs.h (see `rtrs/core/abi.rs`).
const _: () = {
    #[allow(unused_assignments, dead_code)]
    fn check() {
        let mut a = ffi::rtrs_clt_open as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _) -> _;
        a = rtrs_clt_open;
        let mut b = ffi::rtrs_clt_close as unsafe extern "C" fn(_);
        b = rtrs_clt_close;
        let mut c = ffi::rtrs_clt_get_permit as unsafe extern "C" fn(_, _, _) -> _;
        c = rtrs_clt_get_permit;
        let mut d = ffi::rtrs_clt_put_permit as unsafe extern "C" fn(_, _);
        d = rtrs_clt_put_permit;
        let mut e = ffi::rtrs_clt_request as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _) -> _;
        e = rtrs_clt_request;
        let mut f = ffi::rtrs_clt_rdma_cq_direct as unsafe extern "C" fn(_, _) -> _;
        f = rtrs_clt_rdma_cq_direct;
        let mut g = ffi::rtrs_clt_query as unsafe extern "C" fn(_, _) -> _;
        g = rtrs_clt_query;
        let _ = (a, b, c, d, e, f, g);
    }
};
