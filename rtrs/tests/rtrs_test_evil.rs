// SPDX-License-Identifier: GPL-2.0-or-later

//! rtrs-test-evil: an RTRS client that speaks the protocol wrongly on
//! purpose, over raw rdma_cm and verbs (no rtrs-client), for the selftest
//! `rtrs_evil_client.sh`. It talks to an rtrs-server (ours or C's) with
//! rtrs-test-srv on top, on `192.0.2.1:port_nr`.
//!
//! Writing a scenario's name to `/sys/class/rtrs-test-evil/ctl/run` plays it
//! on new connections of a new session (fresh uuids) and returns when the
//! server has answered, or did not within the scenario's time: `ctl/result`
//! then shows `<scenario>: <outcome>`, the outcome being what the evil
//! client saw (`rejected <errno>`, `closed`: the server disconnected the
//! path, `alive`: the path still up, or the counts of a flood). Every
//! connection of the scenario is gone when the write returns. The
//! scenarios are [`SCENARIOS`].

#![deny(unsafe_code)]

use core::fmt::Write;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::c_str;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{Arc, Mutex};
use kernel::{new_mutex, try_pin_init};

#[path = "rtrs_test_msg.rs"]
#[allow(dead_code)]
mod msg;

#[path = "../../rust-bindings/tests/rb_test_rdma_active.rs"]
mod active;

#[path = "rtrs_test_ctl.rs"]
mod ctl;

use active::ActiveConn;
use rb::net::SockAddr;
use rb::param::{module_param, UshortParam};
use rb::sync::{new_spinlock_bh, new_waitable, SpinLockBh, Waitable};
use rb::sysfs::{attributes, Attribute, Attributes, Device, Page};
use rb_rdma::cq::impl_has_cqe;
use rb_rdma::{
    CmEvent, CmHandler, CmId, CmIdRef, Cqe, CqeHandler, DmaBuf, DmaDirection, Pd, RecvWr,
    SendFlags, SendOp, SendWr, Sge, Wc, WcOpcode,
};
use rtrs_proto::ext::ReadRsp;
use rtrs_proto::imm::{ChunkLayout, Imm};
use rtrs_proto::msg::{
    ConnReq, ConnRsp, InfoReq, InfoRsp, MsgType, Rbuf, RdmaRead, RdmaWrite, SgDesc, SgList, MAGIC,
    PROTO_VER,
};

module! {
    type: Evil,
    name: "rtrs_test_evil",
    author: "rtrs-rs developers",
    description: "RTRS test: a client that sends malformed and malicious RTRS",
    license: "GPL",
}

module_param! {
    /// The server's port.
    static PORT_NR: UshortParam = UshortParam::new(msg::PORT);
    name: port_nr, perm: 0o444, desc: "The server's port (default: 1235)";
}

/// The server guest, on link 0.
const SERVER: [u8; 4] = [192, 0, 2, 1];
/// Receives kept posted on a connection that does IO.
const NRECV: usize = 8;
/// Size of a receive buffer: an INFO_RSP with a descriptor per chunk
/// (`always_invalidate`) for up to 1000 chunks.
const RECV_SIZE: usize = 16 * 1024;
/// Size of the local buffer messages are written from.
const DATA_SIZE: usize = 4096;
/// How long the server gets to connect, answer, or close.
const WAIT_MS: u32 = 20_000;
/// How long a path must stay up after the evil act to count as `alive`
/// (the servers close within a second when they do).
const ALIVE_MS: u32 = 6_000;

/// The scenarios, as written to `ctl/run`.
const SCENARIOS: &[&str] = &[
    "good",
    "bad_magic",
    "bad_version",
    "bad_cid",
    "too_many_cons",
    "not_first",
    "dup_cid",
    "info_early",
    "info_twice",
    "info_cid1",
    "info_bad_name",
    "unknown_type",
    "usr_len_past_off",
    "read_sg_cnt",
    "read_desc_len",
    "off_past_chunk",
    "msg_at_chunk_end",
    "msg_id_past_qd",
    "chunk_in_use",
    "flood_same",
    "flood_new",
    "zombie",
    "fences",
    "read_rsp",
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Connecting,
    Established,
    /// Rejected, with the errno of the server's reject message.
    Rejected(i32),
    /// Address, route or connect error, or a failed request.
    Failed(i32),
    /// Disconnected (by the server, normally).
    Closed,
}

struct State {
    phase: Phase,
    rsp: Option<ConnRsp>,
    /// A SEND without IMM arrived (INFO_RSP): its receive buffer and length.
    info: Option<(usize, usize)>,
    /// IO responses received.
    io_rsps: u32,
    /// The last IO response's errno.
    last_errno: i32,
    /// FENCE_ACKs received (RTRS 2.1).
    fence_acks: u32,
    /// READ_RSPs received (RTRS 2.1), and the last one.
    read_rsps: u32,
    last_read_rsp: Option<ReadRsp>,
}

