// SPDX-License-Identifier: GPL-2.0-or-later

//! Completion queues and completion entries (`struct ib_cq`, `struct ib_cqe`).
//!
//! A work request points at a [`Cqe`] embedded in an object of its
//! connection's handler; when the request completes, the RDMA core calls the
//! `Cqe`'s trampoline, which finds the embedding object with
//! `container_of` and calls its [`CqeHandler::done`].

use super::cm::{CmHandler, CmIdRef};
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::error::from_err_ptr;
use kernel::prelude::*;
use kernel::types::Opaque;
use rb::ffi;

/// How a CQ is polled (`enum ib_poll_context`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollContext {
    /// Only by the owner, through `CmIdRef::poll_cq` (RTRS poll queues).
    Direct,
    /// From softirq (`IB_POLL_SOFTIRQ`).
    Softirq,
    /// From a bound workqueue (`IB_POLL_WORKQUEUE`).
    Workqueue,
    /// From an unbound workqueue (`IB_POLL_UNBOUND_WORKQUEUE`).
    UnboundWorkqueue,
}

impl PollContext {
    fn raw(self) -> ffi::ib_poll_context {
        match self {
            Self::Direct => ffi::ib_poll_context_IB_POLL_DIRECT,
            Self::Softirq => ffi::ib_poll_context_IB_POLL_SOFTIRQ,
            Self::Workqueue => ffi::ib_poll_context_IB_POLL_WORKQUEUE,
            Self::UnboundWorkqueue => ffi::ib_poll_context_IB_POLL_UNBOUND_WORKQUEUE,
        }
    }
}

/// A CQ owned by a CM id's QP resources.
///
/// # Invariants
///
/// `cq` is a live CQ of `nr_cqe` entries, from the device's CQ pool if
/// `pooled`, else from `ib_alloc_cq`, released only in `Drop`.
pub(crate) struct Cq {
    cq: NonNull<ffi::ib_cq>,
    nr_cqe: u32,
    pooled: bool,
}

impl Cq {
    /// A CQ for `nr_cqe` completions on `dev` near completion vector
    /// `vector`. Direct-polled CQs are private (`ib_alloc_cq`); the others come
    /// from the device's shared pool (`ib_cq_pool_get`), as the C RTRS does.
    pub(crate) fn new(
        dev: *mut ffi::ib_device,
        nr_cqe: u32,
        vector: u32,
        ctx: PollContext,
    ) -> Result<Self> {
        let nr = i32::try_from(nr_cqe).map_err(|_| EINVAL)?;
        let vec = i32::try_from(vector).map_err(|_| EINVAL)?;
        // SAFETY: `dev` is a registered device (the caller's CM id is bound
        // to it and keeps it); its attributes are set before registration
        // and not written after.
        let max_cqe = unsafe { (*dev).attrs.max_cqe };
        // `ib_cq_pool_get` adds CQs of at most `max_cqe` entries to the pool
        // until one has room: asked for more, it would add them until memory
        // runs out. A CQ larger than the device's is refused here.
        if nr > max_cqe {
            return Err(EINVAL);
        }
        let pooled = ctx != PollContext::Direct;
        let cq = if pooled {
            // SAFETY: `dev` is a registered device (the caller's CM id is
            // bound to it and keeps it).
            from_err_ptr(unsafe { ffi::ib_cq_pool_get(dev, nr_cqe, vec, ctx.raw()) })?
        } else {
            // SAFETY: as above; the private pointer is unused by us.
            from_err_ptr(unsafe {
                ffi::ib_alloc_cq(dev, core::ptr::null_mut(), nr, vec, ctx.raw())
            })?
        };
        // INVARIANT: a live CQ of the kind recorded in `pooled`.
        Ok(Self {
            cq: NonNull::new(cq).ok_or(ENOMEM)?,
            nr_cqe,
            pooled,
        })
    }

    pub(crate) fn as_raw(&self) -> *mut ffi::ib_cq {
        self.cq.as_ptr()
    }
}

impl Drop for Cq {
    fn drop(&mut self) {
        // SAFETY: the CQ is live and released only here (type invariant); the
        // QP that used it has been destroyed before (see `cm::QpRes`).
        unsafe {
            if self.pooled {
                ffi::ib_cq_pool_put(self.as_raw(), self.nr_cqe);
            } else {
                ffi::ib_free_cq(self.as_raw());
            }
        }
    }
}

