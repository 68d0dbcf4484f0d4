// SPDX-License-Identifier: GPL-2.0-or-later

//! A blk-mq request owned by the driver between `queue_rq` and its end: op,
//! flags, position and length, the typed PDU, the scatterlist (in the PDU,
//! chained to pooled entries while mapped), completion from any context.

use crate::mq::{sg_offset, Operations, SgArea, Status};
use core::marker::PhantomData;
use core::ptr::NonNull;
use rb::ffi;

/// A request op the driver may see (`enum req_op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqOp {
    /// `REQ_OP_READ`.
    Read,
    /// `REQ_OP_WRITE`.
    Write,
    /// `REQ_OP_FLUSH`.
    Flush,
    /// `REQ_OP_DISCARD`.
    Discard,
    /// `REQ_OP_SECURE_ERASE`.
    SecureErase,
    /// `REQ_OP_WRITE_ZEROES`.
    WriteZeroes,
    /// Any other op, with its number.
    Other(u32),
}

/// `REQ_OP_MASK`.
const REQ_OP_MASK: u32 = (1 << ffi::REQ_OP_BITS) - 1;

/// The `REQ_*` flags a driver reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReqFlags {
    /// `REQ_SYNC`.
    pub sync: bool,
    /// `REQ_FUA`.
    pub fua: bool,
    /// `REQ_PREFLUSH`.
    pub preflush: bool,
}

/// A request the driver owns: blk-mq gave it in `queue_rq` (or handed it
/// back in `complete`), and it is neither ended nor returned yet.
///
/// # Invariants
///
/// `rq` is a started-or-to-be-started request of a queue whose tag set is a
/// `TagSet<T>`, with its PDU initialised, and this value is its only owner.
pub struct Request<T: Operations> {
    rq: NonNull<ffi::request>,
    _p: PhantomData<T>,
}

// SAFETY: a request may be completed from any context; the PDU is `Send`.
unsafe impl<T: Operations> Send for Request<T> {}

impl<T: Operations> Request<T> {
    /// The request `rq`, owned again (after [`Self::into_raw`], or from
    /// blk-mq).
    ///
    /// # Safety
    ///
    /// `rq` satisfies the invariants and ownership passes to the result.
    pub unsafe fn from_raw(rq: *mut ffi::request) -> Self {
        // INVARIANT: per the contract.
        Self {
            // SAFETY: blk-mq never passes NULL requests.
            rq: unsafe { NonNull::new_unchecked(rq) },
            _p: PhantomData,
        }
    }

    /// Gives up ownership (to blk-mq or to a C context that will return it
    /// through [`Self::from_raw`]).
    pub fn into_raw(self) -> *mut ffi::request {
        let p = self.rq.as_ptr();
        core::mem::forget(self);
        p
    }

    fn raw(&self) -> *mut ffi::request {
        self.rq.as_ptr()
    }

    fn cmd_flags(&self) -> u32 {
        // SAFETY: the request is live (invariant); `cmd_flags` is stable
        // while the driver owns it.
        unsafe { (*self.raw()).cmd_flags }
    }

    /// The op (`req_op`).
    pub fn op(&self) -> ReqOp {
        match self.cmd_flags() & REQ_OP_MASK {
            ffi::req_op_REQ_OP_READ => ReqOp::Read,
            ffi::req_op_REQ_OP_WRITE => ReqOp::Write,
            ffi::req_op_REQ_OP_FLUSH => ReqOp::Flush,
            ffi::req_op_REQ_OP_DISCARD => ReqOp::Discard,
            ffi::req_op_REQ_OP_SECURE_ERASE => ReqOp::SecureErase,
            ffi::req_op_REQ_OP_WRITE_ZEROES => ReqOp::WriteZeroes,
            o => ReqOp::Other(o),
        }
    }

    /// The raw op number.
    pub fn op_raw(&self) -> u32 {
        self.cmd_flags() & REQ_OP_MASK
    }

    /// The `REQ_SYNC`, `REQ_FUA` and `REQ_PREFLUSH` flags.
    pub fn flags(&self) -> ReqFlags {
        let f = self.cmd_flags();
        let bit = |b: u32| f & (1 << b) != 0;
        ReqFlags {
            sync: bit(ffi::req_flag_bits___REQ_SYNC),
            fua: bit(ffi::req_flag_bits___REQ_FUA),
            preflush: bit(ffi::req_flag_bits___REQ_PREFLUSH),
        }
    }

    /// Whether data goes to the device (`rq_data_dir == WRITE`: odd ops).
    pub fn is_write(&self) -> bool {
        self.op_raw() & 1 != 0
    }

    /// The first sector (`blk_rq_pos`).
    pub fn sector(&self) -> u64 {
        // SAFETY: live request (invariant).
        unsafe { (*self.raw()).__sector }
    }

    /// Bytes left (`blk_rq_bytes`).
    pub fn bytes(&self) -> u32 {
        // SAFETY: live request (invariant).
        unsafe { (*self.raw()).__data_len }
    }

    /// The I/O priority (`req_get_ioprio`).
    pub fn ioprio(&self) -> u16 {
        // SAFETY: live request (invariant).
        unsafe { ffi::req_get_ioprio(self.raw()) }
    }

    /// The tag.
    pub fn tag(&self) -> i32 {
        // SAFETY: live request (invariant).
        unsafe { (*self.raw()).tag }
    }

    fn pdu_ptr(&self) -> *mut u8 {
        // SAFETY: the PDU follows the request (`blk_mq_rq_to_pdu`).
        unsafe { self.raw().add(1).cast::<u8>() }
    }

