// SPDX-License-Identifier: GPL-2.0-or-later

//! rb-test-rdma-clt: the client half of the rdma_cm/verbs test of
//! rust-bindings. Loading it runs the checks against rb-test-rdma-srv on
//! 192.0.2.1 (the server guest of the selftest VM pair) and fails with EIO if
//! any fails; each check is logged as `ok N - ...` or `not ok N - ...`.
//!
//! Connection A: address and route resolution, connect with private data,
//! SEND/RECV with immediate data, RDMA WRITE with immediate data (the server
//! compares the bytes), RDMA READ of what was written and of what the server
//! wrote itself, re-keying of the server's MR (LOCAL_INV + REG_MR), READ with
//! the new key, two pages the server sends from an MR it re-registers for
//! each (`Mr::map_sg_next_key`), and a READ with the old key that must fail. Then a request
//! with a wrong handshake must be rejected with the server's private data.
//! Connection B stays up after loading, for the device-removal test, and
//! drops itself from its own handler when it goes away.

use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::{new_mutex, try_pin_init};

#[path = "rb_test_rdma_common.rs"]
mod common;

#[path = "rb_test_rdma_active.rs"]
mod active;

use active::ActiveConn;
use common::{
    Kind, Msg, CLT_SEED, HELLO, IMM_PING, IMM_WRITTEN, LIVE, MSG, NRECV, PUSH_LEN, PUSH_SEED,
    SRV_OFF, SRV_SEED, WELCOME, WRITE_LEN, WRITE_OFF,
};
use rb::net::SockAddr;
use rb::sync::{new_spinlock_bh, new_waitable, SpinLockBh, Waitable};
use rb_rdma::cq::impl_has_cqe;
use rb_rdma::{
    CmEvent, CmHandler, CmId, CmIdRef, Cqe, CqeHandler, DmaBuf, DmaDirection, Pd, RecvWr,
    SendFlags, SendOp, SendWr, Sge, Wc,
};

module! {
    type: CltModule,
    name: "rb_test_rdma_clt",
    author: "rtrs-rs developers",
    description: "rust-bindings test: rdma_cm and verbs, client half",
    license: "GPL",
}

const SERVER: [u8; 4] = [192, 0, 2, 1];
/// Local data buffer: the write source at 0, read destinations from `RD`.
const DATA: usize = 512 * 1024;
const RD: usize = 256 * 1024;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Connecting,
    Established,
    Rejected,
    Failed(i32),
    Closed,
}

struct State {
    phase: Phase,
    reject_data: [u8; 32],
    reject_len: usize,
    inbox: Option<Msg>,
    rdma: Option<(bool, u32)>,
    /// Seed of the push page expected next.
    push_seed: u8,
    /// Bytes of the last push page that differ from `push_seed`'s pattern.
    pushed: Option<usize>,
}

/// Where a held connection lives, so that its handler can drop it.
#[pin_data]
struct Held {
    #[pin]
    conn: Mutex<Option<CmId<CltConn>>>,
}

/// What needs the device: made when the address resolves.
struct Bufs {
    /// Keeps the PD for as long as the buffers.
    _pd: Arc<Pd>,
    recv: KVec<DmaBuf>,
    send: DmaBuf,
    data: DmaBuf,
}

/// A receive buffer's completion entry.
type RecvSlot = active::RecvSlot<CltConn>;
impl_has_cqe!(impl HasCqe<0> for RecvSlot { self.cqe });

#[pin_data(PinnedDrop)]
struct CltConn {
    name: &'static str,
    hello: &'static [u8],
    held: Option<Arc<Held>>,
    #[pin]
    state: Waitable<State>,
    #[pin]
    bufs: SpinLockBh<Option<Bufs>>,
    recv: KVec<RecvSlot>,
    send_cqe: Cqe<CltConn, 1>,
    rdma_cqe: Cqe<CltConn, 2>,
    lkey: AtomicU32,
}
impl_has_cqe!(impl HasCqe<1> for CltConn { self.send_cqe });
impl_has_cqe!(impl HasCqe<2> for CltConn { self.rdma_cqe });