/// A completion entry embedded in an object of type `T`, which handles the
/// completion of the work requests that point at it. `ID` tells several
/// entries of one type apart (see [`impl_has_cqe!`]).
#[repr(transparent)]
pub struct Cqe<T: ?Sized, const ID: u64 = 0> {
    raw: Opaque<ffi::ib_cqe>,
    _owner: PhantomData<fn(&T)>,
}

// SAFETY: the entry is written once at construction and afterwards only read
// by the RDMA core, from any thread.
unsafe impl<T: ?Sized, const ID: u64> Send for Cqe<T, ID> {}
// SAFETY: as above.
unsafe impl<T: ?Sized, const ID: u64> Sync for Cqe<T, ID> {}

impl<T: CqeHandler<ID>, const ID: u64> Cqe<T, ID> {
    /// A completion entry that calls `T::done` on the object embedding it.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self {
            raw: Opaque::new(ffi::ib_cqe {
                done: Some(Self::done),
            }),
            _owner: PhantomData,
        }
    }

    pub(crate) fn as_raw(&self) -> *mut ffi::ib_cqe {
        self.raw.get()
    }

    /// # Safety
    ///
    /// Called by the RDMA core for a work request whose `wr_cqe` is a
    /// `Cqe<T, ID>` (the only way to post one, see `wr`), embedded in a `T`
    /// at `T::OFFSET`, posted on a QP whose context is an `Inner<T::Conn>`
    /// that is alive until the QP is drained.
    unsafe extern "C" fn done(_cq: *mut ffi::ib_cq, wc: *mut ffi::ib_wc) {
        // SAFETY: `wc` is valid for the duration of the callback.
        let wc = unsafe { &*wc };
        // SAFETY: reading the union member the core set for this completion.
        let cqe = unsafe { wc.__bindgen_anon_1.wr_cqe };
        // SAFETY: `cqe` is the `Cqe<T, ID>` at `T::OFFSET` inside a live `T`
        // (function contract): the owner of `T` outlives the QP's drain.
        let owner = unsafe { &*cqe.cast::<u8>().sub(T::OFFSET).cast::<T>() };
        // SAFETY: `wc.qp` is the QP the request was posted on; its context is
        // the `Inner` of its CM id, alive until the QP is destroyed, and
        // `CmIdRef` is a transparent wrapper of `Inner`.
        let conn = unsafe { &*(*wc.qp).qp_context.cast::<CmIdRef<T::Conn>>() };
        owner.done(conn, &Wc(wc));
    }
}

/// Types that embed a [`Cqe<Self, ID>`].
///
/// # Safety
///
/// `OFFSET` is the offset of a field of type `Cqe<Self, ID>` in `Self`.
/// Implement it with [`impl_has_cqe!`], which guarantees that.
pub unsafe trait HasCqe<const ID: u64 = 0> {
    /// Offset of the embedded entry.
    const OFFSET: usize;
}

/// Implements [`HasCqe`]: `impl_has_cqe!(impl HasCqe<0> for Iu { self.cqe });`,
/// or for a generic type `impl_has_cqe!(impl{S: Side} HasCqe<{ ID }> for
/// Con<S> { self.cqe });`.
#[macro_export]
macro_rules! impl_has_cqe {
    (impl$({$($g:tt)*})? HasCqe<$id:tt> for $t:ty { self.$field:ident }) => {
        // SAFETY: the offset is that of the named field, whose type is
        // checked to be `Cqe<Self, $id>` by the function below.
        // The macro is the audited place; its user needs no `unsafe`.
        #[allow(unsafe_code)]
        unsafe impl$(<$($g)*>)? $crate::cq::HasCqe<$id> for $t {
            const OFFSET: usize = {
                fn _check$(<$($g)*>)?(t: &$t) -> &$crate::cq::Cqe<$t, $id> {
                    &t.$field
                }
                ::core::mem::offset_of!(Self, $field)
            };
        }
    };
}
pub use crate::impl_has_cqe;

/// The handler of the completions whose work requests point at the
/// `Cqe<Self, ID>` embedded in `Self`.
pub trait CqeHandler<const ID: u64 = 0>: HasCqe<ID> + Sized {
    /// The CM handler of the connections on whose QPs these work requests
    /// are posted; [`CqeHandler::done`] gets it.
    type Conn: CmHandler;