    /// The driver's private data.
    pub fn pdu(&self) -> &T::Pdu {
        // SAFETY: initialised in `init_request` (invariant); only the owner
        // of the request reaches it.
        unsafe { &*self.pdu_ptr().cast::<T::Pdu>() }
    }

    /// The driver's private data, mutably: this value is its only owner.
    pub fn pdu_mut(&mut self) -> &mut T::Pdu {
        // SAFETY: as `pdu`; `&mut self` is exclusive.
        unsafe { &mut *self.pdu_ptr().cast::<T::Pdu>() }
    }

    /// The request's scatterlist table, in the PDU.
    fn sg_area(&self) -> *mut SgArea {
        // SAFETY: `TagSet::new` sized the PDU for it, `init_request`
        // initialised it.
        unsafe { self.pdu_ptr().add(sg_offset::<T>()).cast() }
    }

    /// The first entry of the scatterlist that [`Self::map_sg`] filled.
    pub fn sgl(&self) -> *mut ffi::scatterlist {
        // SAFETY: the area is the request's; a plain read of a pointer.
        unsafe { (*self.sg_area()).sgt.sgl }
    }

    /// Marks the request started (`blk_mq_start_request`).
    pub fn start(&mut self) {
        // SAFETY: owned, not yet started or ended.
        unsafe { ffi::blk_mq_start_request(self.raw()) };
    }

    /// Maps the data into the request's scatterlist (`blk_rq_map_sg`): the
    /// PDU's inline entries (`TagSetParams::inline_sg`), chained to entries
    /// from the kernel's SG pool for a request with more segments
    /// (`sg_alloc_table_chained()`, atomic). Returns the entries used and
    /// their total length; an op without data (or discard, write zeroes)
    /// maps none. `ENOMEM` if the pool has no entries now: the caller
    /// returns the request busy and runs the queue later. The entries stay
    /// until the request ends or is returned busy.
    pub fn map_sg(&mut self) -> Result<(u32, usize), kernel::error::Error> {
        self.unmap_sg();
        let area = self.sg_area();
        // SAFETY: a live request.
        let segs = unsafe { ffi::blk_rq_nr_phys_segments(self.raw()) }.max(1);
        // SAFETY: the area is the request's and holds no pooled entries
        // (unmapped above); the table starts at the inline entries, whose
        // count is passed, as `sg_alloc_table_chained()` expects.
        let ret = unsafe {
            (*area).sgt.sgl = SgArea::first(area);
            ffi::sg_alloc_table_chained(
                &raw mut (*area).sgt,
                i32::from(segs),
                (*area).sgt.sgl,
                (*area).inline,
            )
        };
        if ret != 0 {
            // SAFETY: on failure the table freed what it had chained.
            unsafe { (*area).sgt = core::mem::zeroed() };
            return Err(kernel::error::Error::from_errno(ret));
        }
        let sgl = self.sgl();
        let n = match self.op() {
            ReqOp::Read | ReqOp::Write => {
                // SAFETY: the table has `nr_phys_segments` entries, as many
                // as the request's segments.
                let n = unsafe { ffi::blk_rq_map_sg((*self.raw()).q, self.raw(), sgl) };
                u32::try_from(n).unwrap_or(0)
            }
            _ => 0,
        };
        if n == 0 {
            // SAFETY: the table has at least one entry.
            unsafe { ffi::sg_mark_end(sgl) };
            return Ok((0, 0));
        }
        let mut len = 0usize;
        let mut sg = sgl;
        for _ in 0..n {
            // SAFETY: `n` entries were filled, chained by `sg_next`.
            unsafe {
                len += (*sg).length as usize;
                sg = ffi::sg_next(sg);
            }
        }
        Ok((n, len))
    }

    /// Gives back the pooled entries [`Self::map_sg`] chained, if any
    /// (`sg_free_table_chained()`); nothing if unmapped. Any context.
    pub(crate) fn unmap_sg(&mut self) {
        let area = self.sg_area();
        // Nothing uses the entries any more: RTRS has confirmed the IO, or
        // never got it. Zeroed after, so a second call frees nothing.
        // SAFETY: the request's table, freed with the inline count it was
        // allocated with.
        unsafe {
            if (*area).sgt.orig_nents != 0 {
                ffi::sg_free_table_chained(&raw mut (*area).sgt, (*area).inline);
                (*area).sgt = core::mem::zeroed();
            }
        }
    }

    /// Completes the request from any context (`blk_mq_complete_request`):
    /// blk-mq calls [`Operations::complete`] with it, possibly on another CPU.
    pub fn complete(self) {
        let rq = self.into_raw();
        // SAFETY: started and owned; ownership passes to blk-mq until it
        // calls `complete`.
        unsafe { ffi::blk_mq_complete_request(rq) };
    }

    /// Ends the request with `status` (`blk_mq_end_request`).
    pub fn end(mut self, status: Status) {
        self.unmap_sg();
        let rq = self.into_raw();
        // SAFETY: owned and not ended.
        unsafe { ffi::blk_mq_end_request(rq, status.raw()) };
    }
}

impl<T: Operations> Drop for Request<T> {
    fn drop(&mut self) {
        // A request may not be lost: end it with an error.
        self.unmap_sg();
        // SAFETY: owned and not ended (consuming methods forget `self`).
        unsafe { ffi::blk_mq_end_request(self.raw(), Status::IOERR.raw()) };
    }
}
