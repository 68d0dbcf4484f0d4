// SPDX-License-Identifier: GPL-2.0-or-later

//! rb-test-rdma-srv: the server half of the rdma_cm/verbs test of
//! rust-bindings (the client half, `rb_test_rdma_clt.rs`, drives it; the
//! selftest `rb_rdma.sh` loads both).
//!
//! It listens on all devices, adopts connection requests that say `HELLO`,
//! registers `NCHUNKS` page chunks with a fast-reg MR, answers pings, checks
//! the bytes the client RDMA-writes, and re-keys the MR on request. On a
//! push request it maps one of two pages into a second MR as a client of
//! RTRS maps an IO (`Mr::map_sg_next_key`), and sends the page from that
//! registration, so the SGE must carry the MR's new local key. A
//! connection that disconnects or loses its device is dropped from inside its
//! own event handler.

use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::{new_mutex, try_pin_init};

#[path = "rb_test_rdma_common.rs"]
mod common;

use common::{
    Kind, Msg, CHUNK, HELLO, IMM_PING, IMM_WRITTEN, LIVE, MSG, NCHUNKS, NRECV, PUSH_LEN, PUSH_SEED,
    WELCOME,
};
use rb::kvec::VecExt;
use rb::net::SockAddr;
use rb::sync::{new_spinlock_bh, SpinLockBh};
use rb_rdma::blocks::{BlocksMap, PageBlocks};
use rb_rdma::cm::QpAttr;
use rb_rdma::cq::impl_has_cqe;
use rb_rdma::mr::DmaMappedSg;
use rb_rdma::{
    Access, CmEvent, CmHandler, CmId, CmIdRef, ConnParam, ConnectRequest, Cqe, CqeHandler, DmaBuf,
    DmaDirection, ListenHandler, Listener, Mr, Pd, PollContext, RecvWr, SendFlags, SendOp, SendWr,
    Sge, Wc, WcOpcode,
};

module! {
    type: SrvModule,
    name: "rb_test_rdma_srv",
    author: "rtrs-rs developers",
    description: "rust-bindings test: rdma_cm and verbs, server half",
    license: "GPL",
}

struct SrvModule {
    listener: Option<Listener<Ctx>>,
    ctx: Arc<Ctx>,
}

#[pin_data]
struct Ctx {
    #[pin]
    conns: Mutex<KVec<CmId<SrvConn>>>,
}

/// One posted receive: a message buffer and its completion entry.
struct RecvIu {
    cqe: Cqe<RecvIu>,
    idx: usize,
    buf: DmaBuf,
}
impl_has_cqe!(impl HasCqe<0> for RecvIu { self.cqe });

#[pin_data(PinnedDrop)]
struct SrvConn {
    ctx: Arc<Ctx>,
    pd: Arc<Pd>,
    chunks: Arc<PageBlocks>,
    map: BlocksMap,
    mr: Mr,
    /// Push pages 0 and 1, each mapped on its own, and the MR they take
    /// turns in.
    _push: Arc<PageBlocks>,
    push_maps: [BlocksMap; 2],
    push_mr: Mr,
    recv: KVec<RecvIu>,
    #[pin]
    send: SpinLockBh<DmaBuf>,
    send_cqe: Cqe<SrvConn, 1>,
    reg_cqe: Cqe<SrvConn, 2>,
    inv_cqe: Cqe<SrvConn, 3>,
    push_cqe: Cqe<SrvConn, 4>,
    old_rkey: AtomicU32,
}
impl_has_cqe!(impl HasCqe<1> for SrvConn { self.send_cqe });
impl_has_cqe!(impl HasCqe<2> for SrvConn { self.reg_cqe });
impl_has_cqe!(impl HasCqe<3> for SrvConn { self.inv_cqe });
impl_has_cqe!(impl HasCqe<4> for SrvConn { self.push_cqe });

#[pinned_drop]
impl PinnedDrop for SrvConn {
    fn drop(self: Pin<&mut Self>) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

fn access() -> Access {
    Access::LOCAL_WRITE
        .union(Access::REMOTE_WRITE)
        .union(Access::REMOTE_READ)
}

impl SrvConn {
    fn post_recv(conn: &CmIdRef<Self>, i: usize) -> Result {
        let h = conn.handler();
        let iu = h.recv.get(i).ok_or(EINVAL)?;
        let sge = [Sge::new(
            iu.buf.dma_addr(0)?,
            MSG as u32,
            h.pd.local_dma_lkey(),
        )];
        conn.post_recv(|h: &Self| Ok([RecvWr::new(&h.recv[i].cqe, &sge)]))
    }