    /// A work request completed (successfully or not, see [`Wc::is_ok`]) on
    /// connection `conn`, which may post more. Runs in the CQ's poll context
    /// (softirq, workqueue, or the caller of `poll_cq`): it must not drop the
    /// connection's `CmId` (that sleeps, and waits for this very CQ).
    fn done(&self, conn: &CmIdRef<Self::Conn>, wc: &Wc<'_>);
}

/// Opcode of a completion (`enum ib_wc_opcode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcOpcode {
    /// A SEND (with or without immediate data or invalidation).
    Send,
    /// An RDMA WRITE (with or without immediate data).
    RdmaWrite,
    /// An RDMA READ.
    RdmaRead,
    /// A LOCAL_INV.
    LocalInv,
    /// A REG_MR.
    RegMr,
    /// A receive of a SEND.
    Recv,
    /// A receive of an RDMA WRITE with immediate data.
    RecvRdmaWithImm,
    /// Something else, with its raw value.
    Other(u32),
}

/// A work completion (`struct ib_wc`), valid during the completion callback.
pub struct Wc<'a>(&'a ffi::ib_wc);

impl Wc<'_> {
    /// Whether the work request succeeded (`IB_WC_SUCCESS`).
    pub fn is_ok(&self) -> bool {
        self.0.status == ffi::ib_wc_status_IB_WC_SUCCESS
    }

    /// The raw `ib_wc_status`.
    pub fn status(&self) -> u32 {
        self.0.status
    }

    /// Whether the request was flushed because the QP went to error
    /// (`IB_WC_WR_FLUSH_ERR`): the normal end of outstanding requests on a
    /// closing connection.
    pub fn is_flushed(&self) -> bool {
        self.0.status == ffi::ib_wc_status_IB_WC_WR_FLUSH_ERR
    }

    /// The status as text (`ib_wc_status_msg`).
    pub fn status_msg(&self) -> &'static CStr {
        // SAFETY: `ib_wc_status_msg` returns a static string for any value.
        unsafe { CStr::from_char_ptr(ffi::ib_wc_status_msg(self.0.status)) }
    }

    /// The opcode; only meaningful if [`Wc::is_ok`].
    pub fn opcode(&self) -> WcOpcode {
        match self.0.opcode {
            ffi::ib_wc_opcode_IB_WC_SEND => WcOpcode::Send,
            ffi::ib_wc_opcode_IB_WC_RDMA_WRITE => WcOpcode::RdmaWrite,
            ffi::ib_wc_opcode_IB_WC_RDMA_READ => WcOpcode::RdmaRead,
            ffi::ib_wc_opcode_IB_WC_LOCAL_INV => WcOpcode::LocalInv,
            ffi::ib_wc_opcode_IB_WC_REG_MR => WcOpcode::RegMr,
            ffi::ib_wc_opcode_IB_WC_RECV => WcOpcode::Recv,
            ffi::ib_wc_opcode_IB_WC_RECV_RDMA_WITH_IMM => WcOpcode::RecvRdmaWithImm,
            other => WcOpcode::Other(other),
        }
    }

    /// Bytes received (receive completions).
    pub fn byte_len(&self) -> u32 {
        self.0.byte_len
    }

    /// The immediate data, in host order, if the completion carries any.
    pub fn imm_data(&self) -> Option<u32> {
        if self.0.wc_flags & ffi::ib_wc_flags_IB_WC_WITH_IMM as i32 == 0 {
            return None;
        }
        // SAFETY: with `IB_WC_WITH_IMM` set, `ex` holds `imm_data` (__be32).
        Some(u32::from_be(unsafe { self.0.ex.imm_data }))
    }

    /// The rkey the peer invalidated with a SEND_WITH_INV, if any.
    pub fn invalidated_rkey(&self) -> Option<u32> {
        if self.0.wc_flags & ffi::ib_wc_flags_IB_WC_WITH_INVALIDATE as i32 == 0 {
            return None;
        }
        // SAFETY: with `IB_WC_WITH_INVALIDATE` set, `ex` holds the rkey.
        Some(unsafe { self.0.ex.invalidate_rkey })
    }
}
