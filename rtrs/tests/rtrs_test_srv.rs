// SPDX-License-Identifier: GPL-2.0-or-later

//! rtrs-test-srv: the server half of the RTRS API test (the client half is
//! `rtrs_test_clt.rs`; the selftest `rtrs_api.sh` drives both). A user of
//! the server API of `rtrs.h`, on whichever `rtrs-server` is loaded, ours or
//! the C one: it listens on `port_nr` and keeps a memory disk of `size_kb`
//! KiB that every session shares. A client's message (see [`Msg`]) names an
//! offset and a length: a write stores the IO's data there, a read answers
//! with what is there. A message that does not parse, or a range outside
//! the disk or not the IO's data length, is answered `EINVAL` (the errno
//! travels back in the IO response). A hold message is answered after
//! `HOLD_MS` from a workqueue of the module, keeping its chunk in use (for
//! `rtrs_test_evil.rs`). Each session's counts are logged when it goes
//! down.

#![deny(unsafe_code)]

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::alloc::VVec;
use kernel::prelude::*;
use kernel::str::BStr;
use kernel::sync::{Arc, ArcBorrow, Mutex};

// Each side uses its half (the client encodes, the server decodes).
#[path = "rtrs_test_msg.rs"]
#[allow(dead_code)]
mod msg;

use msg::{Msg, Op};
use rb::global::Global;
use rb::param::{module_param, UintParam, UshortParam};
use rb::workqueue::OwnedQueue;
use rb_rtrs_srv::{SessRef, SrvCtx, SrvIo, SrvUser};

module! {
    type: TestSrv,
    name: "rtrs_test_srv",
    author: "rtrs-rs developers",
    description: "RTRS API test: a memory disk served over the RTRS server API",
    license: "GPL",
}

module_param! {
    /// The port to listen on.
    static PORT_NR: UshortParam = UshortParam::new(msg::PORT);
    name: port_nr, perm: 0o444, desc: "The port to listen on (default: 1235)";
}

module_param! {
    /// The size of the disk.
    static SIZE_KB: UintParam = UintParam::new(4096);
    name: size_kb, perm: 0o444, desc: "Size of the memory disk in KiB (default: 4096)";
}

/// The memory disk, shared by all sessions.
#[pin_data]
struct Disk {
    #[pin]
    bytes: Mutex<VVec<u8>>,
}

/// The disk, from module init to module exit.
static DISK: Global<Arc<Disk>> = Global::new();

/// Where held requests wait, from module init to module exit.
static HOLD_WQ: Global<Arc<OwnedQueue>> = Global::new();

/// One session: its name and what it did.
struct Session {
    name: [u8; 64],
    name_len: usize,
    reads: AtomicU64,
    writes: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
}

impl Session {
    fn name(&self) -> &BStr {
        BStr::from_bytes(self.name.get(..self.name_len).unwrap_or_default())
    }

    /// Carries out `m` on `io`'s data.
    fn serve(&self, m: &Msg, io: &mut SrvIo<TestSrv>) -> Result {
        let data = io.data_mut();
        if m.len as usize != data.len() {
            pr_err!(
                "session {}: message says {} bytes, the IO has {}\n",
                self.name(),
                m.len,
                data.len()
            );
            return Err(EINVAL);
        }
        let disk = DISK.get().ok_or(ENODEV)?;
        let mut bytes = disk.bytes.lock();
        let range = usize::try_from(m.offset)
            .ok()
            .and_then(|off| Some(off..off.checked_add(data.len())?))
            .filter(|r| r.end <= bytes.len())
            .ok_or(EINVAL)?;
        let count = match m.op {
            Op::Read => {
                data.copy_from_slice(&bytes[range]);
                &self.reads
            }
            Op::Write => {
                bytes[range].copy_from_slice(data);
                &self.writes
            }
            // `rdma_ev` answers holds itself.
            Op::Hold => return Err(EINVAL),
        };
        count.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(m.len.into(), Ordering::Relaxed);
        Ok(())
    }
}

