// SPDX-License-Identifier: GPL-2.0-or-later

//! rtrs-test-evil-srv: an RTRS server that answers wrongly on purpose, over
//! raw rdma_cm and verbs (no rtrs-server), for the selftest
//! `rtrs_evil_server.sh`. A client opens a session to it with rtrs-test-clt
//! (on our rtrs-client or on C's) on `port_nr`.
//!
//! By default it speaks the server side of RTRS 2.0 correctly: CON_RSP,
//! INFO_RSP with one descriptor over its chunks, and answers to the read
//! and write requests of rtrs-test-clt from a disk of [`DISK_SIZE`] bytes
//! (a read past it gets `EINVAL`). The scenarios of RTRS 2.1 (those of
//! [`Scenario::ext`]) answer a client that offers 2.1 as our rtrs-server
//! does, with fences and read responses ([`rtrs_proto::ext`]), and one that
//! offers 2.0 (C's) as a 2.0 server, without their act. Writing a
//! scenario's name to
//! `/sys/class/rtrs-test-evil-srv/ctl/run` makes every session opened
//! from then on play it; `ctl/result` shows `<scenario>: connects <n>
//! acts <n> ios <n>`: connection requests seen, evil acts done, IO
//! requests answered. The scenarios are [`SCENARIOS`].

#![deny(unsafe_code)]

use core::fmt::Write;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
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

use rb::kvec::VecExt;
use rb::net::SockAddr;
use rb::param::{module_param, UshortParam};
use rb::sync::{new_spinlock_bh, SpinLockBh};
use rb::sysfs::{attributes, Attribute, Attributes, Device, Page};
use rb_rdma::blocks::{BlocksMap, PageBlocks};
use rb_rdma::cm::QpAttr;
use rb_rdma::cq::impl_has_cqe;
use rb_rdma::mr::DmaMappedSg;
use rb_rdma::{
    Access, CmEvent, CmHandler, CmId, CmIdRef, ConnParam, ConnectRequest, Cqe, CqeHandler, DmaBuf,
    DmaDirection, ListenHandler, Listener, Mr, Pd, PollContext, RecvWr, SendFlags, SendOp, SendWr,
    Sge, Wc, WcOpcode,
};
use rtrs_proto::ext::{server_answer, ReadRsp, MSG_FENCE_F, MSG_READ_RSP_F, PROTO_VER_EXT};
use rtrs_proto::imm::{ChunkLayout, Imm, FENCE_SEQ_MASK};
use rtrs_proto::msg::{
    ConnReq, ConnRsp, InfoReq, InfoRsp, IoReq, MsgType, RdmaMsg, RkeyRsp, SgDesc, SgList, MAGIC,
    MSG_NEED_INVAL_F, PROTO_VER,
};

module! {
    type: EvilSrv,
    name: "rtrs_test_evil_srv",
    author: "rtrs-rs developers",
    description: "RTRS test: a server that answers with malformed and malicious RTRS",
    license: "GPL",
}

module_param! {
    /// The port it listens on.
    static PORT_NR: UshortParam = UshortParam::new(msg::PORT);
    name: port_nr, perm: 0o444, desc: "The port to listen on (default: 1235)";
}

/// Chunks of a session (its queue depth).
const QD: u32 = 16;
/// Size of a chunk.
const CHUNK: usize = 64 * 1024;
/// The largest header (user message and RTRS message), as C's MAX_HDR_SIZE.
const MAX_HDR: u32 = 4096;
/// The largest IO.
const MAX_IO: u32 = CHUNK as u32 - MAX_HDR;
/// Receives kept posted per connection, and the size of each buffer (an
/// INFO_REQ is the largest SEND a client makes).
const NRECV: usize = 64;
const RECV_SIZE: usize = 512;
/// Send work requests per connection.
const NSEND: u32 = 64;
/// Buffers messages are sent from (INFO_RSP, RKEY_RSP), in turn: a message
/// may still be on its way while the next is written.
const MSG_SLOTS: usize = 8;
const MSG_SLOT: usize = 1024;
/// The disk: rtrs-test-clt's stream 0.
const DISK_BLOCK: usize = 64 * 1024;
const DISK_BLOCKS: u32 = 8;
const DISK_SIZE: usize = DISK_BLOCK * DISK_BLOCKS as usize;
/// What a read answered with too much data sends beyond the client's
/// buffer.
const TOO_MUCH: usize = 4096;
/// The server's id of every path, in a CON_RSP of RTRS 2.1.
const PATH_ID: u16 = 1;

/// The scenarios, as written to `ctl/run`, in the order of [`Scenario`].
const SCENARIOS: &[&str] = &[
    "good",
    "con_magic",
    "con_version",
    "con_errno",
    "con_qd0",
    "con_chunk_huge",
    "con_hdr_small",
    "info_sg0",
    "info_sg_over",
    "info_zero_len",
    "info_too_large",
    "info_overlap",
    "info_short",
    "info_type",
    "silent_accept",
    "silent_info",
    "rsp_unknown",
    "rsp_idle",
    "rsp_twice",
    "rkey_unknown",
    "rkey_other",
    "read_too_much",
    "io_silent",
    "rsp_dropped",
    "inval_claim",
    "good_21",
    "con_v20_ext",
    "read_rsp_unknown",
    "read_rsp_twice",
    "read_rsp_write",
    "read_rsp_rkey",
    "read_rsp_short",
    "fence_ack_unasked",
];

