// SPDX-License-Identifier: GPL-2.0-or-later

//! The active side of a raw rdma_cm connection, as the test modules that
//! talk to a server over bare verbs set it up (rb-test-rdma-clt,
//! rtrs-test-evil): [`connect`] creates the id and resolves the address,
//! then [`event`] creates the QP, resolves the route and connects, and tells
//! the connection ([`ActiveConn`]) how it went.

#![allow(dead_code)]

use core::marker::PhantomData;
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::net::SockAddr;
use rb_rdma::cm::QpAttr;
use rb_rdma::{CmEvent, CmHandler, CmId, CmIdRef, ConnParam, Cqe, CqeHandler, PollContext};

/// What a test connection's QP and CQ are created with: one SGE a request,
/// 16 sends, `max_recv_wr` receives, a CQ of 32 polled in softirq.
pub(crate) fn qp_attr(max_recv_wr: usize) -> QpAttr {
    QpAttr {
        max_send_wr: 16,
        max_recv_wr: max_recv_wr as u32,
        max_send_sge: 1,
        max_recv_sge: 1,
        nr_cqe: 32,
        comp_vector: 0,
        poll: PollContext::Softirq,
    }
}

/// The completion entry of receive buffer `idx` of a connection of type
/// `C`; `C`'s module implements `HasCqe<0>` and `CqeHandler<0>` for it.
pub(crate) struct RecvSlot<C> {
    pub(crate) cqe: Cqe<RecvSlot<C>>,
    pub(crate) idx: usize,
    _conn: PhantomData<fn(&C)>,
}

/// The entries of receive buffers `0..n`.
pub(crate) fn recv_slots<C>(n: usize) -> Result<KVec<RecvSlot<C>>>
where
    RecvSlot<C>: CqeHandler,
{
    let mut recv = KVec::with_capacity(n, GFP_KERNEL)?;
    for idx in 0..n {
        recv.push(
            RecvSlot {
                cqe: Cqe::new(),
                idx,
                _conn: PhantomData,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(recv)
}

/// A connection that [`connect`] and [`event`] set up: what it does at
/// each step, and what it learns.
pub(crate) trait ActiveConn: CmHandler {
    /// Whether the id may reuse a local port (`rdma_set_reuseaddr`).
    const REUSEADDR: bool;
    /// How long resolving the address, and then the route, may take (ms).
    const RESOLVE_MS: u32;
    /// RNR retries of the connection (7: infinite).
    const RNR_RETRY_COUNT: u8;

    /// The private data of the connect request.
    fn private_data(&self) -> &[u8];

    /// The address resolved: make the PD, buffers and QP on `id`'s device
    /// (with [`qp_attr`]) and post the receives.
    fn setup(id: &CmIdRef<Self>) -> Result;

    /// The server accepted, with `private_data`.
    fn established(&self, private_data: &[u8]);

    /// The server rejected, with `private_data` if it sent any.
    fn rejected(&self, private_data: Option<&[u8]>);

    /// Resolving, connecting or a step of [`event`] failed with `errno`.
    fn failed(&self, errno: i32);

    /// The connection went away: disconnected, its device removed, or
    /// out of time wait.
    fn closed(&self);
}

/// Starts connecting `conn` to `dst`: creates its id and resolves the
/// address; [`event`], called from `conn`'s CM handler, does the rest.
pub(crate) fn connect<C: ActiveConn>(conn: Arc<C>, dst: &SockAddr) -> Result<CmId<C>> {
    let id = CmId::new(conn)?;
    if C::REUSEADDR {
        id.set_reuseaddr(true)?;
    }
    id.resolve_addr(None, dst, C::RESOLVE_MS)?;
    Ok(id)
}

/// Handles `event` of `conn`'s id: what the [`CmHandler::event`] of a
/// connection started with [`connect`] calls. An error is that of the step
/// the event called for (the setup, resolving the route, connecting); the
/// caller reports it and calls [`ActiveConn::failed`] with it.
pub(crate) fn event<C: ActiveConn>(conn: &C, id: &CmIdRef<C>, event: &CmEvent<'_>) -> Result {
    match event {
        CmEvent::AddrResolved => C::setup(id).and_then(|()| id.resolve_route(C::RESOLVE_MS)),
        CmEvent::RouteResolved => id.connect(&ConnParam {
            private_data: conn.private_data(),
            responder_resources: 1,
            initiator_depth: 1,
            retry_count: 7,
            rnr_retry_count: C::RNR_RETRY_COUNT,
            ..Default::default()
        }),
        CmEvent::Established { private_data } => {
            conn.established(private_data);
            Ok(())
        }
        CmEvent::Rejected { private_data, .. } => {
            conn.rejected(*private_data);
            Ok(())
        }
        CmEvent::AddrError(e)
        | CmEvent::RouteError(e)
        | CmEvent::ConnectError(e)
        | CmEvent::Unreachable(e) => {
            conn.failed(*e);
            Ok(())
        }
        CmEvent::Disconnected(_) | CmEvent::DeviceRemoval | CmEvent::TimewaitExit => {
            conn.closed();
            Ok(())
        }
        _ => Ok(()),
    }
}