#[pinned_drop]
impl PinnedDrop for CltConn {
    fn drop(self: Pin<&mut Self>) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

impl CltConn {
    fn new(name: &'static str, hello: &'static [u8], held: Option<Arc<Held>>) -> Result<Arc<Self>> {
        let recv = active::recv_slots(NRECV)?;
        let state = State {
            phase: Phase::Connecting,
            reject_data: [0; 32],
            reject_len: 0,
            inbox: None,
            rdma: None,
            push_seed: 0,
            pushed: None,
        };
        let conn = Arc::pin_init(
            try_pin_init!(CltConn {
                name,
                hello,
                held,
                state <- new_waitable!(state, "rb_test_clt_state"),
                bufs <- new_spinlock_bh!(None, "rb_test_clt_bufs"),
                recv,
                send_cqe: Cqe::new(),
                rdma_cqe: Cqe::new(),
                lkey: AtomicU32::new(0),
            }? Error),
            GFP_KERNEL,
        )?;
        LIVE.fetch_add(1, Ordering::Relaxed);
        Ok(conn)
    }

    fn take_msg(&self, ms: u32, kind: Kind) -> Option<Msg> {
        let mut got = None;
        self.state.wait_for(ms, |s| {
            if let Some(m) = s.inbox.take() {
                if m.is(kind) {
                    got = Some(m);
                    return true;
                }
                pr_err!("{}: unexpected message {:?}\n", "rb_test_rdma_clt", m);
            }
            !matches!(s.phase, Phase::Established | Phase::Connecting)
        });
        got
    }

    fn take_rdma(&self, ms: u32) -> Option<(bool, u32)> {
        let mut got = None;
        self.state.wait_for(ms, |s| {
            got = s.rdma.take();
            got.is_some()
        });
        got
    }

    fn addr(&self, f: impl FnOnce(&Bufs) -> Result<rb_rdma::DmaAddr>) -> Result<rb_rdma::DmaAddr> {
        f(self.bufs.lock().as_ref().ok_or(ENODEV)?)
    }

    fn post_recv(id: &CmIdRef<Self>, i: usize) -> Result {
        let h = id.handler();
        let addr = h.addr(|b| b.recv.get(i).ok_or(EINVAL)?.dma_addr(0))?;
        let sge = [Sge::new(
            addr,
            PUSH_LEN as u32,
            h.lkey.load(Ordering::Relaxed),
        )];
        id.post_recv(|h: &Self| Ok([RecvWr::new(&h.recv[i].cqe, &sge)]))
    }

    fn send(id: &CmIdRef<Self>, msg: Msg, imm: Option<u32>) -> Result {
        let h = id.handler();
        let addr = {
            let mut b = h.bufs.lock();
            let b = b.as_mut().ok_or(ENODEV)?;
            b.send.write(0, &msg.encode())?;
            b.send.dma_addr(0)?
        };
        let sge = [Sge::new(addr, MSG as u32, h.lkey.load(Ordering::Relaxed))];
        let op = imm.map_or(SendOp::Send, SendOp::SendWithImm);
        id.post_send(|h: &Self| Ok([SendWr::new(&h.send_cqe, op, &sge, SendFlags::SIGNALED)]))
    }

    fn rdma(id: &CmIdRef<Self>, op: SendOp<'static>, local: usize, len: usize) -> Result {
        let h = id.handler();
        let addr = h.addr(|b| b.data.dma_addr(local))?;
        let sge = [Sge::new(addr, len as u32, h.lkey.load(Ordering::Relaxed))];
        id.post_send(|h: &Self| Ok([SendWr::new(&h.rdma_cqe, op, &sge, SendFlags::SIGNALED)]))
    }

    /// Bytes of receive buffer `idx` that differ from `pattern(seed)`.
    fn recv_diff(&self, idx: usize, seed: u8) -> Result<usize> {
        let g = self.bufs.lock();
        let buf = g.as_ref().ok_or(ENODEV)?.recv.get(idx).ok_or(EINVAL)?;
        let mut chunk = [0u8; 256];
        let mut bad = 0;
        for off in (0..PUSH_LEN).step_by(chunk.len()) {
            buf.read(off, &mut chunk)?;
            bad += chunk
                .iter()
                .enumerate()
                .filter(|(i, x)| **x != common::pattern(seed, off + i))
                .count();
        }
        Ok(bad)
    }

    /// Asks the server for push page `round % 2` and waits for it: the
    /// bytes that differ from its pattern, `None` if it did not come.
    fn push(&self, id: &CmIdRef<Self>, round: u32) -> Result<Option<usize>> {
        self.state.update(|s| {
            s.push_seed = PUSH_SEED + (round % 2) as u8;
            s.pushed = None;
        });
        Self::send(id, Msg::new(Kind::Push, round, 0, 0), None)?;
        let mut got = None;
        self.state.wait_for(10_000, |s| {
            got = s.pushed.take();
            got.is_some()
        });
        Ok(got)
    }