/// What the server does wrong, by index of [`SCENARIOS`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scenario {
    /// Nothing.
    Good,
    /// CON_RSP with a wrong magic.
    ConMagic,
    /// CON_RSP of RTRS 3.0.
    ConVersion,
    /// An accept whose CON_RSP carries an errno.
    ConErrno,
    /// CON_RSP with queue depth 0.
    ConQd0,
    /// CON_RSP with chunks of 2 GiB.
    ConChunkHuge,
    /// CON_RSP with `max_hdr_size` 8, less than any request's header.
    ConHdrSmall,
    /// INFO_RSP without descriptors.
    InfoSg0,
    /// INFO_RSP with twice as many descriptors as chunks.
    InfoSgOver,
    /// INFO_RSP whose descriptor is 0 bytes long.
    InfoZeroLen,
    /// INFO_RSP whose descriptor covers twice the chunks.
    InfoTooLarge,
    /// INFO_RSP with two descriptors over the same memory.
    InfoOverlap,
    /// INFO_RSP of 4 bytes.
    InfoShort,
    /// INFO_RSP of another message type.
    InfoType,
    /// The connection requests get no answer at all.
    SilentAccept,
    /// INFO_REQ gets no answer.
    SilentInfo,
    /// Before the first IO's answer, an IO response for a request past
    /// the queue depth.
    RspUnknown,
    /// Before the first IO's answer, one for a request not in flight.
    RspIdle,
    /// The first IO answered twice.
    RspTwice,
    /// The first IO answered with an RKEY_RSP for a chunk past the queue
    /// depth (new rkeys negotiated).
    RkeyUnknown,
    /// The first IO answered with an RKEY_RSP for another chunk.
    RkeyOther,
    /// The first read answered with [`TOO_MUCH`] bytes more than asked.
    ReadTooMuch,
    /// From the first IO on, nothing answered, heartbeats neither.
    IoSilent,
    /// The first IO of the run never answered; heartbeats, later IO and
    /// the same IO failed over to another path are.
    RspDropped,
    /// The first read whose registration the client asks to invalidate is
    /// answered with the IMM of an invalidated answer, and no
    /// SEND_WITH_INV: a key to the client's pages kept past the IO.
    InvalClaim,
    /// Nothing, in RTRS 2.1: fences and read responses.
    Good21,
    /// CON_RSP of RTRS 2.0 that sets 2.1's flags, with new rkeys; reads
    /// answered with a [`ReadRsp`] in a SEND, as a 2.1 server would.
    ConV20Ext,
    /// 2.1: before the first read's answer, a [`ReadRsp`] for a request
    /// past the queue depth.
    ReadRspUnknown,
    /// 2.1: the first read answered twice, the second time without
    /// invalidation.
    ReadRspTwice,
    /// 2.1: the first write answered with a [`ReadRsp`] before its IMM.
    ReadRspWrite,
    /// 2.1: the first read's [`ReadRsp`] carries a new rkey, where CON_RSP
    /// said the server keeps its keys.
    ReadRspRkey,
    /// 2.1: the first read's [`ReadRsp`] is 8 bytes long.
    ReadRspShort,
    /// 2.1: before the first IO's answer, FENCE_ACKs for fences never sent,
    /// for the path itself and for a path that is not there.
    FenceAckUnasked,
}

impl Scenario {
    const ALL: [Scenario; 33] = [
        Scenario::Good,
        Scenario::ConMagic,
        Scenario::ConVersion,
        Scenario::ConErrno,
        Scenario::ConQd0,
        Scenario::ConChunkHuge,
        Scenario::ConHdrSmall,
        Scenario::InfoSg0,
        Scenario::InfoSgOver,
        Scenario::InfoZeroLen,
        Scenario::InfoTooLarge,
        Scenario::InfoOverlap,
        Scenario::InfoShort,
        Scenario::InfoType,
        Scenario::SilentAccept,
        Scenario::SilentInfo,
        Scenario::RspUnknown,
        Scenario::RspIdle,
        Scenario::RspTwice,
        Scenario::RkeyUnknown,
        Scenario::RkeyOther,
        Scenario::ReadTooMuch,
        Scenario::IoSilent,
        Scenario::RspDropped,
        Scenario::InvalClaim,
        Scenario::Good21,
        Scenario::ConV20Ext,
        Scenario::ReadRspUnknown,
        Scenario::ReadRspTwice,
        Scenario::ReadRspWrite,
        Scenario::ReadRspRkey,
        Scenario::ReadRspShort,
        Scenario::FenceAckUnasked,
    ];

    fn from_index(i: u32) -> Self {
        Self::ALL.get(i as usize).copied().unwrap_or(Scenario::Good)
    }

    fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .position(|&s| s == self)
            .and_then(|i| SCENARIOS.get(i).copied())
            .unwrap_or("?")
    }

    /// Whether the server sends a new rkey with each IO response.
    fn new_rkey(self) -> bool {
        matches!(
            self,
            Scenario::RkeyUnknown | Scenario::RkeyOther | Scenario::ConV20Ext
        )
    }

    /// Whether the scenario's server speaks RTRS 2.1 to a client that
    /// offers it.
    fn ext(self) -> bool {
        matches!(
            self,
            Scenario::Good21
                | Scenario::ReadRspUnknown
                | Scenario::ReadRspTwice
                | Scenario::ReadRspWrite
                | Scenario::ReadRspRkey
                | Scenario::ReadRspShort
                | Scenario::FenceAckUnasked
        )
    }

    /// The version and the 2.1 flags of CON_RSP to a client that offered
    /// `offered`: those of our rtrs-server ([`server_answer`]), or 2.0
    /// with 2.1's flags for [`Scenario::ConV20Ext`].
    fn answer(self, offered: u16) -> (u16, u32) {
        const EXT: u32 = MSG_FENCE_F | MSG_READ_RSP_F;
        match self {
            Scenario::ConV20Ext => (PROTO_VER, EXT),
            s => server_answer(offered, s.ext(), EXT),
        }
    }

    /// The CON_RSP of an accepted connection whose CON_REQ offered
    /// `offered`.
    fn con_rsp(self, offered: u16) -> [u8; ConnRsp::SIZE] {
        let mut rsp = ConnRsp::accept(QD as u16, MAX_IO, MAX_HDR, self.new_rkey());
        let (version, ext) = self.answer(offered);
        rsp.version = version;
        rsp.flags |= ext;
        if version == PROTO_VER_EXT {
            rsp.path_id = PATH_ID;
        }
        match self {
            Scenario::ConVersion => rsp.version = 0x0300,
            Scenario::ConErrno => rsp.errno = -5,
            Scenario::ConQd0 => rsp.queue_depth = 0,
            Scenario::ConChunkHuge => rsp.max_io_size = (1 << 31) - MAX_HDR,
            Scenario::ConHdrSmall => {
                rsp.max_hdr_size = 8;
                rsp.max_io_size = CHUNK as u32 - 8;
            }
            _ => {}
        }
        let mut b = [0u8; ConnRsp::SIZE];
        let _ = rsp.encode(&mut b);
        if self == Scenario::ConMagic {
            b[0..2].copy_from_slice(&(!MAGIC).to_le_bytes());
        }
        b
    }
}

/// A session: the chunks its clients write to, registered on the PD of
/// the device its first connection came in on.
struct Sess {
    uuid: [u8; 16],
    scenario: Scenario,
    /// The version the client offered in its first CON_REQ.
    offered: u16,
    /// Reads are answered with a [`ReadRsp`] (CON_RSP set
    /// `MSG_READ_RSP_F`).
    read_rsp: bool,
    pd: Arc<Pd>,
    chunks: Arc<PageBlocks>,
    map: BlocksMap,
    mr: Mr,
    /// The MR is registered (REG_MR with the first INFO_RSP).
    registered: AtomicBool,
    /// The scenario's act on an IO is done (it is done once).
    acted: AtomicBool,
    /// [`Scenario::IoSilent`] went silent.
    silent: AtomicBool,
}

impl Sess {
    fn new(
        dev: &rb_rdma::Device,
        uuid: [u8; 16],
        scenario: Scenario,
        offered: u16,
    ) -> Result<Arc<Self>> {
        let pd = Arc::new(Pd::new(dev, 0)?, GFP_KERNEL)?;
        let chunks = Arc::new(PageBlocks::new(QD, CHUNK)?, GFP_KERNEL)?;
        let map = BlocksMap::new(&pd, &chunks, 0, QD)?;
        let mut mr = Mr::new(&pd, QD * (CHUNK / 4096) as u32)?;
        let n = mr.map_sg_owned(&map, map.dma_nents(), CHUNK as u32)?;
        if n != map.dma_nents() {
            pr_err!("MR mapped {} of {} entries\n", n, map.dma_nents());
            return Err(EINVAL);
        }
        Ok(Arc::new(
            Sess {
                uuid,
                scenario,
                offered,
                read_rsp: scenario.answer(offered).1 & MSG_READ_RSP_F != 0,
                pd,
                chunks,
                map,
                mr,
                registered: AtomicBool::new(false),
                acted: AtomicBool::new(false),
                silent: AtomicBool::new(false),
            },
            GFP_KERNEL,
        )?)
    }

    /// Takes the scenario's act: true the first time only.
    fn act(&self) -> bool {
        !self.acted.swap(true, Ordering::AcqRel)
    }

    /// The INFO_RSP the scenario sends, into `b`; its length.
    fn info_rsp(&self, b: &mut [u8]) -> Result<usize> {
        let (iova, _) = self.mr.mapping();
        let key = self.mr.rkey();
        let all = QD * CHUNK as u32;
        let one = [SgDesc {
            addr: iova,
            key,
            len: all,
        }];
        let half = [
            SgDesc {
                addr: iova,
                key,
                len: all / 2,
            },
            SgDesc {
                addr: iova,
                key,
                len: all / 2,
            },
        ];
        let mut many = [SgDesc::default(); 2 * QD as usize];
        for (i, d) in many.iter_mut().enumerate() {
            *d = SgDesc {
                addr: iova + (i * CHUNK / 2) as u64,
                key,
                len: CHUNK as u32 / 2,
            };
        }
        let zero = [SgDesc {
            addr: iova,
            key,
            len: 0,
        }];
        let large = [SgDesc {
            addr: iova,
            key,
            len: 2 * all,
        }];
        let descs: &[SgDesc] = match self.scenario {
            Scenario::InfoSg0 => &[],
            Scenario::InfoSgOver => &many,
            Scenario::InfoZeroLen => &zero,
            Scenario::InfoTooLarge => &large,
            Scenario::InfoOverlap => &half,
            _ => &one,
        };
        let n = InfoRsp {
            descs: SgList::new(descs),
        }
        .encode(b)
        .map_err(|_| EINVAL)?;
        match self.scenario {
            Scenario::InfoShort => Ok(4),
            Scenario::InfoType => {
                b[0..2].copy_from_slice(&MsgType::RkeyRsp.as_u16().to_le_bytes());
                Ok(n)
            }
            _ => Ok(n),
        }
    }
}