struct Bufs {
    pd: Arc<Pd>,
    recv: KVec<DmaBuf>,
    send: DmaBuf,
    data: DmaBuf,
}

/// A receive buffer's completion entry.
type RecvSlot = active::RecvSlot<Conn>;
impl_has_cqe!(impl HasCqe<0> for RecvSlot { self.cqe });

/// One connection of the evil client.
///
/// # Locking
///
/// `state` (a `Waitable`: the scenario waits on it for the phase and the
/// answers, which completions and CM handlers write) and `bufs` (bh-safe:
/// completions post from it) are leaves, never held together.
#[pin_data]
struct Conn {
    /// The CON_REQ private data.
    req: [u8; ConnReq::SIZE],
    /// Whether it gets buffers and receives (else it only connects).
    io: bool,
    #[pin]
    state: Waitable<State>,
    #[pin]
    bufs: SpinLockBh<Option<Bufs>>,
    recv: KVec<RecvSlot>,
    send_cqe: Cqe<Conn, 1>,
}
impl_has_cqe!(impl HasCqe<1> for Conn { self.send_cqe });

impl Conn {
    fn new(req: [u8; ConnReq::SIZE], io: bool) -> Result<Arc<Self>> {
        let recv = active::recv_slots(if io { NRECV } else { 0 })?;
        let state = State {
            phase: Phase::Connecting,
            rsp: None,
            info: None,
            io_rsps: 0,
            last_errno: 0,
            fence_acks: 0,
            read_rsps: 0,
            last_read_rsp: None,
        };
        Arc::pin_init(
            try_pin_init!(Conn {
                req,
                io,
                state <- new_waitable!(state, "rtrs_evil_state"),
                bufs <- new_spinlock_bh!(None, "rtrs_evil_bufs"),
                recv,
                send_cqe: Cqe::new(),
            }? Error),
            GFP_KERNEL,
        )
    }

    fn phase(&self) -> Phase {
        self.state.lock().phase
    }

    fn lkey(&self) -> Result<u32> {
        Ok(self.bufs.lock().as_ref().ok_or(ENODEV)?.pd.local_dma_lkey())
    }

    fn post_recv(id: &CmIdRef<Self>, i: usize) -> Result {
        let h = id.handler();
        let addr = {
            let b = h.bufs.lock();
            b.as_ref()
                .ok_or(ENODEV)?
                .recv
                .get(i)
                .ok_or(EINVAL)?
                .dma_addr(0)?
        };
        let sge = [Sge::new(addr, RECV_SIZE as u32, h.lkey()?)];
        id.post_recv(|h: &Self| Ok([RecvWr::new(&h.recv[i].cqe, &sge)]))
    }

    /// SENDs `msg`.
    fn send(id: &CmIdRef<Self>, msg: &[u8]) -> Result {
        let h = id.handler();
        let addr = {
            let mut b = h.bufs.lock();
            let b = b.as_mut().ok_or(ENODEV)?;
            b.send.write(0, msg)?;
            b.send.dma_addr(0)?
        };
        let sge = [Sge::new(addr, msg.len() as u32, h.lkey()?)];
        id.post_send(|h: &Self| {
            Ok([SendWr::new(
                &h.send_cqe,
                SendOp::Send,
                &sge,
                SendFlags::SIGNALED,
            )])
        })
    }

    /// RDMA-writes `bytes` to `remote` with immediate data `imm`; nothing
    /// written if `bytes` is empty (then the key is not even looked at).
    fn write_imm(id: &CmIdRef<Self>, remote: Rbuf, bytes: &[u8], imm: u32) -> Result {
        let h = id.handler();
        let addr = {
            let mut b = h.bufs.lock();
            let b = b.as_mut().ok_or(ENODEV)?;
            b.data.write(0, bytes)?;
            b.data.dma_addr(0)?
        };
        let sge = [Sge::new(addr, bytes.len() as u32, h.lkey()?)];
        let sges: &[Sge] = if bytes.is_empty() { &[] } else { &sge };
        let op = SendOp::RdmaWriteWithImm {
            remote_addr: remote.addr,
            rkey: remote.rkey,
            imm,
        };
        id.post_send(|h: &Self| Ok([SendWr::new(&h.send_cqe, op, sges, SendFlags::SIGNALED)]))
    }

    /// Acknowledges a heartbeat, so that the server keeps the path.
    fn hb_ack(id: &CmIdRef<Self>) -> Result {
        let op = SendOp::RdmaWriteWithImm {
            remote_addr: 0,
            rkey: 0,
            imm: Imm::HbAck.encode(),
        };
        id.post_send(|h: &Self| Ok([SendWr::new(&h.send_cqe, op, &[], SendFlags::SIGNALED)]))
    }
}

impl CqeHandler<0> for RecvSlot {
    type Conn = Conn;