impl SrvUser for TestSrv {
    type Session = Session;

    fn connected(sess: &SessRef<Self>) -> Result<Arc<Session>> {
        let mut name = [0u8; 64];
        let name_len = sess.path_name(&mut name)?.len();
        let s = Arc::new(
            Session {
                name,
                name_len,
                reads: AtomicU64::new(0),
                writes: AtomicU64::new(0),
                bytes: AtomicU64::new(0),
                errors: AtomicU64::new(0),
            },
            GFP_KERNEL,
        )?;
        pr_info!(
            "session {} connected, queue depth {}\n",
            s.name(),
            sess.queue_depth()
        );
        Ok(s)
    }

    fn disconnected(sess: Arc<Session>) {
        pr_info!(
            "session {} closed: {} reads, {} writes, {} bytes, {} errors\n",
            sess.name(),
            sess.reads.load(Ordering::Relaxed),
            sess.writes.load(Ordering::Relaxed),
            sess.bytes.load(Ordering::Relaxed),
            sess.errors.load(Ordering::Relaxed)
        );
    }

    fn rdma_ev(sess: ArcBorrow<'_, Session>, mut io: SrvIo<Self>, usr: &[u8]) {
        let res = match Msg::decode(usr) {
            Some(m) if m.op == Op::Hold => {
                pr_info!("session {}: holding a request\n", sess.name());
                let Some(wq) = HOLD_WQ.get() else {
                    return io.respond(Err(ENODEV));
                };
                let held = wq.queue().try_spawn(GFP_ATOMIC, move || {
                    rb::random::msleep(msg::HOLD_MS);
                    io.respond(Ok(()));
                });
                if held.is_err() {
                    pr_err!("session {}: cannot hold a request\n", sess.name());
                }
                return;
            }
            Some(m) => sess.serve(&m, &mut io),
            None => {
                pr_err!(
                    "session {}: a message of {} bytes that is not ours\n",
                    sess.name(),
                    usr.len()
                );
                Err(EINVAL)
            }
        };
        if res.is_err() {
            sess.errors.fetch_add(1, Ordering::Relaxed);
        }
        io.respond(res);
    }
}

struct TestSrv {
    // Dropped first: closing the server ends every session.
    ctx: Option<SrvCtx<TestSrv>>,
}

impl kernel::Module for TestSrv {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let size = usize::try_from(SIZE_KB.value())
            .ok()
            .and_then(|kb| kb.checked_mul(1024))
            .filter(|&s| s > 0)
            .ok_or(EINVAL)?;
        let bytes = VVec::from_elem(0u8, size, GFP_KERNEL)?;
        let disk = Arc::pin_init(
            pin_init!(Disk {
                bytes <- kernel::new_mutex!(bytes, "rtrs_test_disk"),
            }),
            GFP_KERNEL,
        )?;
        let wq = Arc::new(
            OwnedQueue::new(kernel::c_str!("rtrs_test_hold"), 0)?,
            GFP_KERNEL,
        )?;
        HOLD_WQ.set(wq).map_err(|_| EBUSY)?;
        if DISK.set(disk).is_err() {
            HOLD_WQ.take();
            return Err(EBUSY);
        }
        let ctx = SrvCtx::open(PORT_NR.value()).inspect_err(|e| {
            pr_err!(
                "rtrs_srv_open(port {}): {}\n",
                PORT_NR.value(),
                e.to_errno()
            );
            DISK.take();
            HOLD_WQ.take();
        })?;
        pr_info!(
            "listening on port {}, disk of {} KiB\n",
            PORT_NR.value(),
            SIZE_KB.value()
        );
        Ok(Self { ctx: Some(ctx) })
    }
}

impl Drop for TestSrv {
    fn drop(&mut self) {
        self.ctx = None;
        // Destroying the queue waits for the last held answer's return.
        HOLD_WQ.take();
        DISK.take();
    }
}