/// The module's state, shared by the listener, the connections and `ctl`.
///
/// # Locking
///
/// `sess` and `conns` (mutexes: CM handlers and `ctl` take them) are taken
/// alone. `disk` (bh-safe: completions read and write it) is a leaf, taken
/// inside a connection's `data`.
#[pin_data]
struct Ctx {
    /// Index of the scenario new sessions play.
    scenario: AtomicU32,
    /// The last session opened: connections of the same session uuid join it.
    #[pin]
    sess: Mutex<Option<Arc<Sess>>>,
    #[pin]
    conns: Mutex<KVec<CmId<Conn>>>,
    #[pin]
    disk: SpinLockBh<PageBlocks>,
    connects: AtomicU32,
    acts: AtomicU32,
    ios: AtomicU32,
    /// [`Scenario::RspDropped`] dropped its IO in this run.
    dropped: AtomicBool,
}

impl Ctx {
    fn scenario(&self) -> Scenario {
        Scenario::from_index(self.scenario.load(Ordering::Relaxed))
    }

    /// Counts an evil act and logs it.
    fn acted(&self, sess: &Sess, what: core::fmt::Arguments<'_>) {
        self.acts.fetch_add(1, Ordering::Relaxed);
        pr_info!("{}: {}\n", sess.scenario.name(), what);
    }
}

/// A receive buffer's completion entry.
type RecvSlot = active::RecvSlot<Conn>;
impl_has_cqe!(impl HasCqe<0> for RecvSlot { self.cqe });

/// One connection of a session.
///
/// # Locking
///
/// `data` (bh-safe) > `Ctx::disk`, while a read's answer is copied out;
/// `msgs` (bh-safe) is a leaf.
#[pin_data]
struct Conn {
    ctx: Arc<Ctx>,
    sess: Arc<Sess>,
    recv: KVec<RecvSlot>,
    /// The receive buffers, `RECV_SIZE` bytes each.
    rbuf: DmaBuf,
    /// What reads are answered from.
    #[pin]
    data: SpinLockBh<DmaBuf>,
    /// What messages are sent from, [`MSG_SLOTS`] of [`MSG_SLOT`] bytes.
    #[pin]
    msgs: SpinLockBh<DmaBuf>,
    next_slot: AtomicU32,
    send_cqe: Cqe<Conn, 1>,
}
impl_has_cqe!(impl HasCqe<1> for Conn { self.send_cqe });

impl Conn {
    fn new(ctx: Arc<Ctx>, sess: Arc<Sess>, dev: &rb_rdma::Device) -> Result<Arc<Self>> {
        let recv = active::recv_slots(NRECV)?;
        let rbuf = DmaBuf::new(dev, NRECV * RECV_SIZE, DmaDirection::FromDevice)?;
        let data = DmaBuf::new(dev, CHUNK, DmaDirection::ToDevice)?;
        let msgs = DmaBuf::new(dev, MSG_SLOTS * MSG_SLOT, DmaDirection::ToDevice)?;
        Arc::pin_init(
            try_pin_init!(Conn {
                ctx,
                sess,
                recv,
                rbuf,
                data <- new_spinlock_bh!(data, "rtrs_evil_srv_data"),
                msgs <- new_spinlock_bh!(msgs, "rtrs_evil_srv_msgs"),
                next_slot: AtomicU32::new(0),
                send_cqe: Cqe::new(),
            }? Error),
            GFP_KERNEL,
        )
    }

    fn lkey(&self) -> u32 {
        self.sess.pd.local_dma_lkey()
    }

    fn post_recv(id: &CmIdRef<Self>, i: usize) -> Result {
        let h = id.handler();
        let sge = [Sge::new(
            h.rbuf.dma_addr(i * RECV_SIZE)?,
            RECV_SIZE as u32,
            h.lkey(),
        )];
        id.post_recv(|h: &Self| Ok([RecvWr::new(&h.recv.get(i).ok_or(EINVAL)?.cqe, &sge)]))
    }

    /// Sends `bytes` from the next message buffer with `op` (a SEND, with
    /// immediate data or not); after REG_MR of the session's MR if `reg`.
    fn send_msg(id: &CmIdRef<Self>, bytes: &[u8], op: SendOp<'static>, reg: bool) -> Result {
        let h = id.handler();
        if bytes.len() > MSG_SLOT {
            return Err(EINVAL);
        }
        let off = (h.next_slot.fetch_add(1, Ordering::Relaxed) as usize % MSG_SLOTS) * MSG_SLOT;
        let addr = {
            let mut b = h.msgs.lock();
            b.write(off, bytes)?;
            b.dma_addr(off)?
        };
        let sge = [Sge::new(addr, bytes.len() as u32, h.lkey())];
        id.post_chain::<2, _>(|h: &Self, chain| {
            if reg {
                let reg = SendOp::RegMr {
                    mr: &h.sess.mr,
                    access: Access::LOCAL_WRITE.union(Access::REMOTE_WRITE),
                };
                chain.push(SendWr::new(&h.send_cqe, reg, &[], SendFlags::empty()))?;
            }
            chain.push(SendWr::new(&h.send_cqe, op, &sge, SendFlags::SIGNALED))
        })
    }

    /// An RDMA write of no data with immediate data `imm`.
    fn write_imm(id: &CmIdRef<Self>, imm: u32) -> Result {
        let op = SendOp::RdmaWriteWithImm {
            remote_addr: 0,
            rkey: 0,
            imm,
        };
        id.post_send(|h: &Self| Ok([SendWr::new(&h.send_cqe, op, &[], SendFlags::SIGNALED)]))
    }

