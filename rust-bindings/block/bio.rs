// SPDX-License-Identifier: GPL-2.0-or-later

//! Bios over a kernel buffer, as the RNBD server submits them: one bio per
//! client request, over the contiguous chunk RTRS received the request in
//! (or none, for a discard, write zeroes or flush), with a typed completion.
//!
//! [`submit`] moves the buffer `B` and a completion context `C` into the
//! bio; `bi_end_io` gives both back, with the status, to
//! [`BioDone::done`]. Whoever owns `B` cannot free the memory while the
//! device transfers it: `B` is the bio's until then.

use super::bdev::Bdev;
use kernel::alloc::{flags::GFP_KERNEL, KBox};
use kernel::prelude::*;
use rb::ffi;

/// What a bio does (`REQ_OP_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BioOp {
    /// `REQ_OP_READ`: the device fills the buffer.
    Read,
    /// `REQ_OP_WRITE`: the device stores the buffer; with no data and
    /// `preflush`, a cache flush.
    Write,
    /// `REQ_OP_DISCARD` of `size` bytes, no data.
    Discard,
    /// `REQ_OP_SECURE_ERASE` of `size` bytes, no data.
    SecureErase,
    /// `REQ_OP_WRITE_ZEROES` of `size` bytes, no data.
    WriteZeroes,
}

impl BioOp {
    fn raw(self) -> ffi::blk_opf_t {
        (match self {
            BioOp::Read => ffi::req_op_REQ_OP_READ,
            BioOp::Write => ffi::req_op_REQ_OP_WRITE,
            BioOp::Discard => ffi::req_op_REQ_OP_DISCARD,
            BioOp::SecureErase => ffi::req_op_REQ_OP_SECURE_ERASE,
            BioOp::WriteZeroes => ffi::req_op_REQ_OP_WRITE_ZEROES,
        }) as ffi::blk_opf_t
    }

    /// Whether the op carries data.
    fn has_data(self) -> bool {
        matches!(self, BioOp::Read | BioOp::Write)
    }
}

/// One bio to submit: op, flags, where and how much.
#[derive(Clone, Copy, Debug)]
pub struct BioReq {
    /// The op.
    pub op: BioOp,
    /// `REQ_PREFLUSH`: flush the cache first.
    pub preflush: bool,
    /// `REQ_FUA`: on stable storage when complete.
    pub fua: bool,
    /// `REQ_SYNC`.
    pub sync: bool,
    /// First 512-byte sector.
    pub sector: u64,
    /// Length in bytes: the buffer's for a read or write, else the range.
    pub size: u32,
    /// IO priority (`bi_ioprio`).
    pub prio: u16,
}

impl BioReq {
    fn opf(&self) -> ffi::blk_opf_t {
        let flag = |on: bool, bit: u32| if on { (1 as ffi::blk_opf_t) << bit } else { 0 };
        self.op.raw()
            | flag(self.preflush, ffi::req_flag_bits___REQ_PREFLUSH as u32)
            | flag(self.fua, ffi::req_flag_bits___REQ_FUA as u32)
            | flag(self.sync, ffi::req_flag_bits___REQ_SYNC as u32)
    }
}

/// Memory a bio can transfer: one physically contiguous range of the
/// kernel's direct map (as `bio_add_virt_nofail` takes it).
///
/// # Safety
///
/// `bio_buffer` returns the same `(start, len)` for the life of the value;
/// the range is directly mapped (`virt_to_page` valid, not vmalloc),
/// physically contiguous, valid for reads and writes, and nothing else
/// accesses it while the value is moved into a bio. `len` fits `u32`.
pub unsafe trait BioBuffer: Send + 'static {
    /// The start and length of the memory; a length of 0 for none.
    fn bio_buffer(&self) -> (*mut u8, usize);
}

