// SPDX-License-Identifier: GPL-2.0-or-later

//! Work requests (`struct ib_send_wr` and its extensions, `struct
//! ib_recv_wr`), built on the stack and posted with `CmIdRef::post_send`,
//! `CmIdRef::post_chain` (a chain of up to `MAX` sends built in steps, in a
//! [`WrChain`]) or `CmIdRef::post_recv`.
//!
//! A work request's [`Cqe`] and [`Mr`] must live until it completes. The
//! posting functions take a closure that builds the requests from the
//! connection's handler `&'h H` for any `'h` (or fails, and nothing is
//! posted), so those references borrow from `H` (or are `'static`), and `H`
//! outlives the QP's drain. SGEs and the
//! request structs themselves only need to live during the post: the core
//! copies them.

use super::cq::{Cqe, CqeHandler};
use super::dma::DmaAddr;
use super::mr::Mr;
use core::marker::PhantomData;
use kernel::prelude::*;
use rb::ffi;

/// A scatter/gather element: `length` bytes at bus address `addr`, covered by
/// `lkey`.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Sge(ffi::ib_sge);

impl Sge {
    /// An element over mapped memory.
    pub fn new(addr: DmaAddr, length: u32, lkey: u32) -> Self {
        Self(ffi::ib_sge {
            addr: addr.get(),
            length,
            lkey,
        })
    }

    /// An element over an MR's registration (addresses in its iova space).
    pub(crate) fn from_mr(iova: u64, length: u32, lkey: u32) -> Self {
        Self(ffi::ib_sge {
            addr: iova,
            length,
            lkey,
        })
    }

    /// Its length.
    pub fn len(&self) -> u32 {
        self.0.length
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.0.length == 0
    }
}

/// `enum ib_access_flags` for memory registrations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access(u32);

impl Access {
    /// `IB_ACCESS_LOCAL_WRITE`.
    pub const LOCAL_WRITE: Self = Self(ffi::ib_access_flags_IB_ACCESS_LOCAL_WRITE);
    /// `IB_ACCESS_REMOTE_WRITE`.
    pub const REMOTE_WRITE: Self = Self(ffi::ib_access_flags_IB_ACCESS_REMOTE_WRITE);
    /// `IB_ACCESS_REMOTE_READ`.
    pub const REMOTE_READ: Self = Self(ffi::ib_access_flags_IB_ACCESS_REMOTE_READ);

    /// No access bits.
    pub const fn empty() -> Self {
        Self(0)
    }

    /// Both sets of bits.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// `enum ib_send_flags`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendFlags(i32);

impl SendFlags {
    /// Generate a completion on success too (`IB_SEND_SIGNALED`).
    pub const SIGNALED: Self = Self(ffi::ib_send_flags_IB_SEND_SIGNALED);
    /// Start only after earlier RDMA READs completed (`IB_SEND_FENCE`).
    pub const FENCE: Self = Self(ffi::ib_send_flags_IB_SEND_FENCE);
    /// Copy the payload into the work queue (`IB_SEND_INLINE`).
    pub const INLINE: Self = Self(ffi::ib_send_flags_IB_SEND_INLINE);

    /// No flags: the request completes silently unless it fails.
    pub const fn empty() -> Self {
        Self(0)
    }