    fn done(&self, id: &CmIdRef<Conn>, wc: &Wc<'_>) {
        let h = id.handler();
        if !wc.is_ok() {
            if !wc.is_flushed() {
                pr_info!("receive failed: {}\n", wc.status_msg());
            }
            h.state.update(|s| {
                if s.phase == Phase::Established {
                    s.phase = Phase::Failed(wc.status() as i32)
                }
            });
            return;
        }
        match (wc.opcode(), wc.imm_data()) {
            (WcOpcode::Recv, None) if wc.byte_len() as usize == ReadRsp::SIZE => {
                // A READ_RSP of RTRS 2.1 (an INFO_RSP is never 12 bytes).
                let mut b = [0u8; ReadRsp::SIZE];
                let read = h
                    .bufs
                    .lock()
                    .as_ref()
                    .and_then(|b| b.recv.get(self.idx))
                    .map(|buf| buf.read(0, &mut b));
                let rsp = match read {
                    Some(Ok(())) => ReadRsp::decode(&b).ok(),
                    _ => None,
                };
                h.state.update(|s| {
                    s.read_rsps += 1;
                    s.last_read_rsp = rsp;
                });
            }
            (WcOpcode::Recv, None) => {
                let len = wc.byte_len() as usize;
                h.state.update(|s| s.info = Some((self.idx, len)));
                // Left unposted: the INFO_RSP stays in its buffer.
                return;
            }
            (_, Some(imm)) => match Imm::decode(imm) {
                Imm::IoRsp { errno, .. } => h.state.update(|s| {
                    s.io_rsps += 1;
                    s.last_errno = errno;
                }),
                Imm::FenceAck { .. } => h.state.update(|s| s.fence_acks += 1),
                Imm::HbMsg => {
                    if let Err(e) = Conn::hb_ack(id) {
                        pr_info!("heartbeat ack failed: {:?}\n", e);
                    }
                }
                _ => {}
            },
            _ => {}
        }
        if let Err(e) = Conn::post_recv(id, self.idx) {
            pr_info!("re-posting a receive failed: {:?}\n", e);
        }
    }
}

impl CqeHandler<1> for Conn {
    type Conn = Conn;

    fn done(&self, _id: &CmIdRef<Conn>, wc: &Wc<'_>) {
        if !wc.is_ok() && !wc.is_flushed() {
            pr_info!("send failed: {}\n", wc.status_msg());
            self.state.update(|s| {
                if s.phase == Phase::Established {
                    s.phase = Phase::Failed(wc.status() as i32)
                }
            });
        }
    }
}

impl ActiveConn for Conn {
    const REUSEADDR: bool = false;
    const RESOLVE_MS: u32 = 5000;
    const RNR_RETRY_COUNT: u8 = 3;

    fn private_data(&self) -> &[u8] {
        &self.req
    }

    fn setup(id: &CmIdRef<Self>) -> Result {
        let h = id.handler();
        let dev = id.device().ok_or(ENODEV)?;
        let pd = Arc::new(Pd::new(dev, 0)?, GFP_KERNEL)?;
        let (nrecv, size) = if h.io { (NRECV, RECV_SIZE) } else { (0, 64) };
        let mut recv = KVec::with_capacity(nrecv, GFP_KERNEL)?;
        for _ in 0..nrecv {
            recv.push(
                DmaBuf::new(dev, RECV_SIZE, DmaDirection::FromDevice)?,
                GFP_KERNEL,
            )?;
        }
        let send = DmaBuf::new(dev, InfoReq::SIZE.max(size), DmaDirection::ToDevice)?;
        let data = DmaBuf::new(
            dev,
            DATA_SIZE.min(size.max(64) * 64),
            DmaDirection::ToDevice,
        )?;
        id.create_qp(&pd, &active::qp_attr(NRECV))?;
        *h.bufs.lock() = Some(Bufs {
            pd,
            recv,
            send,
            data,
        });
        for i in 0..nrecv {
            Self::post_recv(id, i)?;
        }
        Ok(())
    }

    fn established(&self, private_data: &[u8]) {
        let rsp = ConnRsp::decode(private_data).ok();
        self.state.update(|s| {
            s.rsp = rsp;
            s.phase = if rsp.is_some() {
                Phase::Established
            } else {
                Phase::Failed(-71)
            };
        });
    }

    fn rejected(&self, private_data: Option<&[u8]>) {
        let errno = private_data.map_or(0, ConnRsp::reject_errno);
        self.state.update(|s| s.phase = Phase::Rejected(errno));
    }

    fn failed(&self, errno: i32) {
        self.state.update(|s| s.phase = Phase::Failed(errno));
    }

    fn closed(&self) {
        self.state.update(|s| {
            if !matches!(s.phase, Phase::Rejected(_)) {
                s.phase = Phase::Closed
            }
        });
    }
}

impl CmHandler for Conn {
    fn event(&self, id: &CmIdRef<Self>, event: &CmEvent<'_>) {
        if let Err(e) = active::event(self, id, event) {
            pr_info!("{} handling failed: {:?}\n", event.name(), e);
            self.failed(e.to_errno());
        }
    }
}