    /// The IO response `imm` for chunk `buf_id`: with an RKEY_RSP for it
    /// if the session sends new rkeys.
    fn respond(id: &CmIdRef<Self>, buf_id: u32, imm: u32) -> Result {
        let h = id.handler();
        if !h.sess.scenario.new_rkey() {
            return Self::write_imm(id, imm);
        }
        let mut b = [0u8; RkeyRsp::SIZE];
        let _ = RkeyRsp {
            buf_id: buf_id as u16,
            rkey: h.sess.mr.rkey(),
        }
        .encode(&mut b);
        Self::send_msg(id, &b, SendOp::SendWithImm(imm), false)
    }

    /// INFO_REQ arrived: the scenario's INFO_RSP, or none.
    fn info_req(id: &CmIdRef<Self>, req: &[u8]) -> Result {
        let h = id.handler();
        let sess = &h.sess;
        let name = InfoReq::decode(req).map_err(|_| rb::errno::EPROTO())?;
        pr_info!(
            "path {} asks for its info\n",
            kernel::str::BStr::from_bytes(name.pathname())
        );
        if sess.scenario == Scenario::SilentInfo {
            h.ctx.acted(sess, format_args!("INFO_REQ left unanswered"));
            return Ok(());
        }
        let mut b = [0u8; MSG_SLOT];
        let n = sess.info_rsp(&mut b)?;
        if sess.scenario.name().starts_with("info_") {
            h.ctx
                .acted(sess, format_args!("INFO_RSP of {} bytes sent", n));
        }
        let reg = !sess.registered.swap(true, Ordering::AcqRel);
        Self::send_msg(id, &b[..n], SendOp::Send, reg)
    }

    /// Copies `len` bytes from the start of chunk `chunk` to the disk at
    /// `pos`.
    fn chunk_to_disk(&self, chunk: u32, len: usize, pos: usize) -> Result {
        self.sess.map.sync_for_cpu(chunk, len)?;
        let mut disk = self.ctx.disk.lock();
        let mut tmp = [0u8; 256];
        let mut done = 0;
        while done < len {
            let p = pos + done;
            let n = tmp.len().min(len - done).min(DISK_BLOCK - p % DISK_BLOCK);
            self.sess.chunks.read(chunk as usize, done, &mut tmp[..n])?;
            disk.write(p / DISK_BLOCK, p % DISK_BLOCK, &tmp[..n])?;
            done += n;
        }
        Ok(())
    }

    /// Copies `len` bytes of the disk at `pos` to the start of `out`.
    fn disk_to(&self, out: &mut DmaBuf, len: usize, pos: usize) -> Result {
        let disk = self.ctx.disk.lock();
        let mut tmp = [0u8; 256];
        let mut done = 0;
        while done < len {
            let p = pos + done;
            let n = tmp.len().min(len - done).min(DISK_BLOCK - p % DISK_BLOCK);
            disk.read(p / DISK_BLOCK, p % DISK_BLOCK, &mut tmp[..n])?;
            out.write(done, &tmp[..n])?;
            done += n;
        }
        Ok(())
    }