/// The completion of a bio whose buffer is a `B`.
pub trait BioDone<B: BioBuffer>: Send + Sized + 'static {
    /// The bio completed with `status` (`blk_status_to_errno`); `buf` is
    /// the caller's again. Runs in the device's completion context, which
    /// may be hard or soft interrupt: must not sleep.
    fn done(self, buf: B, status: Result);
}

/// The buffer and context of a bio in flight, in its `bi_private`.
struct InFlight<B, C> {
    buf: B,
    ctx: C,
}

/// `bi_end_io` of bios from [`submit::<B, C>`].
///
/// # Safety
///
/// Called once by the block layer for a bio that `submit::<B, C>` submitted.
unsafe extern "C" fn end_io<B: BioBuffer, C: BioDone<B>>(bio: *mut ffi::bio) {
    // SAFETY: a completed bio is valid until we put it; its `bi_private`
    // is the `InFlight<B, C>` that `submit` leaked into it, ours now.
    let (errno, inflight) = unsafe {
        let errno = ffi::blk_status_to_errno((*bio).bi_status);
        let inflight = KBox::from_raw((*bio).bi_private.cast::<InFlight<B, C>>());
        ffi::bio_put(bio);
        (errno, inflight)
    };
    let InFlight { buf, ctx } = KBox::into_inner(inflight);
    let status = if errno == 0 {
        Ok(())
    } else {
        Err(Error::from_errno(errno))
    };
    ctx.done(buf, status);
}

/// Submits `req` on `bdev` over `buf` (for a read or write; an empty `buf`
/// for the others and for a flush). `ctx.done(buf, status)` is called when
/// it completes.
///
/// Fails, giving `buf` and `ctx` back, with `EINVAL` if a read or write
/// has no data but a size, a data-less op has data, or the data's length is
/// not `req.size`; `ENOMEM` if memory runs out. May sleep (allocations are
/// `GFP_KERNEL`, as the C server's).
pub fn submit<B: BioBuffer, C: BioDone<B>>(
    bdev: &Bdev,
    req: &BioReq,
    buf: B,
    ctx: C,
) -> core::result::Result<(), (B, C, Error)> {
    let (start, len) = buf.bio_buffer();
    let len_ok = match (req.op.has_data(), len) {
        (_, 0) => !req.op.has_data() || req.size == 0,
        (true, n) => u32::try_from(n) == Ok(req.size),
        (false, _) => false,
    };
    if !len_ok {
        return Err((buf, ctx, EINVAL));
    }
    let slot = match KBox::<InFlight<B, C>>::new_uninit(GFP_KERNEL) {
        Ok(slot) => slot,
        Err(_) => return Err((buf, ctx, ENOMEM)),
    };
    // SAFETY: `bdev` is an open block device; `GFP_KERNEL` allows sleeping,
    // which the caller may (documented).
    let bio = unsafe {
        ffi::bio_alloc(
            bdev.as_ptr(),
            u16::from(len != 0),
            req.opf(),
            kernel::bindings::GFP_KERNEL,
        )
    };
    if bio.is_null() {
        return Err((buf, ctx, ENOMEM));
    }
    let inflight = KBox::into_raw(KBox::write(slot, InFlight { buf, ctx }));
    // `start..start + len` is directly mapped, contiguous memory that the
    // `B` moved into `inflight` keeps valid and to ourselves until `end_io`
    // (the `BioBuffer` contract); `len` fits u32 (checked). The fields are
    // ours to set before submission.
    // SAFETY: `bio` is a new bio with room for one vector if `len != 0`,
    // for that memory (above); `end_io::<B, C>` runs once, with this
    // `InFlight<B, C>`.
    unsafe {
        if len != 0 {
            ffi::bio_add_virt_nofail(bio, start.cast(), len as u32);
        } else {
            (*bio).bi_iter.bi_size = req.size;
        }
        (*bio).bi_iter.bi_sector = req.sector;
        (*bio).bi_ioprio = req.prio;
        (*bio).bi_private = inflight.cast();
        (*bio).bi_end_io = Some(end_io::<B, C>);
        ffi::submit_bio(bio);
    }
    Ok(())
}