    /// Both sets of flags.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// What a send-queue work request does.
#[derive(Clone, Copy)]
pub enum SendOp<'h> {
    /// SEND.
    Send,
    /// SEND with 32-bit immediate data (host order).
    SendWithImm(u32),
    /// SEND that invalidates the peer's `rkey` on arrival.
    SendWithInv(u32),
    /// RDMA WRITE to the peer's memory.
    RdmaWrite {
        /// Remote address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// RDMA WRITE with immediate data, consuming a receive at the peer.
    RdmaWriteWithImm {
        /// Remote address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
        /// Immediate data (host order).
        imm: u32,
    },
    /// RDMA READ from the peer's memory.
    RdmaRead {
        /// Remote address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// Invalidate a local key.
    LocalInv(u32),
    /// Register `mr`'s current mapping under its current key.
    RegMr {
        /// The memory region.
        mr: &'h Mr,
        /// Access rights given to the registration.
        access: Access,
    },
}

/// A send-queue work request for a QP whose CM handler is `H`.
pub struct SendWr<'h, 's, H> {
    pub(crate) op: SendOp<'h>,
    pub(crate) sges: &'s [Sge],
    pub(crate) cqe: *mut ffi::ib_cqe,
    pub(crate) flags: SendFlags,
    _conn: PhantomData<&'h H>,
}

impl<'h, 's, H> SendWr<'h, 's, H> {
    /// A request whose completion goes to `cqe`'s owner. The owner's handler
    /// type must match the QP's (`T::Conn = H`): that is what lets the
    /// completion find its connection.
    pub fn new<T, const ID: u64>(
        cqe: &'h Cqe<T, ID>,
        op: SendOp<'h>,
        sges: &'s [Sge],
        flags: SendFlags,
    ) -> Self
    where
        T: CqeHandler<ID, Conn = H>,
    {
        Self {
            op,
            sges,
            cqe: cqe.as_raw(),
            flags,
            _conn: PhantomData,
        }
    }
}

/// Up to `MAX` send work requests for a QP whose CM handler is `H`, pushed
/// in order inside `CmIdRef::post_chain` and posted by one `ib_post_send()`.
///
/// Only `post_chain` makes one, and hands it out as `&mut` for a `'h` that
/// borrows the QP's handler: `&mut` is invariant in `'h`, so what is pushed
/// borrows from that handler (or is `'static`), as for `post_send`.
///
/// # Invariants
///
/// `wrs[..len]` are `Some`, `wrs[len..]` are `None`.
pub struct WrChain<'h, 's, H, const MAX: usize> {
    wrs: [Option<SendWr<'h, 's, H>>; MAX],
    len: usize,
}

impl<'h, 's, H, const MAX: usize> WrChain<'h, 's, H, MAX> {
    /// An empty chain.
    pub(crate) fn new() -> Self {
        // INVARIANT: no request yet.
        Self {
            wrs: [const { None }; MAX],
            len: 0,
        }
    }

    /// Appends `wr`; `EINVAL` past `MAX` (a bug of the caller: returned with
    /// `?` from the closure, it posts nothing).
    pub fn push(&mut self, wr: SendWr<'h, 's, H>) -> Result {
        let slot = self.wrs.get_mut(self.len).ok_or(EINVAL)?;
        *slot = Some(wr);
        // INVARIANT: one more `Some`, right after the others.
        self.len += 1;
        Ok(())
    }

    /// Appends `wr` if there is one.
    pub fn push_opt(&mut self, wr: Option<SendWr<'h, 's, H>>) -> Result {
        match wr {
            Some(wr) => self.push(wr),
            None => Ok(()),
        }
    }

    /// The requests pushed so far.
    pub(crate) fn requests(&self) -> impl Iterator<Item = &SendWr<'h, 's, H>> {
        self.wrs.iter().map_while(Option::as_ref)
    }

    /// How many requests were pushed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether none was pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A receive-queue work request for a QP whose CM handler is `H`.
pub struct RecvWr<'h, 's, H> {
    pub(crate) sges: &'s [Sge],
    pub(crate) cqe: *mut ffi::ib_cqe,
    _conn: PhantomData<&'h H>,
}

impl<'h, 's, H> RecvWr<'h, 's, H> {
    /// A receive into `sges` (none: only immediate data), completing to
    /// `cqe`'s owner.
    pub fn new<T, const ID: u64>(cqe: &'h Cqe<T, ID>, sges: &'s [Sge]) -> Self
    where
        T: CqeHandler<ID, Conn = H>,
    {
        Self {
            sges,
            cqe: cqe.as_raw(),
            _conn: PhantomData,
        }
    }
}

/// Storage for one send work request of any kind: they all start with an
/// `ib_send_wr`, which links them.
#[repr(C)]
pub(crate) union RawSendWr {
    pub(crate) wr: ffi::ib_send_wr,
    pub(crate) rdma: ffi::ib_rdma_wr,
    pub(crate) reg: ffi::ib_reg_wr,
}

impl RawSendWr {
    /// An empty request, to be overwritten or left unposted.
    pub(crate) fn zeroed() -> Self {
        // SAFETY: all-zero is a valid value of these plain C structs.
        unsafe { core::mem::zeroed() }
    }

    /// Fills in everything but `next`.
    pub(crate) fn from_wr<H>(w: &SendWr<'_, '_, H>) -> Self {
        // SAFETY: all-zero is a valid value of these plain C structs.
        let mut raw: Self = unsafe { core::mem::zeroed() };
        // SAFETY: writing the members of a union of C structs we own; each
        // arm writes the member the opcode selects, which starts with `wr`.
        unsafe {
            let wr = &mut raw.wr;
            wr.__bindgen_anon_1.wr_cqe = w.cqe;
            wr.sg_list = w.sges.as_ptr().cast_mut().cast();
            wr.num_sge = w.sges.len() as i32;
            wr.send_flags = w.flags.0;
            match w.op {
                SendOp::Send => wr.opcode = ffi::ib_wr_opcode_IB_WR_SEND,
                SendOp::SendWithImm(imm) => {
                    wr.opcode = ffi::ib_wr_opcode_IB_WR_SEND_WITH_IMM;
                    wr.ex.imm_data = imm.to_be();
                }
                SendOp::SendWithInv(rkey) => {
                    wr.opcode = ffi::ib_wr_opcode_IB_WR_SEND_WITH_INV;
                    wr.ex.invalidate_rkey = rkey;
                }
                SendOp::LocalInv(rkey) => {
                    wr.opcode = ffi::ib_wr_opcode_IB_WR_LOCAL_INV;
                    wr.ex.invalidate_rkey = rkey;
                }
                SendOp::RdmaWrite { remote_addr, rkey } => {
                    wr.opcode = ffi::ib_wr_opcode_IB_WR_RDMA_WRITE;
                    raw.rdma.remote_addr = remote_addr;
                    raw.rdma.rkey = rkey;
                }
                SendOp::RdmaWriteWithImm {
                    remote_addr,
                    rkey,
                    imm,
                } => {
                    wr.opcode = ffi::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM;
                    wr.ex.imm_data = imm.to_be();
                    raw.rdma.remote_addr = remote_addr;
                    raw.rdma.rkey = rkey;
                }
                SendOp::RdmaRead { remote_addr, rkey } => {
                    wr.opcode = ffi::ib_wr_opcode_IB_WR_RDMA_READ;
                    raw.rdma.remote_addr = remote_addr;
                    raw.rdma.rkey = rkey;
                }
                SendOp::RegMr { mr, access } => {
                    wr.opcode = ffi::ib_wr_opcode_IB_WR_REG_MR;
                    raw.reg.mr = mr.as_raw();
                    raw.reg.key = mr.rkey();
                    raw.reg.access = access.0 as i32;
                }
            }
        }
        raw
    }
}