    /// An IO request with IMM payload `payload`: does it, answers it, and
    /// acts the scenario on the first one.
    fn io_req(id: &CmIdRef<Self>, payload: u32) -> Result {
        let h = id.handler();
        let sess = &h.sess;
        let ctx = &h.ctx;
        let layout = ChunkLayout::new(QD).map_err(|_| EINVAL)?;
        let (buf_id, off) = layout.split(payload);
        if buf_id >= QD || off as usize >= CHUNK {
            pr_err!("IO request for chunk {} offset {}\n", buf_id, off);
            return Err(rb::errno::EPROTO());
        }
        if sess.scenario == Scenario::IoSilent && !sess.silent.swap(true, Ordering::AcqRel) {
            ctx.acted(sess, format_args!("silent from the first IO on"));
        }
        if sess.silent.load(Ordering::Acquire) {
            return Ok(());
        }
        // Once per scenario run, not per session: an IO the client fails
        // over to another path (another session here) is answered.
        if sess.scenario == Scenario::RspDropped && !ctx.dropped.swap(true, Ordering::AcqRel) {
            ctx.acted(sess, format_args!("request {} never answered", buf_id));
            return Ok(());
        }
        ctx.ios.fetch_add(1, Ordering::Relaxed);
        sess.map.sync_for_cpu(buf_id, CHUNK)?;
        let mut hdr = [0u8; IoReq::MAX_SIZE];
        let n = IoReq::MAX_SIZE.min(CHUNK - off as usize);
        sess.chunks
            .read(buf_id as usize, off as usize, &mut hdr[..n])?;
        let req = IoReq::check(&hdr[..n], off).map_err(|e| {
            pr_err!("IO request refused: {:?}\n", e);
            rb::errno::EPROTO()
        })?;
        let usr_len = match &req {
            RdmaMsg::Write(w) => w.usr_len,
            RdmaMsg::Read(r) => r.usr_len,
        } as usize;
        let mut usr = [0u8; msg::LEN];
        let m = if usr_len == msg::LEN {
            sess.chunks
                .read(buf_id as usize, off as usize - usr_len, &mut usr)?;
            msg::Msg::decode(&usr)
        } else {
            None
        };
        let m = m.ok_or_else(|| {
            pr_err!("IO request without a test message\n");
            rb::errno::EPROTO()
        })?;
        let len = m.len as usize;
        let fits = (m.offset as usize)
            .checked_add(len)
            .is_some_and(|end| end <= DISK_SIZE && m.offset < DISK_SIZE as u64);
        let pos = m.offset as usize;
        let errno = match (&req, fits) {
            (_, false) => -(rb::ffi::EINVAL as i32),
            (RdmaMsg::Write(_), true) => {
                let data_len = off as usize - usr_len;
                h.chunk_to_disk(buf_id, data_len.min(len), pos)?;
                0
            }
            (RdmaMsg::Read(r), true) => {
                let desc = r.descs.get(0).ok_or(rb::errno::EPROTO())?;
                let mut wlen = len.min(desc.len as usize);
                if sess.scenario == Scenario::ReadTooMuch && sess.act() {
                    wlen = (wlen + TOO_MUCH).min(CHUNK);
                    ctx.acted(
                        sess,
                        format_args!("{} bytes written to a read buffer of {}", wlen, desc.len),
                    );
                }
                let addr = {
                    let mut out = h.data.lock();
                    h.disk_to(&mut out, len.min(wlen), pos)?;
                    out.dma_addr(0)?
                };
                let sge = [Sge::new(addr, wlen as u32, h.lkey())];
                let op = SendOp::RdmaWrite {
                    remote_addr: desc.addr,
                    rkey: desc.key,
                };
                id.post_send(|h: &Self| {
                    Ok([SendWr::new(&h.send_cqe, op, &sge, SendFlags::SIGNALED)])
                })?;
                0
            }
        };
        if sess.scenario == Scenario::FenceAckUnasked && sess.read_rsp && sess.act() {
            ctx.acted(
                sess,
                format_args!("FENCE_ACKs never asked for before the answer to {}", buf_id),
            );
            for (path_id, seq) in [(PATH_ID, 0), (PATH_ID + 1, FENCE_SEQ_MASK as u16)] {
                Self::write_imm(id, Imm::FenceAck { path_id, seq }.encode())?;
            }
        }
        if sess.read_rsp {
            match &req {
                RdmaMsg::Read(r) => {
                    // As our rtrs-server: the client's key invalidated if
                    // the read asks for it and has a buffer.
                    let inval = r
                        .descs
                        .get(0)
                        .filter(|_| r.flags & MSG_NEED_INVAL_F != 0)
                        .map(|d| d.key);
                    return Self::answer_read(id, buf_id, errno, inval);
                }
                RdmaMsg::Write(_) if sess.scenario == Scenario::ReadRspWrite && sess.act() => {
                    ctx.acted(
                        sess,
                        format_args!("READ_RSP for write {} before its answer", buf_id),
                    );
                    let rsp = ReadRsp::new(buf_id as u16, 0, None);
                    Self::send_read_rsp(id, &rsp, ReadRsp::SIZE, SendOp::Send)?;
                }
                RdmaMsg::Write(_) => {}
            }
        }
        let claim = sess.scenario == Scenario::InvalClaim
            && matches!(&req, RdmaMsg::Read(r) if r.flags & MSG_NEED_INVAL_F != 0 && !r.descs.is_empty())
            && sess.act();
        if claim {
            ctx.acted(
                sess,
                format_args!(
                    "read {} answered as invalidated, with no SEND_WITH_INV",
                    buf_id
                ),
            );
        }
        let imm = Imm::io_rsp(buf_id, errno, claim).encode();
        let evil = match sess.scenario {
            Scenario::RspUnknown
            | Scenario::RspIdle
            | Scenario::RspTwice
            | Scenario::RkeyUnknown
            | Scenario::RkeyOther => sess.act(),
            _ => false,
        };
        if !evil {
            return Self::respond(id, buf_id, imm);
        }
        match sess.scenario {
            Scenario::RspUnknown | Scenario::RspIdle => {
                let other = if sess.scenario == Scenario::RspUnknown {
                    QD + 3
                } else {
                    (buf_id + 1) % QD
                };
                ctx.acted(
                    sess,
                    format_args!("answer for request {} before that of {}", other, buf_id),
                );
                Self::write_imm(id, Imm::io_rsp(other, 0, false).encode())?;
                Self::respond(id, buf_id, imm)
            }
            Scenario::RspTwice => {
                ctx.acted(sess, format_args!("request {} answered twice", buf_id));
                Self::respond(id, buf_id, imm)?;
                Self::respond(id, buf_id, imm)
            }
            _ => {
                // An RKEY_RSP for a chunk the client does not own: past
                // the queue depth (as the answer to a request of the same
                // number), or another chunk than the one answered.
                let (chunk, answers) = if sess.scenario == Scenario::RkeyUnknown {
                    (0xffff, 0xffff)
                } else {
                    ((buf_id + 1) % QD, buf_id)
                };
                ctx.acted(
                    sess,
                    format_args!("RKEY_RSP for chunk {} answering {}", chunk, answers),
                );
                let mut b = [0u8; RkeyRsp::SIZE];
                let _ = RkeyRsp {
                    buf_id: chunk as u16,
                    rkey: sess.mr.rkey(),
                }
                .encode(&mut b);
                let bad = Imm::io_rsp(answers, 0, false).encode();
                Self::send_msg(id, &b, SendOp::SendWithImm(bad), false)?;
                Self::respond(id, buf_id, imm)
            }
        }
    }

    /// Sends the first `len` bytes of `rsp` with `op` (a SEND, or a
    /// SEND_WITH_INV).
    fn send_read_rsp(id: &CmIdRef<Self>, rsp: &ReadRsp, len: usize, op: SendOp<'static>) -> Result {
        let mut b = [0u8; ReadRsp::SIZE];
        rsp.encode(&mut b).map_err(|_| EINVAL)?;
        Self::send_msg(id, b.get(..len).ok_or(EINVAL)?, op, false)
    }