    fn send(conn: &CmIdRef<Self>, msg: Msg) -> Result {
        let h = conn.handler();
        let addr = {
            let mut buf = h.send.lock();
            buf.write(0, &msg.encode())?;
            buf.dma_addr(0)?
        };
        let sge = [Sge::new(addr, MSG as u32, h.pd.local_dma_lkey())];
        conn.post_send(|h: &Self| {
            Ok([SendWr::new(
                &h.send_cqe,
                SendOp::Send,
                &sge,
                SendFlags::SIGNALED,
            )])
        })
    }

    /// Registers the chunks under the MR's current key (REG_MR), optionally
    /// invalidating the old key first (LOCAL_INV, then REG_MR, in one chain).
    fn register(conn: &CmIdRef<Self>, invalidate: Option<u32>) -> Result {
        match invalidate {
            None => conn.post_send(|h: &Self| {
                Ok([SendWr::new(
                    &h.reg_cqe,
                    SendOp::RegMr {
                        mr: &h.mr,
                        access: access(),
                    },
                    &[],
                    SendFlags::SIGNALED,
                )])
            }),
            Some(old) => conn.post_send(|h: &Self| {
                Ok([
                    SendWr::new(&h.inv_cqe, SendOp::LocalInv(old), &[], SendFlags::empty()),
                    SendWr::new(
                        &h.reg_cqe,
                        SendOp::RegMr {
                            mr: &h.mr,
                            access: access(),
                        },
                        &[],
                        SendFlags::SIGNALED,
                    ),
                ])
            }),
        }
    }

    /// Maps push page `round % 2` into the push MR under a new key, then
    /// invalidates the old key (after the first round), registers, and
    /// sends the page from the registration, in one chain.
    fn push(conn: &CmIdRef<Self>, round: u32) -> Result {
        let h = conn.handler();
        let map = &h.push_maps[(round % 2) as usize];
        let old = h.push_mr.rkey();
        let reg = h.push_mr.map_sg_next_key(map, PUSH_LEN as u32)?;
        let sge = [reg.sge()];
        conn.post_chain::<3, _>(|h: &Self, chain| {
            if round > 0 {
                let inv = SendOp::LocalInv(old);
                chain.push(SendWr::new(&h.push_cqe, inv, &[], SendFlags::empty()))?;
            }
            let reg = SendOp::RegMr {
                mr: &h.push_mr,
                access: Access::LOCAL_WRITE,
            };
            chain.push(SendWr::new(&h.push_cqe, reg, &[], SendFlags::empty()))?;
            chain.push(SendWr::new(
                &h.push_cqe,
                SendOp::Send,
                &sge,
                SendFlags::SIGNALED,
            ))
        })
    }

    fn info(&self) -> Msg {
        let (iova, len) = self.mr.mapping();
        Msg::new(
            Kind::Info,
            self.mr.rkey(),
            iova,
            len | (u64::from(self.old_rkey.load(Ordering::Relaxed)) << 40),
        )
    }

    fn on_recv(conn: &CmIdRef<Self>, iu: &RecvIu, wc: &Wc<'_>) {
        if !wc.is_ok() {
            if !wc.is_flushed() {
                pr_err!("recv failed: {}\n", wc.status_msg());
            }
            return;
        }
        let h = conn.handler();
        let reply = match wc.opcode() {
            WcOpcode::RecvRdmaWithImm => {
                let imm = wc.imm_data().unwrap_or(0);
                let len = (imm & 0x00ff_ffff) as usize;
                if imm & 0xff00_0000 != IMM_WRITTEN || wc.byte_len() as usize != len {
                    pr_err!(
                        "unexpected write: imm {:#x}, {} bytes\n",
                        imm,
                        wc.byte_len()
                    );
                    Some(Msg::new(Kind::WriteCheck, 2, 0, 0))
                } else {
                    let bad = h.check_written(len);
                    pr_info!("client wrote {} bytes, {} differ\n", len, bad);
                    Some(Msg::new(
                        Kind::WriteCheck,
                        (bad != 0) as u32,
                        len as u64,
                        bad as u64,
                    ))
                }
            }
            WcOpcode::Recv => {
                let mut m = [0u8; MSG];
                if iu.buf.read(0, &mut m).is_err() || wc.byte_len() as usize != MSG {
                    pr_err!("short message: {} bytes\n", wc.byte_len());
                    None
                } else {
                    let msg = Msg::decode(&m);
                    if msg.is(Kind::Ping) && wc.imm_data() == Some(IMM_PING) {
                        Some(Msg::new(Kind::Pong, msg.a.wrapping_add(1), msg.b, 0))
                    } else if msg.is(Kind::Push) {
                        if let Err(e) = Self::push(conn, msg.a) {
                            pr_err!("push {} failed: {:?}\n", msg.a, e);
                        }
                        None
                    } else if msg.is(Kind::Rekey) {
                        let old = h.mr.rkey();
                        h.old_rkey.store(old, Ordering::Relaxed);
                        h.mr.inc_key();
                        if let Err(e) = Self::register(conn, Some(old)) {
                            pr_err!("re-registration failed: {:?}\n", e);
                        }
                        None
                    } else {
                        pr_err!("unexpected message {:?}, imm {:?}\n", msg, wc.imm_data());
                        None
                    }
                }
            }
            other => {
                pr_err!("unexpected receive opcode {:?}\n", other);
                None
            }
        };
        if let Err(e) = Self::post_recv(conn, iu.idx) {
            pr_err!("re-posting receive {} failed: {:?}\n", iu.idx, e);
        }
        if let Some(msg) = reply {
            if let Err(e) = Self::send(conn, msg) {
                pr_err!("send failed: {:?}\n", e);
            }
        }
    }