    /// Bytes of `data[local..local + len]` that differ from `pattern(seed)`.
    fn diff(&self, local: usize, len: usize, seed: u8) -> Result<usize> {
        let g = self.bufs.lock();
        let b = g.as_ref().ok_or(ENODEV)?;
        let mut chunk = [0u8; 256];
        let (mut off, mut bad) = (0, 0);
        while off < len {
            let n = chunk.len().min(len - off);
            b.data.read(local + off, &mut chunk[..n])?;
            bad += chunk[..n]
                .iter()
                .enumerate()
                .filter(|(i, x)| **x != common::pattern(seed, off + i))
                .count();
            off += n;
        }
        Ok(bad)
    }
}

impl CqeHandler<0> for RecvSlot {
    type Conn = CltConn;

    fn done(&self, id: &CmIdRef<CltConn>, wc: &Wc<'_>) {
        if !wc.is_ok() {
            if !wc.is_flushed() {
                pr_err!("recv failed: {}\n", wc.status_msg());
            }
            return;
        }
        let h = id.handler();
        match wc.byte_len() as usize {
            MSG => {
                let mut m = [0u8; MSG];
                let read = h
                    .bufs
                    .lock()
                    .as_ref()
                    .map(|b| b.recv[self.idx].read(0, &mut m));
                if matches!(read, Some(Ok(()))) {
                    let msg = Msg::decode(&m);
                    h.state.update(|s| s.inbox = Some(msg));
                }
            }
            PUSH_LEN => {
                let seed = h.state.lock().push_seed;
                let bad = h.recv_diff(self.idx, seed).unwrap_or(PUSH_LEN);
                h.state.update(|s| s.pushed = Some(bad));
            }
            n => pr_err!("bad receive: {} bytes\n", n),
        }
        if let Err(e) = CltConn::post_recv(id, self.idx) {
            pr_err!("re-posting receive failed: {:?}\n", e);
        }
    }
}

impl CqeHandler<1> for CltConn {
    type Conn = CltConn;

    fn done(&self, _id: &CmIdRef<CltConn>, wc: &Wc<'_>) {
        if !wc.is_ok() && !wc.is_flushed() {
            pr_err!("send failed: {}\n", wc.status_msg());
        }
    }
}

impl CqeHandler<2> for CltConn {
    type Conn = CltConn;

    fn done(&self, _id: &CmIdRef<CltConn>, wc: &Wc<'_>) {
        let r = (wc.is_ok(), wc.status());
        if !wc.is_ok() {
            pr_info!("RDMA completion: {}\n", wc.status_msg());
        }
        self.state.update(|s| s.rdma = Some(r));
    }
}

impl ActiveConn for CltConn {
    const REUSEADDR: bool = true;
    const RESOLVE_MS: u32 = 2000;
    const RNR_RETRY_COUNT: u8 = 7;

    fn private_data(&self) -> &[u8] {
        self.hello
    }

    fn setup(id: &CmIdRef<Self>) -> Result {
        let dev = id.device().ok_or(ENODEV)?;
        let pd = Arc::new(Pd::new(dev, 0)?, GFP_KERNEL)?;
        let mut recv = KVec::with_capacity(NRECV, GFP_KERNEL)?;
        for _ in 0..NRECV {
            recv.push(
                DmaBuf::new(dev, PUSH_LEN, DmaDirection::FromDevice)?,
                GFP_KERNEL,
            )?;
        }
        let send = DmaBuf::new(dev, MSG, DmaDirection::ToDevice)?;
        let data = DmaBuf::new(dev, DATA, DmaDirection::Bidirectional)?;
        let h = id.handler();
        h.lkey.store(pd.local_dma_lkey(), Ordering::Relaxed);
        id.create_qp(&pd, &active::qp_attr(NRECV))?;
        *h.bufs.lock() = Some(Bufs {
            _pd: pd,
            recv,
            send,
            data,
        });
        for i in 0..NRECV {
            Self::post_recv(id, i)?;
        }
        Ok(())
    }

    fn established(&self, private_data: &[u8]) {
        let ok = private_data == WELCOME || private_data.get(..WELCOME.len()) == Some(WELCOME);
        self.state.update(|s| {
            s.phase = if ok {
                Phase::Established
            } else {
                Phase::Failed(-71)
            }
        });
    }

    fn rejected(&self, private_data: Option<&[u8]>) {
        self.state.update(|s| {
            s.phase = Phase::Rejected;
            if let Some(d) = private_data {
                let n = d.len().min(s.reject_data.len());
                s.reject_data[..n].copy_from_slice(&d[..n]);
                s.reject_len = n;
            }
        });
    }