    /// The answer to read `buf_id`, which ended with `errno`, on a session
    /// with read responses, after its data: one SEND (SEND_WITH_INV of
    /// `inval`) carrying a [`ReadRsp`], as our rtrs-server's
    /// `post_read_rsp()`; the scenario's act on the first read.
    fn answer_read(id: &CmIdRef<Self>, buf_id: u32, errno: i32, inval: Option<u32>) -> Result {
        let h = id.handler();
        let sess = &h.sess;
        let ctx = &h.ctx;
        let msg_id = buf_id as u16;
        let rsp = ReadRsp::new(
            msg_id,
            errno,
            sess.scenario.new_rkey().then(|| sess.mr.rkey()),
        );
        let op = match inval {
            // A 2.0 client takes a SEND_WITH_INV for 2.0's invalidation
            // and waits for the answer until `io_deadline_s`: sent as a
            // plain SEND, the READ_RSP is read at once.
            Some(_) if sess.scenario == Scenario::ConV20Ext => SendOp::Send,
            Some(key) => SendOp::SendWithInv(key),
            None => SendOp::Send,
        };
        let evil = match sess.scenario {
            Scenario::ConV20Ext
            | Scenario::ReadRspUnknown
            | Scenario::ReadRspTwice
            | Scenario::ReadRspRkey
            | Scenario::ReadRspShort => sess.act(),
            _ => false,
        };
        if !evil {
            return Self::send_read_rsp(id, &rsp, ReadRsp::SIZE, op);
        }
        match sess.scenario {
            Scenario::ReadRspUnknown => {
                let other = QD + 3;
                ctx.acted(
                    sess,
                    format_args!("READ_RSP for request {} before that of {}", other, buf_id),
                );
                let bad = ReadRsp::new(other as u16, 0, None);
                Self::send_read_rsp(id, &bad, ReadRsp::SIZE, SendOp::Send)?;
                Self::send_read_rsp(id, &rsp, ReadRsp::SIZE, op)
            }
            Scenario::ReadRspTwice => {
                ctx.acted(sess, format_args!("read {} answered twice", buf_id));
                Self::send_read_rsp(id, &rsp, ReadRsp::SIZE, op)?;
                Self::send_read_rsp(id, &rsp, ReadRsp::SIZE, SendOp::Send)
            }
            Scenario::ReadRspRkey => {
                ctx.acted(
                    sess,
                    format_args!("READ_RSP for {} with a new rkey", buf_id),
                );
                let bad = ReadRsp::new(msg_id, errno, Some(sess.mr.rkey()));
                Self::send_read_rsp(id, &bad, ReadRsp::SIZE, op)
            }
            Scenario::ReadRspShort => {
                ctx.acted(sess, format_args!("READ_RSP for {} of 8 bytes", buf_id));
                Self::send_read_rsp(id, &rsp, 8, op)
            }
            _ => {
                ctx.acted(
                    sess,
                    format_args!("READ_RSP for {} on a path of RTRS 2.0", buf_id),
                );
                Self::send_read_rsp(id, &rsp, ReadRsp::SIZE, op)
            }
        }
    }

    fn on_recv(id: &CmIdRef<Self>, slot: &RecvSlot, wc: &Wc<'_>) {
        if !wc.is_ok() {
            if !wc.is_flushed() {
                pr_err!("receive failed: {}\n", wc.status_msg());
            }
            return;
        }
        let h = id.handler();
        let ret = match (wc.opcode(), wc.imm_data()) {
            (WcOpcode::Recv, None) => {
                let len = (wc.byte_len() as usize).min(RECV_SIZE);
                let mut b = [0u8; RECV_SIZE];
                h.rbuf
                    .read(slot.idx * RECV_SIZE, &mut b[..len])
                    .and_then(|()| Self::info_req(id, &b[..len]))
            }
            (_, Some(imm)) => match Imm::decode(imm) {
                Imm::IoReq { payload } => Self::io_req(id, payload),
                Imm::HbMsg if !h.sess.silent.load(Ordering::Acquire) => {
                    Self::write_imm(id, Imm::HbAck.encode())
                }
                _ => Ok(()),
            },
            (op, _) => {
                pr_err!("unexpected receive {:?}\n", op);
                Ok(())
            }
        };
        if let Err(e) = ret {
            pr_err!("handling a receive failed: {:?}\n", e);
        }
        if let Err(e) = Self::post_recv(id, slot.idx) {
            pr_err!("re-posting receive {} failed: {:?}\n", slot.idx, e);
        }
    }
}

impl CqeHandler<0> for RecvSlot {
    type Conn = Conn;

    fn done(&self, id: &CmIdRef<Conn>, wc: &Wc<'_>) {
        Conn::on_recv(id, self, wc);
    }
}

impl CqeHandler<1> for Conn {
    type Conn = Conn;

    fn done(&self, _id: &CmIdRef<Conn>, wc: &Wc<'_>) {
        if !wc.is_ok() && !wc.is_flushed() {
            pr_info!("{:?} failed: {}\n", wc.opcode(), wc.status_msg());
        }
    }
}

impl CmHandler for Conn {
    fn event(&self, id: &CmIdRef<Self>, event: &CmEvent<'_>) {
        match event {
            CmEvent::Established { .. } => {}
            CmEvent::Disconnected(_)
            | CmEvent::DeviceRemoval
            | CmEvent::TimewaitExit
            | CmEvent::Rejected { .. }
            | CmEvent::ConnectError(_)
            | CmEvent::Unreachable(_) => {
                // Dropped here, inside its own handler.
                let mine = {
                    let mut conns = self.ctx.conns.lock();
                    conns
                        .iter()
                        .position(|c| c.same(id))
                        .and_then(|i| conns.swap_remove(i))
                };
                if mine.is_some() {
                    pr_info!("connection closed ({})\n", event.name());
                }
                drop(mine);
            }
            _ => {}
        }
    }
}