/// A connection and its id.
struct Link {
    conn: Arc<Conn>,
    id: CmId<Conn>,
}

/// Starts connecting with CON_REQ `req`; [`Link::settle`] waits for the
/// answer.
fn start(req: [u8; ConnReq::SIZE], io: bool) -> Result<Link> {
    let conn = Conn::new(req, io)?;
    let id = active::connect(conn.clone(), &SockAddr::ipv4(SERVER, PORT_NR.value()))?;
    Ok(Link { conn, id })
}

impl Link {
    fn settle(&self) -> Phase {
        self.conn
            .state
            .wait_for(WAIT_MS, |s| s.phase != Phase::Connecting);
        self.conn.phase()
    }
}

/// A CON_REQ, encoded.
fn con_req(cid: u16, cid_num: u16, sess: [u8; 16], paths: [u8; 16], first: bool) -> [u8; 56] {
    con_req_v(PROTO_VER, cid, cid_num, sess, paths, first)
}

/// A CON_REQ of `version`, encoded.
fn con_req_v(
    version: u16,
    cid: u16,
    cid_num: u16,
    sess: [u8; 16],
    paths: [u8; 16],
    first: bool,
) -> [u8; 56] {
    let mut b = [0u8; ConnReq::SIZE];
    let _ = ConnReq {
        version,
        cid,
        cid_num,
        recon_cnt: 0,
        sess_uuid: sess,
        paths_uuid: paths,
        first_conn: first,
    }
    .encode(&mut b);
    b
}

/// A path of the evil client: its connections, and once INFO_RSP came, the
/// server's chunks.
struct EvilPath {
    links: KVec<Link>,
    rsp: ConnRsp,
    rbufs: KVec<Rbuf>,
    layout: ChunkLayout,
}

static NAME_SEQ: AtomicU32 = AtomicU32::new(0);

impl EvilPath {
    /// Connects `connect` of the `cid_num` connections of a new path of a
    /// new session.
    fn connect(cid_num: u16, connect: u16) -> Result<Self> {
        Self::connect_v(PROTO_VER, cid_num, connect)
    }

    /// [`EvilPath::connect`], offering `version`.
    fn connect_v(version: u16, cid_num: u16, connect: u16) -> Result<Self> {
        let (sess, paths) = (rb::random::uuid(), rb::random::uuid());
        let mut links = KVec::new();
        for cid in 0..connect {
            let l = start(con_req_v(version, cid, cid_num, sess, paths, true), true)?;
            let ph = l.settle();
            links.push(l, GFP_KERNEL)?;
            if ph != Phase::Established {
                pr_info!("cid {}: {:?}\n", cid, ph);
                return Err(rb::errno::ECONNREFUSED());
            }
        }
        let rsp = links[0]
            .conn
            .state
            .lock()
            .rsp
            .ok_or_else(rb::errno::EPROTO)?;
        Ok(Self {
            links,
            rsp,
            rbufs: KVec::new(),
            layout: ChunkLayout::new(u32::from(rsp.queue_depth))
                .map_err(|_| rb::errno::EPROTO())?,
        })
    }

    fn id(&self, cid: usize) -> &CmIdRef<Conn> {
        &self.links[cid].id
    }

    /// SENDs an INFO_REQ naming the path `name` on connection `cid`.
    fn send_info(&self, cid: usize, name: &[u8]) -> Result {
        let mut b = [0u8; InfoReq::SIZE];
        InfoReq::new(name)
            .and_then(|r| r.encode(&mut b))
            .map_err(|_| EINVAL)?;
        Conn::send(self.id(cid), &b)
    }

    /// Waits for the INFO_RSP and cuts the chunks out of it.
    fn take_info(&mut self) -> Result {
        let c = &self.links[0].conn;
        c.state.wait_for(WAIT_MS, |s| {
            s.info.is_some() || s.phase != Phase::Established
        });
        let (idx, len) = c.state.lock().info.ok_or_else(rb::errno::ETIMEDOUT)?;
        let mut buf = KVec::from_elem(0u8, len.min(RECV_SIZE), GFP_KERNEL)?;
        c.bufs
            .lock()
            .as_ref()
            .ok_or(ENODEV)?
            .recv
            .get(idx)
            .ok_or(EINVAL)?
            .read(0, &mut buf)?;
        let rsp = InfoRsp::decode(&buf).map_err(|_| rb::errno::EPROTO())?;
        let mut rbufs = KVec::from_elem(Rbuf::default(), self.rsp.queue_depth.into(), GFP_KERNEL)?;
        rsp.map_rbufs(self.rsp.chunk_size(), &mut rbufs)
            .map_err(|_| rb::errno::EPROTO())?;
        self.rbufs = rbufs;
        Ok(())
    }