    /// Bytes of the client's write region that differ from its pattern.
    fn check_written(&self, len: usize) -> usize {
        let mut bad = 0;
        let mut buf = [0u8; 256];
        let mut off = 0;
        while off < len {
            let pos = common::WRITE_OFF + off;
            let n = buf.len().min(len - off).min(CHUNK - pos % CHUNK);
            if self
                .chunks
                .read(pos / CHUNK, pos % CHUNK, &mut buf[..n])
                .is_err()
            {
                return len;
            }
            for (i, b) in buf[..n].iter().enumerate() {
                bad += (*b != common::pattern(common::CLT_SEED, off + i)) as usize;
            }
            off += n;
        }
        bad
    }
}

impl CqeHandler<0> for RecvIu {
    type Conn = SrvConn;

    fn done(&self, conn: &CmIdRef<SrvConn>, wc: &Wc<'_>) {
        SrvConn::on_recv(conn, self, wc);
    }
}

impl CqeHandler<1> for SrvConn {
    type Conn = SrvConn;

    fn done(&self, _conn: &CmIdRef<SrvConn>, wc: &Wc<'_>) {
        if !wc.is_ok() && !wc.is_flushed() {
            pr_err!("send failed: {}\n", wc.status_msg());
        }
    }
}

impl CqeHandler<2> for SrvConn {
    type Conn = SrvConn;

    fn done(&self, conn: &CmIdRef<SrvConn>, wc: &Wc<'_>) {
        if !wc.is_ok() {
            if !wc.is_flushed() {
                pr_err!("REG_MR failed: {}\n", wc.status_msg());
            }
            return;
        }
        pr_info!("chunks registered, rkey {:#x}\n", self.mr.rkey());
        if let Err(e) = Self::send(conn, self.info()) {
            pr_err!("sending info failed: {:?}\n", e);
        }
    }
}

impl CqeHandler<3> for SrvConn {
    type Conn = SrvConn;

    fn done(&self, _conn: &CmIdRef<SrvConn>, wc: &Wc<'_>) {
        if !wc.is_ok() && !wc.is_flushed() {
            pr_err!("LOCAL_INV failed: {}\n", wc.status_msg());
        }
    }
}

impl CqeHandler<4> for SrvConn {
    type Conn = SrvConn;

