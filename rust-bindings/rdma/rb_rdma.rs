// SPDX-License-Identifier: GPL-2.0-or-later

//! RDMA: the rdma_cm and verbs abstractions RTRS is built on (a crate on
//! `rb`, linked by the modules that use verbs).
//!
//! See `Documentation/design/bindings.md` ("The completion rule") for how a
//! posted work request stays valid until it completes: everything it points
//! at is owned by the connection's handler `H`, which the [`cm::CmId`] keeps
//! alive until its QP is drained and destroyed.

use rb::__LOG_PREFIX;

pub mod blocks;
pub mod client;
pub mod cm;
pub mod cq;
pub mod device;
pub mod dma;
pub mod event;
pub mod mr;
pub mod pd;
pub mod wr;

pub use client::{IbClient, IbClientOps};
pub use cm::{
    CmEvent, CmHandler, CmId, CmIdRef, ConnParam, ConnectRequest, ListenHandler, Listener, QpEvent,
};
pub use cq::{Cqe, CqeHandler, PollContext, Wc, WcOpcode};
pub use device::{Device, DeviceRef};
pub use dma::{BorrowedSg, DmaAddr, DmaBuf, DmaDirection, MappedSg};
pub use event::{EventHandler, IbEvent, IbEventHandler};
pub use mr::{Mr, MrMapping};
pub use pd::Pd;
pub use wr::{Access, RecvWr, SendFlags, SendOp, SendWr, Sge, WrChain};