    /// A connected path of `cid_num` connections named `evil-<n>`.
    fn full(cid_num: u16) -> Result<Self> {
        Self::full_v(PROTO_VER, cid_num)
    }

    /// [`EvilPath::full`], offering `version`.
    fn full_v(version: u16, cid_num: u16) -> Result<Self> {
        let mut p = Self::connect_v(version, cid_num, cid_num)?;
        let mut name = [0u8; 32];
        let n = NAME_SEQ.fetch_add(1, Ordering::Relaxed);
        let len = {
            let mut w = SliceWriter::new(&mut name);
            let _ = write!(w, "evil-{}", n);
            w.len()
        };
        p.send_info(0, &name[..len])?;
        p.take_info()?;
        pr_info!(
            "path evil-{} connected, queue depth {}\n",
            n,
            p.rsp.queue_depth
        );
        Ok(p)
    }

    /// Places `bytes` at `off` of chunk `chunk` and sends `imm` on `cid`.
    fn put(&self, cid: usize, chunk: u32, off: u32, bytes: &[u8], imm: u32) -> Result {
        let mut rb = *self.rbufs.get(chunk as usize).ok_or(EINVAL)?;
        rb.addr = rb.addr.wrapping_add(u64::from(off));
        Conn::write_imm(self.id(cid), rb, bytes, imm)
    }

    /// An IO request: `usr` then the RTRS message `rtrs` placed at the
    /// start of chunk `chunk`, announced with the right IMM.
    fn request(&self, chunk: u32, usr: &[u8], rtrs: &[u8]) -> Result {
        let mut b = [0u8; 256];
        let n = usr.len() + rtrs.len();
        b.get_mut(..usr.len()).ok_or(EINVAL)?.copy_from_slice(usr);
        b.get_mut(usr.len()..n).ok_or(EINVAL)?.copy_from_slice(rtrs);
        let imm = self
            .layout
            .io_req_imm(chunk, usr.len() as u32)
            .map_err(|_| EINVAL)?;
        self.put(0, chunk, 0, &b[..n], imm)
    }

    /// Sends the raw IO request IMM payload `payload`, without data.
    fn imm_only(&self, payload: u32) -> Result {
        let imm = Imm::IoReq { payload }.encode();
        Conn::write_imm(self.id(0), Rbuf::default(), &[], imm)
    }

    /// Whether any connection of the path went down within `ms`.
    fn closed_within(&self, ms: u32) -> bool {
        let c = &self.links[0].conn;
        c.state.wait_for(ms, |s| s.phase != Phase::Established)
            || self
                .links
                .iter()
                .any(|l| l.conn.phase() != Phase::Established)
    }

    /// `closed` if the server closed the path within [`ALIVE_MS`], else
    /// `alive`.
    fn outcome(&self, out: &mut Outcome) {
        if self.closed_within(ALIVE_MS) {
            out.say(format_args!("closed"));
        } else {
            out.say(format_args!("alive"));
        }
    }

    fn io_rsps(&self) -> (u32, i32) {
        let s = self.links[0].conn.state.lock();
        (s.io_rsps, s.last_errno)
    }
}

/// Formats into a byte slice, cutting what does not fit.
struct SliceWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> SliceWriter<'a> {
    fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    fn len(&self) -> usize {
        self.len
    }
}

impl Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = self.buf.len() - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// What a scenario tells `ctl/result`.
struct Outcome {
    text: [u8; 128],
    len: usize,
}

impl Outcome {
    fn say(&mut self, args: core::fmt::Arguments<'_>) {
        let mut w = SliceWriter::new(&mut self.text[self.len..]);
        let _ = w.write_fmt(args);
        self.len += w.len();
    }
}

/// A rtrs-test-srv user message.
fn usr(op: msg::Op, offset: u64, len: u32) -> [u8; msg::LEN] {
    msg::Msg { op, offset, len }.encode()
}

/// A CON_REQ of a new session with one field broken by `f`.
fn bad_con_req(out: &mut Outcome, f: impl FnOnce(&mut [u8; 56])) -> Result {
    let mut req = con_req(0, 1, rb::random::uuid(), rb::random::uuid(), true);
    f(&mut req);
    let l = start(req, false)?;
    match l.settle() {
        Phase::Rejected(e) => out.say(format_args!("rejected {}", e)),
        other => out.say(format_args!("{:?}", other)),
    }
    Ok(())
}

fn flood(out: &mut Outcome, same: bool, n: usize, batch: usize) -> Result {
    let (sess, paths) = (rb::random::uuid(), rb::random::uuid());
    let (mut est, mut rej, mut other) = (0, 0, 0);
    let mut done = 0;
    let mut kept = KVec::new();
    while done < n {
        let mut links = KVec::new();
        for _ in 0..batch.min(n - done) {
            let req = if same {
                con_req(0, 2, sess, paths, true)
            } else {
                con_req(0, 2, rb::random::uuid(), rb::random::uuid(), true)
            };
            links.push(start(req, false)?, GFP_KERNEL)?;
        }
        for l in links.iter() {
            match l.settle() {
                Phase::Established => est += 1,
                Phase::Rejected(_) => rej += 1,
                _ => other += 1,
            }
        }
        done += links.len();
        // With the same uuids, the first path stays up until the end.
        if same {
            kept.push(links, GFP_KERNEL)?;
        }
    }
    drop(kept);
    out.say(format_args!(
        "established {} rejected {} other {}",
        est, rej, other
    ));
    Ok(())
}