impl ListenHandler for Ctx {
    fn connect_request(this: &Arc<Self>, req: ConnectRequest<'_>) {
        this.connects.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = Self::accept(this, req) {
            pr_err!("accepting failed: {:?}\n", e);
        }
    }
}

impl Ctx {
    fn accept(this: &Arc<Self>, req: ConnectRequest<'_>) -> Result {
        let Ok(creq) = ConnReq::decode(req.private_data()) else {
            pr_info!("rejecting a request that is not RTRS\n");
            return req.reject(&[]);
        };
        let sess = {
            let mut cur = this.sess.lock();
            match &*cur {
                Some(s) if s.uuid == creq.sess_uuid => s.clone(),
                _ => {
                    let s = Sess::new(req.device(), creq.sess_uuid, this.scenario(), creq.version)?;
                    *cur = Some(s.clone());
                    s
                }
            }
        };
        let conn = Conn::new(this.clone(), sess.clone(), req.device())?;
        let id = req.adopt(conn)?;
        // From here on, an error drops `id` inside the request's callback,
        // which rdma_cm then destroys.
        let attr = QpAttr {
            max_send_wr: NSEND,
            max_recv_wr: NRECV as u32,
            max_send_sge: 1,
            max_recv_sge: 1,
            nr_cqe: NSEND + NRECV as u32,
            comp_vector: 0,
            poll: PollContext::Softirq,
        };
        id.create_qp(&sess.pd, &attr)?;
        for i in 0..NRECV {
            Conn::post_recv(&id, i)?;
        }
        if sess.scenario == Scenario::SilentAccept {
            // Held, neither accepted nor rejected, until the client gives
            // up or the module goes.
            this.acted(
                &sess,
                format_args!("connection request {} left unanswered", creq.cid),
            );
        } else {
            let rsp = sess.scenario.con_rsp(sess.offered);
            id.accept(&ConnParam {
                private_data: &rsp,
                responder_resources: 1,
                initiator_depth: 1,
                rnr_retry_count: 7,
                ..Default::default()
            })?;
            if creq.cid == 0 && sess.scenario.name().starts_with("con_") {
                this.acted(&sess, format_args!("CON_RSP sent"));
            }
        }
        this.conns.lock().push(id, GFP_KERNEL)?;
        Ok(())
    }
}

/// The data of `ctl`.
struct Ctl {
    ctx: Arc<Ctx>,
}

impl ctl::Run for Ctl {
    fn run(&self, input: &[u8]) -> Result {
        let name = core::str::from_utf8(input).map_err(|_| EINVAL)?.trim();
        let Some(i) = SCENARIOS.iter().position(|&s| s == name) else {
            pr_err!("run: unknown scenario\n");
            return Err(EINVAL);
        };
        let ctx = &self.ctx;
        ctx.scenario.store(i as u32, Ordering::Relaxed);
        ctx.connects.store(0, Ordering::Relaxed);
        ctx.acts.store(0, Ordering::Relaxed);
        ctx.ios.store(0, Ordering::Relaxed);
        ctx.dropped.store(false, Ordering::Relaxed);
        // The next connection starts a session of the new scenario.
        let old = ctx.sess.lock().take();
        drop(old);
        pr_info!("scenario {}\n", name);
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
        let c = &ctl.ctx;
        Ok(writeln!(
            page,
            "{}: connects {} acts {} ios {}",
            c.scenario().name(),
            c.connects.load(Ordering::Relaxed),
            c.acts.load(Ordering::Relaxed),
            c.ios.load(Ordering::Relaxed)
        )?)
    }
}

static CTL_ATTRS: Attributes<Ctl> = attributes!(Ctl: ctl::CtlRun<Ctl>, CtlResult);

struct EvilSrv {
    listener: Option<Listener<Ctx>>,
    ctl: Option<Device<Ctl>>,
    ctx: Arc<Ctx>,
}

impl kernel::Module for EvilSrv {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let disk = PageBlocks::new(DISK_BLOCKS, DISK_BLOCK)?;
        let ctx = Arc::pin_init(
            try_pin_init!(Ctx {
                scenario: AtomicU32::new(0),
                sess <- new_mutex!(None, "rtrs_evil_srv_sess"),
                conns <- new_mutex!(KVec::new(), "rtrs_evil_srv_conns"),
                disk <- new_spinlock_bh!(disk, "rtrs_evil_srv_disk"),
                connects: AtomicU32::new(0),
                acts: AtomicU32::new(0),
                ios: AtomicU32::new(0),
                dropped: AtomicBool::new(false),
            }? Error),
            GFP_KERNEL,
        )?;
        let ctl = ctl::ctl_dir(
            c_str!("rtrs-test-evil-srv"),
            &CTL_ATTRS,
            Ctl { ctx: ctx.clone() },
        )?;
        let port = PORT_NR.value();
        let listener = Listener::new(ctx.clone(), &SockAddr::ipv4([0, 0, 0, 0], port), 64, None)?;
        pr_info!("listening on port {}\n", port);
        Ok(Self {
            listener: Some(listener),
            ctl: Some(ctl),
            ctx,
        })
    }
}

impl Drop for EvilSrv {
    fn drop(&mut self) {
        // No new connections, no scenario changes; then the open (or held)
        // connections go, outside the lock (a closing one's handler takes
        // it), and the session with the last of them.
        drop(self.listener.take());
        drop(self.ctl.take());
        let conns = core::mem::take(&mut *self.ctx.conns.lock());
        drop(conns);
        let sess = self.ctx.sess.lock().take();
        drop(sess);
    }
}
