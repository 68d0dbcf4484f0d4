// SPDX-License-Identifier: GPL-2.0-or-later

//! rtrs-test-clt: the client half of the RTRS API test (the server half is
//! `rtrs_test_srv.rs`; the selftest `rtrs_api.sh` drives both). A user of
//! the client API of `rtrs.h`, on whichever `rtrs-client` is loaded, ours or
//! the C one.
//!
//! Loading it opens the session `sessname` over the path `path` and, if
//! given, `path2` (RTRS path syntax) to an rtrs-test-srv listening on
//! `port_nr`, and creates
//! `/sys/class/rtrs-test/ctl` with:
//!
//! - `attrs`: what `rtrs_clt_query` says (`queue_depth`, `max_io_size`,
//!   `max_segments`);
//! - `run`: write `<stream> <rounds>` to run [`battery`] `rounds` times on
//!   the disk region of `stream` (one of [`STREAMS`], each [`REGION`]
//!   bytes), in the writer's context, so on its CPU and that CPU's
//!   connection: sizes from 512 B to `max_io_size`, data that starts at a
//!   page or mid-page (one scatterlist entry per page it touches), each
//!   written, read back into a scribbled buffer and compared; and a read
//!   past the end of the disk, whose `EINVAL` must come back from the
//!   server. The write fails with `EIO` on a mismatch (logged with its
//!   place), or with the errno RTRS returned;
//! - `stats`: requests sent, bytes moved, mismatches found.
//!
//! Unloading closes the session.

#![deny(unsafe_code)]

use core::fmt::Write;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::c_str;
use kernel::page::PAGE_SIZE;
use kernel::prelude::*;
use kernel::str::{BStr, CStr};
use kernel::sync::{Arc, ArcBorrow};

// Each side uses its half (the client encodes, the server decodes).
#[path = "rtrs_test_msg.rs"]
#[allow(dead_code)]
mod msg;

#[path = "rtrs_test_ctl.rs"]
mod ctl;

use msg::{Msg, Op};
use rb::param::{module_param, StringParam, UshortParam};
use rb::sysfs::{attributes, Attribute, Attributes, Device, Page};
use rb_rtrs_clt::{Attrs, Clt, Dir, LinkEv, LinkHandler, OpenParams, PathAddr};

module! {
    type: TestClt,
    name: "rtrs_test_clt",
    author: "rtrs-rs developers",
    description: "RTRS API test: IO of every size through the RTRS client API",
    license: "GPL",
}

module_param! {
    /// The session name.
    static SESSNAME: StringParam<64> = StringParam::new("rtrs-test");
    name: sessname, perm: 0o444, desc: "Session name (default: rtrs-test)";
}

module_param! {
    /// The path, `[src@]dst` as RTRS parses it.
    static PATH: StringParam<128> = StringParam::new("");
    name: path, perm: 0o444, desc: "The path to the server: [ip:|gid:]src@[ip:|gid:]dst or dst";
}

module_param! {
    /// A second path, optional.
    static PATH2: StringParam<128> = StringParam::new("");
    name: path2, perm: 0o444, desc: "A second path to the server (default: none)";
}

module_param! {
    /// The server's port.
    static PORT_NR: UshortParam = UshortParam::new(msg::PORT);
    name: port_nr, perm: 0o444, desc: "The server's port (default: 1235)";
}

/// Bytes of the server's disk per stream.
const REGION: usize = 512 * 1024;

/// Streams: regions of the disk (rtrs-test-srv's default disk holds them).
const STREAMS: usize = 8;

/// The sizes a round moves, as far as `max_io_size` allows; 0 stands for
/// `max_io_size` itself.
const SIZES: [usize; 10] = [512, 1024, 3584, 4096, 4608, 8192, 12800, 65536, 126976, 0];

/// The byte the test writes at `pos` of the disk in round `round`: a
/// function of both, so that a misplaced or stale block shows.
fn pattern(pos: usize, round: u32) -> u8 {
    let x = (pos as u32 ^ round.wrapping_mul(0x9e37_79b9)).wrapping_mul(0x8525_3a4b);
    (x >> 24) as u8
}