fn run(name: &str, out: &mut Outcome) -> Result {
    use msg::Op;
    out.say(format_args!("{}: ", name));
    match name {
        "good" => {
            // A correct write then read of 512 bytes: the module is right.
            let p = EvilPath::full(2)?;
            let data = [0x5au8; 512];
            let mut b = [0u8; 512 + msg::LEN + RdmaWrite::SIZE];
            b[..512].copy_from_slice(&data);
            b[512..512 + msg::LEN].copy_from_slice(&usr(Op::Write, 0, 512));
            let _ = RdmaWrite {
                usr_len: msg::LEN as u16,
            }
            .encode(&mut b[512 + msg::LEN..]);
            let imm = p
                .layout
                .io_req_imm(1, (512 + msg::LEN) as u32)
                .map_err(|_| EINVAL)?;
            p.put(1, 1, 0, &b, imm)?;
            // Responses come on the connection of the request.
            let c1 = &p.links[1].conn;
            c1.state
                .wait_for(WAIT_MS, |s| s.io_rsps > 0 || s.phase != Phase::Established);
            let (n, e) = {
                let s = c1.state.lock();
                (s.io_rsps, s.last_errno)
            };
            out.say(format_args!("responses {} errno {}", n, e));
        }
        "bad_magic" => bad_con_req(out, |r| r[2..4].copy_from_slice(&(MAGIC ^ 1).to_le_bytes()))?,
        "bad_version" => bad_con_req(out, |r| r[4..6].copy_from_slice(&0x0300u16.to_le_bytes()))?,
        "bad_cid" => bad_con_req(out, |r| {
            r[6..8].copy_from_slice(&3u16.to_le_bytes());
            r[8..10].copy_from_slice(&2u16.to_le_bytes());
        })?,
        "too_many_cons" => bad_con_req(out, |r| r[8..10].copy_from_slice(&5000u16.to_le_bytes()))?,
        "not_first" => bad_con_req(out, |r| r[44] = 0)?,
        "dup_cid" => {
            // cid 0 twice on the same path.
            let (sess, paths) = (rb::random::uuid(), rb::random::uuid());
            let a = start(con_req(0, 2, sess, paths, true), false)?;
            let first = a.settle();
            let b = start(con_req(0, 2, sess, paths, true), false)?;
            match (first, b.settle()) {
                (Phase::Established, Phase::Rejected(e)) => out.say(format_args!("rejected {}", e)),
                (x, y) => out.say(format_args!("{:?} {:?}", x, y)),
            }
        }
        "zombie" => {
            // A path left connecting (cid 0 of 2, no INFO_REQ) past the
            // server's 30 s; then cid 0 of it again, which is refused and
            // closes the zombie, and a third try, which connects.
            let (sess, paths) = (rb::random::uuid(), rb::random::uuid());
            let a = start(con_req(0, 2, sess, paths, true), false)?;
            if a.settle() != Phase::Established {
                out.say(format_args!("{:?}", a.conn.phase()));
                return Ok(());
            }
            rb::random::msleep(31_000);
            let b = start(con_req(0, 2, sess, paths, true), false)?;
            match b.settle() {
                Phase::Rejected(e) => out.say(format_args!("rejected {}", e)),
                x => out.say(format_args!("{:?}", x)),
            }
            let closed = a
                .conn
                .state
                .wait_for(WAIT_MS, |s| s.phase != Phase::Established);
            out.say(format_args!(
                ", zombie {}",
                if closed { "closed" } else { "alive" }
            ));
            // The same path again, as a client that retries: the server
            // has let the zombie and its session go.
            rb::random::msleep(1000);
            let c = start(con_req(0, 2, sess, paths, true), false)?;
            match c.settle() {
                Phase::Established => out.say(format_args!(", again established")),
                Phase::Rejected(e) => out.say(format_args!(", again rejected {}", e)),
                x => out.say(format_args!(", again {:?}", x)),
            }
        }
        "fences" => {
            // RTRS 2.1 offered; FENCEs naming an unknown path, the path
            // they come on, and a flood of 50: each answered, nothing
            // closed. A C server answers 2.0 and knows no fence.
            let p = EvilPath::full_v(rtrs_proto::ext::PROTO_VER_EXT, 2)?;
            let own = p.rsp.path_id;
            let mut sent = 0u32;
            for i in 0..52u16 {
                let id = match i {
                    0 => 0xffff,
                    1 => own,
                    _ => 0xfffe,
                };
                let imm = Imm::Fence {
                    path_id: id,
                    seq: i,
                }
                .encode();
                // As fast as the send queue takes them: a full queue
                // (ENOMEM) empties as the sends complete.
                let mut tries = 0;
                while let Err(e) = Conn::write_imm(p.id(0), Rbuf::default(), &[], imm) {
                    tries += 1;
                    if e != ENOMEM || tries > 200 {
                        return Err(e);
                    }
                    rb::random::msleep(5);
                }
                sent += 1;
            }
            let c = &p.links[0].conn;
            c.state.wait_for(WAIT_MS, |s| {
                s.fence_acks >= sent || s.phase != Phase::Established
            });
            let acks = c.state.lock().fence_acks;
            out.say(format_args!(
                "v{:#x} acks {} of {}, ",
                p.rsp.version, acks, sent
            ));
            p.outcome(out);
        }
        "read_rsp" => {
            // RTRS 2.1 offered; two READs without a descriptor, the first
            // answered, the second failed (its message asks for 512 bytes
            // the IO does not have): ours answers each with one SEND of a
            // READ_RSP, with the chunk's new key; C answers 2.0's IMMs.
            let p = EvilPath::full_v(rtrs_proto::ext::PROTO_VER_EXT, 2)?;
            let mut r = [0u8; RdmaRead::SIZE];
            let _ = RdmaRead {
                usr_len: msg::LEN as u16,
                flags: 0,
                descs: SgList::empty(),
            }
            .encode(&mut r);
            let c = &p.links[0].conn;
            let answers = |s: &State| s.read_rsps + s.io_rsps;
            let mut seen = KVec::new();
            for (chunk, len) in [(2u32, 0u32), (3, 512)] {
                p.request(chunk, &usr(Op::Read, 0, len), &r)?;
                let want = chunk - 1;
                c.state.wait_for(WAIT_MS, |s| {
                    answers(s) >= want || s.phase != Phase::Established
                });
                // Read under the state's spinlock, pushed after it: the
                // push may allocate and sleep.
                let answer = {
                    let s = c.state.lock();
                    (s.last_read_rsp, s.last_errno)
                };
                let _ = seen.push(answer, GFP_KERNEL);
            }
            let (reads, imms) = {
                let s = c.state.lock();
                (s.read_rsps, s.io_rsps)
            };
            out.say(format_args!(
                "v{:#x} read responses {} imm responses {},",
                p.rsp.version, reads, imms
            ));
            // Each answer: `<msg_id>:<errno>:<flags>` of a READ_RSP, or
            // `imm:<errno>`.
            for (rsp, errno) in seen.iter() {
                match rsp {
                    Some(m) => out.say(format_args!(" {}:{}:{}", m.msg_id, m.errno, m.flags)),
                    None => out.say(format_args!(" imm:{}", errno)),
                }
            }
            out.say(format_args!(", "));
            p.outcome(out);
        }
        "info_early" => {
            // INFO_REQ on cid 0 while cid 1 of the path is not connected.
            let p = EvilPath::connect(2, 1)?;
            p.send_info(0, b"evil-early")?;
            p.outcome(out);
        }
        "info_twice" => {
            let p = EvilPath::full(2)?;
            p.send_info(0, b"evil-twice")?;
            p.outcome(out);
        }
        "info_cid1" => {
            let p = EvilPath::full(2)?;
            p.send_info(1, b"evil-cid1")?;
            p.outcome(out);
        }
        "info_bad_name" => {
            let p = EvilPath::connect(1, 1)?;
            p.send_info(0, b"evil/../x")?;
            p.outcome(out);
        }
        "unknown_type" => {
            let p = EvilPath::full(1)?;
            p.request(0, &usr(Op::Read, 0, 0), &0x99u16.to_le_bytes())?;
            p.outcome(out);
        }
        "usr_len_past_off" => {
            // A WRITE whose user message would start before the chunk.
            let p = EvilPath::full(1)?;
            let mut w = [0u8; RdmaWrite::SIZE];
            let _ = RdmaWrite { usr_len: 0xffff }.encode(&mut w);
            p.request(0, &usr(Op::Write, 0, 0), &w)?;
            p.outcome(out);
        }
        "read_sg_cnt" => {
            // A READ announcing 65535 descriptors.
            let p = EvilPath::full(1)?;
            let mut r = [0u8; RdmaRead::SIZE + SgDesc::SIZE];
            r[0..2].copy_from_slice(&MsgType::Read.as_u16().to_le_bytes());
            r[2..4].copy_from_slice(&(msg::LEN as u16).to_le_bytes());
            r[6..8].copy_from_slice(&0xffffu16.to_le_bytes());
            p.request(0, &usr(Op::Read, 0, 0), &r)?;
            p.outcome(out);
        }
        "read_desc_len" => {
            // A READ of nothing whose answer would be 4 GiB long.
            let p = EvilPath::full(1)?;
            let d = [SgDesc {
                addr: 0,
                key: 0,
                len: u32::MAX,
            }];
            let mut r = [0u8; RdmaRead::SIZE + SgDesc::SIZE];
            let _ = RdmaRead {
                usr_len: msg::LEN as u16,
                flags: 0,
                descs: SgList::new(&d),
            }
            .encode(&mut r);
            p.request(0, &usr(Op::Read, 0, 0), &r)?;
            p.outcome(out);
        }
        "off_past_chunk" => {
            // An offset past the chunk, which the IMM bits allow.
            let p = EvilPath::full(1)?;
            let off = p.rsp.chunk_size() + 64;
            if off >> p.layout.mem_bits() != 0 {
                out.say(format_args!("offset does not fit"));
                return Ok(());
            }
            p.imm_only(p.layout.mem_off(0) | off)?;
            p.outcome(out);
        }
        "msg_at_chunk_end" => {
            // A READ header in the last 4 bytes of a chunk: the rest of
            // it (sg_cnt, desc) would be read past the chunk.
            let p = EvilPath::full(1)?;
            let off = p.rsp.chunk_size() - 4;
            let r = [MsgType::Read.as_u16() as u8, 0, 0, 0];
            let imm = p.layout.io_req_imm(0, off).map_err(|_| EINVAL)?;
            p.put(0, 0, off, &r, imm)?;
            p.outcome(out);
        }
        "msg_id_past_qd" => {
            // The last chunk id the IMM bits can name, past the queue depth.
            let p = EvilPath::full(1)?;
            let qd = u32::from(p.rsp.queue_depth);
            let id = (1u32 << (28 - p.layout.mem_bits())) - 1;
            if id < qd {
                out.say(format_args!("queue depth {} fills the IMM bits", qd));
                return Ok(());
            }
            p.imm_only(p.layout.mem_off(id))?;
            p.outcome(out);
        }
        "chunk_in_use" => {
            // A request the server holds, then a second IMM for its chunk.
            let p = EvilPath::full(1)?;
            p.request(0, &usr(Op::Hold, 0, 0), &{
                let mut w = [0u8; RdmaWrite::SIZE];
                let _ = RdmaWrite {
                    usr_len: msg::LEN as u16,
                }
                .encode(&mut w);
                w
            })?;
            p.imm_only(p.layout.mem_off(0) | (msg::LEN as u32))?;
            p.outcome(out);
            let (n, e) = p.io_rsps();
            out.say(format_args!(", responses {} errno {}", n, e));
        }
        "flood_same" => flood(out, true, 100, 25)?,
        "flood_new" => flood(out, false, 40, 8)?,
        _ => return Err(EINVAL),
    }
    Ok(())
}