    fn failed(&self, errno: i32) {
        self.state.update(|s| s.phase = Phase::Failed(errno));
    }

    fn closed(&self) {
        self.state.update(|s| s.phase = Phase::Closed);
        if let Some(held) = &self.held {
            // Drop the held connection here, inside its own handler.
            let mine = held.conn.lock().take();
            if mine.is_some() {
                pr_info!("{}: closed, dropping it\n", self.name);
            }
            drop(mine);
        }
    }
}

impl CmHandler for CltConn {
    fn event(&self, id: &CmIdRef<Self>, event: &CmEvent<'_>) {
        pr_info!("{}: event {}\n", self.name, event.name());
        if let Err(e) = active::event(self, id, event) {
            pr_err!("{}: {} handling failed: {:?}\n", self.name, event.name(), e);
            self.failed(e.to_errno());
        }
    }
}

struct Checks {
    n: u32,
    failed: u32,
}

impl Checks {
    fn check(&mut self, ok: bool, what: core::fmt::Arguments<'_>) -> bool {
        self.n += 1;
        if ok {
            pr_info!("ok {} - {}\n", self.n, what);
        } else {
            self.failed += 1;
            pr_err!("not ok {} - {}\n", self.n, what);
        }
        ok
    }
}

fn connect(conn: &Arc<CltConn>) -> Result<CmId<CltConn>> {
    let id = active::connect(conn.clone(), &SockAddr::ipv4(SERVER, common::PORT))?;
    conn.state
        .wait_for(30_000, |s| s.phase != Phase::Connecting);
    Ok(id)
}

fn phase(conn: &CltConn) -> Phase {
    conn.state.lock().phase
}

fn run_a(c: &mut Checks) -> Result {
    let conn = CltConn::new("A", HELLO, None)?;
    let id = connect(&conn)?;
    if !c.check(
        phase(&conn) == Phase::Established,
        format_args!(
            "A: connects, accept carries WELCOME (phase {:?})",
            phase(&conn)
        ),
    ) {
        return Ok(());
    }
    let Some(info) = conn.take_msg(10_000, Kind::Info) else {
        c.check(false, format_args!("A: server sends its MR info"));
        return Ok(());
    };
    let (rkey, iova, len) = (info.a, info.b, info.c & 0xff_ffff_ffff);
    c.check(
        len as usize == 4 * common::CHUNK,
        format_args!(
            "A: MR covers the 4 chunks (rkey {:#x}, {} bytes)",
            rkey, len
        ),
    );

    CltConn::send(&id, Msg::new(Kind::Ping, 41, 0xfeed, 0), Some(IMM_PING))?;
    let pong = conn.take_msg(10_000, Kind::Pong);
    c.check(
        matches!(pong, Some(m) if m.a == 42 && m.b == 0xfeed),
        format_args!("A: SEND with IMM answered by SEND ({:?})", pong),
    );

    {
        let mut g = conn.bufs.lock();
        let b = g.as_mut().ok_or(ENODEV)?;
        let mut chunk = [0u8; 256];
        let mut off = 0;
        while off < WRITE_LEN {
            for (i, x) in chunk.iter_mut().enumerate() {
                *x = common::pattern(CLT_SEED, off + i);
            }
            b.data.write(off, &chunk)?;
            off += chunk.len();
        }
    }
    let remote = iova + WRITE_OFF as u64;
    CltConn::rdma(
        &id,
        SendOp::RdmaWriteWithImm {
            remote_addr: remote,
            rkey,
            imm: IMM_WRITTEN | WRITE_LEN as u32,
        },
        0,
        WRITE_LEN,
    )?;
    let wr = conn.take_rdma(10_000);
    let check = conn.take_msg(10_000, Kind::WriteCheck);
    c.check(
        matches!(wr, Some((true, _)))
            && matches!(check, Some(m) if m.a == 0 && m.b == WRITE_LEN as u64),
        format_args!(
            "A: RDMA WRITE with IMM of {} bytes across chunks arrives intact ({:?})",
            WRITE_LEN, check
        ),
    );

    CltConn::rdma(
        &id,
        SendOp::RdmaRead {
            remote_addr: remote,
            rkey,
        },
        RD,
        WRITE_LEN,
    )?;
    let rd = conn.take_rdma(10_000);
    let bad = conn.diff(RD, WRITE_LEN, CLT_SEED)?;
    c.check(
        matches!(rd, Some((true, _))) && bad == 0,
        format_args!("A: RDMA READ returns the written bytes ({} differ)", bad),
    );

    CltConn::rdma(
        &id,
        SendOp::RdmaRead {
            remote_addr: iova + SRV_OFF as u64,
            rkey,
        },
        RD,
        common::CHUNK,
    )?;
    let rd = conn.take_rdma(10_000);
    let bad = conn.diff(RD, common::CHUNK, SRV_SEED)?;
    c.check(
        matches!(rd, Some((true, _))) && bad == 0,
        format_args!(
            "A: RDMA READ returns the server's own bytes ({} differ)",
            bad
        ),
    );

    for round in 0..2 {
        let bad = conn.push(&id, round)?;
        c.check(
            bad == Some(0),
            format_args!(
                "A: a page sent from an MR registered under a new key arrives intact \
                 (round {}, {:?} differ)",
                round, bad
            ),
        );
    }

    CltConn::send(&id, Msg::new(Kind::Rekey, 0, 0, 0), None)?;
    let info2 = conn.take_msg(10_000, Kind::Info);
    let new = info2.map(|m| m.a).unwrap_or(rkey);
    c.check(
        new != rkey && info2.map(|m| m.c >> 40) == Some(u64::from(rkey)),
        format_args!(
            "A: LOCAL_INV + REG_MR re-keys the MR ({:#x} -> {:#x})",
            rkey, new
        ),
    );

    CltConn::rdma(
        &id,
        SendOp::RdmaRead {
            remote_addr: remote,
            rkey: new,
        },
        RD,
        WRITE_LEN,
    )?;
    let rd = conn.take_rdma(10_000);
    let bad = conn.diff(RD, WRITE_LEN, CLT_SEED)?;
    c.check(
        matches!(rd, Some((true, _))) && bad == 0,
        format_args!("A: RDMA READ with the new key works ({} differ)", bad),
    );

    CltConn::rdma(
        &id,
        SendOp::RdmaRead {
            remote_addr: remote,
            rkey,
        },
        RD,
        4096,
    )?;
    let rd = conn.take_rdma(10_000);
    c.check(
        matches!(rd, Some((false, _))),
        format_args!("A: RDMA READ with the invalidated key fails ({:?})", rd),
    );

    drop(id);
    c.check(
        LIVE.load(Ordering::Relaxed) == 1,
        format_args!("A: dropping the CmId releases the connection"),
    );
    drop(conn);
    Ok(())
}

fn run_reject(c: &mut Checks) -> Result {
    let conn = CltConn::new("R", b"rb-test-nope", None)?;
    let id = connect(&conn)?;
    let (ph, data) = {
        let s = conn.state.lock();
        let mut d = [0u8; 32];
        d[..s.reject_len].copy_from_slice(&s.reject_data[..s.reject_len]);
        (s.phase, (d, s.reject_len))
    };
    let want = b"rb-test: who are you?";
    c.check(
        ph == Phase::Rejected && data.0.get(..want.len()) == Some(&want[..]),
        format_args!(
            "R: a wrong handshake is rejected with the server's private data ({:?})",
            ph
        ),
    );
    drop(id);
    Ok(())
}

fn run_b(c: &mut Checks, held: &Arc<Held>) -> Result {
    let conn = CltConn::new("B", HELLO, Some(held.clone()))?;
    let id = connect(&conn)?;
    let up = phase(&conn) == Phase::Established && conn.take_msg(10_000, Kind::Info).is_some();
    c.check(up, format_args!("B: connects and stays up"));
    *held.conn.lock() = Some(id);
    Ok(())
}

struct CltModule {
    held: Arc<Held>,
}

impl kernel::Module for CltModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let held = Arc::pin_init(pin_init!(Held { conn <- new_mutex!(None) }), GFP_KERNEL)?;
        let mut c = Checks { n: 0, failed: 0 };
        run_a(&mut c)?;
        run_reject(&mut c)?;
        run_b(&mut c, &held)?;
        if c.failed != 0 {
            pr_err!("{} of {} checks failed\n", c.failed, c.n);
            let conn = held.conn.lock().take();
            drop(conn);
            return Err(EIO);
        }
        pr_info!("all {} checks passed\n", c.n);
        Ok(Self { held })
    }
}

impl Drop for CltModule {
    fn drop(&mut self) {
        let conn = self.held.conn.lock().take();
        drop(conn);
        pr_info!("exit, live objects {}\n", LIVE.load(Ordering::Relaxed));
    }
}