    fn done(&self, _conn: &CmIdRef<SrvConn>, wc: &Wc<'_>) {
        if !wc.is_ok() && !wc.is_flushed() {
            pr_err!("push: {:?} failed: {}\n", wc.opcode(), wc.status_msg());
        }
    }
}

impl CmHandler for SrvConn {
    fn event(&self, id: &CmIdRef<Self>, event: &CmEvent<'_>) {
        pr_info!("event {}\n", event.name());
        match event {
            CmEvent::Established { .. } => {
                pr_info!("established\n");
                if let Err(e) = Self::register(id, None) {
                    pr_err!("registration failed: {:?}\n", e);
                }
            }
            CmEvent::Disconnected(_) | CmEvent::DeviceRemoval | CmEvent::TimewaitExit => {
                // Drop our `CmId` here, inside its own handler.
                let mine = {
                    let mut conns = self.ctx.conns.lock();
                    conns
                        .iter()
                        .position(|c| c.same(id))
                        .and_then(|i| conns.swap_remove(i))
                };
                if mine.is_some() {
                    pr_info!("closing connection ({})\n", event.name());
                }
                drop(mine);
            }
            _ => {}
        }
    }
}

impl ListenHandler for Ctx {
    fn connect_request(this: &Arc<Self>, req: ConnectRequest<'_>) {
        if !req.private_data().starts_with(HELLO) {
            pr_info!("rejecting a request without the handshake\n");
            let _ = req.reject(b"rb-test: who are you?");
            return;
        }
        if let Err(e) = Self::accept(this, req) {
            pr_err!("accepting failed: {:?}\n", e);
        }
    }
}

impl Ctx {
    fn new_conn(ctx: Arc<Ctx>, req: &ConnectRequest<'_>) -> Result<Arc<SrvConn>> {
        let dev = req.device();
        let pd = Arc::new(Pd::new(dev, 0)?, GFP_KERNEL)?;
        let mut chunks = PageBlocks::new(NCHUNKS, CHUNK)?;
        // The server's own data, for the client to read back.
        let mut b = [0u8; 256];
        let mut off = 0;
        while off < CHUNK {
            for (i, x) in b.iter_mut().enumerate() {
                *x = common::pattern(common::SRV_SEED, off + i);
            }
            chunks.write(common::SRV_OFF / CHUNK, off, &b)?;
            off += b.len();
        }
        let chunks = Arc::new(chunks, GFP_KERNEL)?;
        let map = BlocksMap::new(&pd, &chunks, 0, NCHUNKS)?;
        let mut mr = Mr::new(&pd, NCHUNKS * (CHUNK / 4096) as u32)?;
        let n = mr.map_sg_owned(&map, map.dma_nents(), CHUNK as u32)?;
        if n != map.dma_nents() {
            pr_err!("MR mapped {} of {} entries\n", n, map.dma_nents());
            return Err(EINVAL);
        }
        let mut push = PageBlocks::new(2, PUSH_LEN)?;
        for page in 0..2 {
            let seed = PUSH_SEED + page as u8;
            for off in (0..PUSH_LEN).step_by(b.len()) {
                for (i, x) in b.iter_mut().enumerate() {
                    *x = common::pattern(seed, off + i);
                }
                push.write(page, off, &b)?;
            }
        }
        let push = Arc::new(push, GFP_KERNEL)?;
        let push_maps = [
            BlocksMap::new(&pd, &push, 0, 1)?,
            BlocksMap::new(&pd, &push, 1, 1)?,
        ];
        let push_mr = Mr::new(&pd, 1)?;
        let mut recv = KVec::with_capacity(NRECV, GFP_KERNEL)?;
        for idx in 0..NRECV {
            let buf = DmaBuf::new(dev, MSG, DmaDirection::FromDevice)?;
            recv.push(
                RecvIu {
                    cqe: Cqe::new(),
                    idx,
                    buf,
                },
                GFP_KERNEL,
            )?;
        }
        let send = DmaBuf::new(dev, MSG, DmaDirection::ToDevice)?;
        let conn = Arc::pin_init(
            try_pin_init!(SrvConn {
                ctx,
                pd,
                chunks,
                map,
                mr,
                _push: push,
                push_maps,
                push_mr,
                recv,
                send <- new_spinlock_bh!(send, "rb_test_srv_send"),
                send_cqe: Cqe::new(),
                reg_cqe: Cqe::new(),
                inv_cqe: Cqe::new(),
                push_cqe: Cqe::new(),
                old_rkey: AtomicU32::new(0),
            }? Error),
            GFP_KERNEL,
        )?;
        LIVE.fetch_add(1, Ordering::Relaxed);
        Ok(conn)
    }

    fn accept(this: &Arc<Self>, req: ConnectRequest<'_>) -> Result {
        let conn = Self::new_conn(this.clone(), &req)?;
        let id = req.adopt(conn)?;
        // From here on, an error drops `id` inside the request's callback,
        // which rdma_cm then destroys.
        let attr = QpAttr {
            max_send_wr: 16,
            max_recv_wr: NRECV as u32,
            max_send_sge: 1,
            max_recv_sge: 1,
            nr_cqe: 32,
            comp_vector: 0,
            poll: PollContext::Softirq,
        };
        id.create_qp(&id.handler().pd.clone(), &attr)?;
        for i in 0..NRECV {
            SrvConn::post_recv(&id, i)?;
        }
        id.accept(&ConnParam {
            private_data: WELCOME,
            responder_resources: 1,
            initiator_depth: 1,
            rnr_retry_count: 7,
            ..Default::default()
        })?;
        pr_info!("accepted a connection\n");
        this.conns.lock().push(id, GFP_KERNEL)?;
        Ok(())
    }
}

impl kernel::Module for SrvModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let ctx = Arc::pin_init(
            pin_init!(Ctx { conns <- new_mutex!(KVec::new()) }),
            GFP_KERNEL,
        )?;
        let addr = SockAddr::ipv4([0, 0, 0, 0], common::PORT);
        let listener = Listener::new(ctx.clone(), &addr, 64, None)?;
        pr_info!("listening on port {}\n", common::PORT);
        Ok(Self {
            listener: Some(listener),
            ctx,
        })
    }
}

impl Drop for SrvModule {
    fn drop(&mut self) {
        // No new connections, then close the open ones outside the lock (a
        // closing connection's handler takes it).
        drop(self.listener.take());
        let conns = core::mem::take(&mut *self.ctx.conns.lock());
        drop(conns);
        pr_info!("exit, live objects {}\n", LIVE.load(Ordering::Relaxed));
    }
}