/// The data of `ctl`.
#[pin_data]
struct Ctl {
    #[pin]
    result: Mutex<Outcome>,
    /// Scenarios run so far; held while one runs, so one runs at a time.
    #[pin]
    runs: Mutex<u32>,
}

impl ctl::Run for Ctl {
    fn run(&self, input: &[u8]) -> Result {
        let name = core::str::from_utf8(input).map_err(|_| EINVAL)?.trim();
        if !SCENARIOS.contains(&name) {
            pr_err!("run: unknown scenario\n");
            return Err(EINVAL);
        }
        let mut runs = self.runs.lock();
        *runs += 1;
        let mut out = Outcome {
            text: [0; 128],
            len: 0,
        };
        pr_info!("scenario {}\n", name);
        let ret = run(name, &mut out);
        if let Err(e) = ret {
            out.say(format_args!(" failed {}", e.to_errno()));
        }
        pr_info!(
            "{}\n",
            core::str::from_utf8(&out.text[..out.len]).unwrap_or("?")
        );
        *self.result.lock() = out;
        Ok(())
    }
}

struct CtlResult;

#[vtable]
impl Attribute for CtlResult {
    type Data = Ctl;
    const NAME: &'static CStr = c_str!("result");
    const MODE: u16 = 0o444;

    fn show(ctl: &Ctl, page: &mut Page<'_>) -> Result {
        let r = ctl.result.lock();
        Ok(writeln!(
            page,
            "{}",
            core::str::from_utf8(&r.text[..r.len]).unwrap_or("?")
        )?)
    }
}

static CTL_ATTRS: Attributes<Ctl> = attributes!(Ctl: ctl::CtlRun<Ctl>, CtlResult);

struct Evil {
    _ctl: Device<Ctl>,
}

impl kernel::Module for Evil {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let ctl = ctl::ctl_dir(
            c_str!("rtrs-test-evil"),
            &CTL_ATTRS,
            try_pin_init!(Ctl {
                result <- new_mutex!(Outcome { text: [0; 128], len: 0 }, "rtrs_evil_result"),
                runs <- new_mutex!(0, "rtrs_evil_runs"),
            }? Error),
        )?;
        Ok(Self { _ctl: ctl })
    }
}