/// Link events: logged.
struct Events;

impl LinkHandler for Events {
    fn link_ev(_this: ArcBorrow<'_, Self>, ev: LinkEv) {
        pr_info!("link event: {:?}\n", ev);
    }
}

/// The data of `ctl`.
struct Ctl {
    clt: Arc<Clt>,
    attrs: Attrs,
    requests: AtomicU64,
    bytes: AtomicU64,
    mismatches: AtomicU64,
}

impl Ctl {
    /// One request over `buf[at..at + len]` for `len` bytes of the disk at
    /// `offset`, counted.
    fn io(&self, op: Op, offset: usize, buf: &mut KVec<u8>, at: usize, len: usize) -> Result {
        let m = Msg {
            op,
            offset: offset as u64,
            len: u32::try_from(len).map_err(|_| EINVAL)?,
        };
        let dir = match op {
            Op::Read => Dir::Read,
            Op::Write | Op::Hold => Dir::Write,
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.clt.transfer(dir, &m.encode(), buf, at..at + len)?;
        self.bytes.fetch_add(len as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Round `round` on the region of `stream`.
    fn battery(&self, stream: usize, round: u32, buf: &mut KVec<u8>) -> Result {
        let max = self.attrs.max_io_size as usize;
        let base = stream * REGION;
        for (i, &size) in SIZES.iter().enumerate() {
            let size = if size == 0 { max } else { size };
            if size > max || size > REGION {
                continue;
            }
            // Where the data starts in the buffer: at a page, or 512 bytes
            // into one if the extra entry fits in `max_segments`.
            for (j, at) in [0, 512].into_iter().enumerate() {
                let nents = (at + size).div_ceil(PAGE_SIZE);
                if nents > self.attrs.max_segments as usize {
                    continue;
                }
                let slot = (round as usize * 5 + i * 2 + j) * 4608 % (REGION - size + 1);
                let offset = base + slot / 512 * 512;
                for (k, b) in buf[at..at + size].iter_mut().enumerate() {
                    *b = pattern(offset + k, round);
                }
                self.io(Op::Write, offset, buf, at, size)?;
                // Read into the other alignment, over a scribbled buffer.
                let back = 512 - at;
                buf.iter_mut().for_each(|b| *b = 0xa5);
                self.io(Op::Read, offset, buf, back, size)?;
                let bad = buf[back..back + size]
                    .iter()
                    .enumerate()
                    .find(|&(k, &b)| b != pattern(offset + k, round));
                if let Some((k, &b)) = bad {
                    self.mismatches.fetch_add(1, Ordering::Relaxed);
                    pr_err!(
                        "stream {} round {}: {} bytes at disk offset {}: byte {} is {:#x}, wrote {:#x}\n",
                        stream,
                        round,
                        size,
                        offset,
                        k,
                        b,
                        pattern(offset + k, round)
                    );
                    return Err(EIO);
                }
            }
        }
        // The server's errno comes back: a read past the end of its disk.
        match self.io(Op::Read, usize::MAX / 2, buf, 0, 512) {
            Err(e) if e == EINVAL => Ok(()),
            other => {
                pr_err!(
                    "stream {}: a read past the disk's end gave {:?}, not EINVAL\n",
                    stream,
                    other.map_err(|e| e.to_errno())
                );
                Err(rb::errno::EPROTO())
            }
        }
    }
}

/// `ctl/attrs`.
struct CtlAttrs;

#[vtable]
impl Attribute for CtlAttrs {
    type Data = Ctl;
    const NAME: &'static CStr = c_str!("attrs");
    const MODE: u16 = 0o444;

    fn show(ctl: &Ctl, page: &mut Page<'_>) -> Result {
        let a = &ctl.attrs;
        Ok(writeln!(
            page,
            "queue_depth={} max_io_size={} max_segments={}",
            a.queue_depth, a.max_io_size, a.max_segments
        )?)
    }
}

/// Parses `<stream> <rounds>`.
fn parse_run(input: &[u8]) -> Option<(usize, u32)> {
    let s = core::str::from_utf8(input).ok()?.trim();
    let mut words = s.split_ascii_whitespace();
    let stream = words.next()?.parse::<usize>().ok()?;
    let rounds = words.next()?.parse::<u32>().ok()?;
    if words.next().is_some() || stream >= STREAMS || rounds == 0 || rounds > 10_000 {
        return None;
    }
    Some((stream, rounds))
}

/// `ctl/run`.
impl ctl::Run for Ctl {
    fn run(&self, input: &[u8]) -> Result {
        let (stream, rounds) = parse_run(input).ok_or_else(|| {
            pr_err!(
                "run: expected '<stream 0..{}> <rounds 1..10000>'\n",
                STREAMS - 1
            );
            EINVAL
        })?;
        let mut buf =
            KVec::from_elem(0u8, self.attrs.max_io_size as usize + PAGE_SIZE, GFP_KERNEL)?;
        for round in 0..rounds {
            self.battery(stream, round, &mut buf).inspect_err(|e| {
                pr_err!(
                    "run: stream {} round {} failed: {}\n",
                    stream,
                    round,
                    e.to_errno()
                )
            })?;
        }
        Ok(())
    }
}

/// `ctl/stats`.
struct CtlStats;

#[vtable]
impl Attribute for CtlStats {
    type Data = Ctl;
    const NAME: &'static CStr = c_str!("stats");
    const MODE: u16 = 0o444;

    fn show(ctl: &Ctl, page: &mut Page<'_>) -> Result {
        Ok(writeln!(
            page,
            "requests={} bytes={} mismatches={}",
            ctl.requests.load(Ordering::Relaxed),
            ctl.bytes.load(Ordering::Relaxed),
            ctl.mismatches.load(Ordering::Relaxed)
        )?)
    }
}

static CTL_ATTRS: Attributes<Ctl> = attributes!(Ctl: CtlAttrs, ctl::CtlRun<Ctl>, CtlStats);

struct TestClt {
    // Removing it waits for a `run` in progress; the class goes with it.
    _ctl: Device<Ctl>,
}

impl kernel::Module for TestClt {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let mut name = KVec::new();
        SESSNAME.read(|v| name.extend_from_slice(v, GFP_KERNEL))?;
        let mut addrs = KVec::new();
        for param in [&PATH, &PATH2] {
            let mut path = KVec::new();
            param.read(|v| path.extend_from_slice(v, GFP_KERNEL))?;
            if path.is_empty() && !addrs.is_empty() {
                continue;
            }
            let addr = PathAddr::parse(&path, PORT_NR.value()).inspect_err(|e| {
                pr_err!("path '{}': {}\n", BStr::from_bytes(&path), e.to_errno())
            })?;
            addrs.push(addr, GFP_KERNEL)?;
        }
        let clt = Clt::open(
            Arc::new(Events, GFP_KERNEL)?,
            &OpenParams {
                sessname: &name,
                paths: &addrs,
                port: PORT_NR.value(),
                reconnect_delay_sec: 1,
                max_reconnect_attempts: 0,
                nr_poll_queues: 0,
            },
        )
        .inspect_err(|e| pr_err!("rtrs_clt_open: {}\n", e.to_errno()))?;
        let attrs = clt.query()?;
        pr_info!(
            "session {}: queue_depth {} max_io_size {} max_segments {}\n",
            BStr::from_bytes(&name),
            attrs.queue_depth,
            attrs.max_io_size,
            attrs.max_segments
        );
        let ctl = ctl::ctl_dir(
            c_str!("rtrs-test"),
            &CTL_ATTRS,
            Ctl {
                clt,
                attrs,
                requests: AtomicU64::new(0),
                bytes: AtomicU64::new(0),
                mismatches: AtomicU64::new(0),
            },
        )?;
        Ok(Self { _ctl: ctl })
    }
}
