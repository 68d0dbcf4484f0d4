// SPDX-License-Identifier: GPL-2.0-or-later

//! A client session (`struct rtrs_clt_sess`): its paths, their selection
//! per IO, the link events of the whole session, and the permits.

use super::abi::{Attrs, CltLinkEv, LinkOps, OpenArgs, Permits, Request};
use super::chunks::{Awaited, CloseFence};
use super::fence::Fences;
use super::path::{Path, Submit};
use super::sysfs::{PathFiles, SessDev};
use core::ops::ControlFlow;
use core::sync::atomic::{AtomicI32, AtomicU32, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use kernel::{c_str, new_mutex};
use rb::cpu::{current_cpu, nr_cpu_ids};
use rb::global::Global;
use rb::net::SockAddr;
use rb::once::SetOnce;
use rb::rcu::{self, new_rcu_vec, RcuVec};
use rb::sync::{new_spinlock_irq, SpinLockIrq};
use rb::sysfs::Kobject;
use rb::workqueue::{OwnedQueue, WQ_HIGHPRI};
use rtrs_common::dev::DevPool;
use rtrs_common::kerr;
use rtrs_common::name::NameBuf;
use rtrs_common::sockaddr::same_addr;
use rtrs_proto::chunks::permits_for;
use rtrs_proto::imm::{imm_bits, MAX_IMM_PAYL_BITS};
use rtrs_proto::msg::{check_pathname, Uuid, MAX_PATHS_NUM};
use rtrs_proto::path_sel::{MpPolicy, PathIter, PathSnapshot, PathSource, RrCursor};
use rtrs_proto::state::CltState;

/// What the session learned from its paths' servers.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Limits {
    pub(crate) queue_depth: u32,
    pub(crate) max_io_size: u32,
    pub(crate) max_segments: u32,
}

/// What paths share: the session as they see it.
///
/// # Locking
///
/// - `paths`: IO walks it under RCU without a lock; writers (`open`,
///   `add_path`, `remove_path`, `close`) are serialised by its own mutex.
/// - `paths_up` (a mutex) is held while the user hears of the session's
///   link events, so they come in order; a path's `conns` is held around
///   it (the path counted up or down), and the user may call back
///   (`rtrs_clt_query()` takes `limits`) but not into the path.
/// - `limits` (irq-safe spinlock) is a leaf: what the servers told.
/// - The policy, the reconnect limit, the round-robin cursors and the path
///   count are atomics, read per IO or by sysfs.
#[pin_data]
pub(crate) struct Core {
    pub(crate) name: NameBuf,
    pub(crate) port: u16,
    pub(crate) paths_uuid: Uuid,
    link: LinkOps,
    pub(crate) reconnect_delay_ms: u32,
    /// Attempts before a path gives up; -1 means forever.
    pub(crate) max_reconnect_attempts: AtomicI32,
    pub(crate) mp_policy: AtomicU32,
    pub(crate) nr_poll_queues: u32,
    /// The paths, as IO walks them without a lock (C's `paths_list`
    /// under RCU): an IO neither locks nor takes a reference to pick one.
    #[pin]
    paths: RcuVec<Arc<Path>>,
    /// Per-CPU round-robin positions (`usize::MAX`: none).
    rr: KVec<AtomicUsize>,
    /// `paths_up`, which starts at `MAX_PATHS_NUM` while the session opens.
    #[pin]
    paths_up: Mutex<usize>,
    /// Paths of the session (`paths_num`).
    pub(crate) paths_num: AtomicUsize,
    #[pin]
    pub(crate) limits: SpinLockIrq<Limits>,
    pub(crate) wq: OwnedQueue,
    /// The silence probe and the recovery work it sets off: the steps
    /// between a path's silence and its IO's failover. High priority, so
    /// that a busy CPU's normal work items do not stretch the failover
    /// window; neither busy-loops.
    pub(crate) failover_wq: OwnedQueue,
    /// The session's permits and chunks, once the servers told how many
    /// (before that no IO is in flight).
    pub(crate) permits: SetOnce<Arc<Permits>>,
    /// The module's devices, whose PDs the paths share.
    pub(crate) devs: Arc<DevPool>,
    /// The session's fences (RTRS 2.1).
    #[pin]
    pub(crate) fences: Fences,
    /// Established paths whose server answers fences (RTRS 2.1), until
    /// their teardown; the chunk pool reads it to keep fences whose answer
    /// may still come.
    pub(crate) answering: Arc<AtomicU32>,
}

/// The devices of the module's paths, set at module init.
pub(crate) static DEVS: Global<Arc<DevPool>> = Global::new();

/// What came of a fence ([`Core::fence`]).
pub(crate) enum Fenced {
    /// The server closed the path and answered its IO: no chunk needs a
    /// fence.
    Answered,
    /// Sent, not answered yet: still registered, so that an answer that
    /// comes later is seen; the chunk fence waits for it too, and the
    /// caller forgets it.
    Pending(Awaited),
    /// No path could take it, or the server does not run 2.1.
    NotSent,
}

/// The session's paths as the policies read them: each path's state at
/// the moment a policy looks (C reads the path under RCU at each pick).
struct Live<'a>(&'a [Arc<Path>]);

impl PathSource for Live<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn snapshot(&self, i: usize) -> PathSnapshot {
        self.0[i].snapshot()
    }
}

impl Core {
    /// A fence for path `from` (RTRS 2.1): asks the server on another
    /// path to close `from` and answer its IO, and waits a while for the
    /// answer. Process context.
    pub(crate) fn fence(&self, from: &Path) -> Fenced {
        let sent = {
            let g = rcu::read_lock();
            self.fences.send(from, self.paths.read(&g))
        };
        match sent {
            Some((path_id, seq, on)) => {
                if self.fences.wait_answer(from, path_id, seq, &on) {
                    self.fences.forget(path_id, seq);
                    Fenced::Answered
                } else {
                    Fenced::Pending(Awaited {
                        path_id,
                        seq,
                        via: on.srv().path_id,
                    })
                }
            }
            None => Fenced::NotSent,
        }
    }

    /// The server answered fence `seq` of its path `path_id` (FENCE_ACK):
    /// its waiter is woken, and chunks fenced while the answer was late are
    /// free again. Any context.
    pub(crate) fn fence_acked(&self, path_id: u16, seq: u16) {
        self.fences.acked(path_id, seq);
        if let Some(permits) = self.permits.get() {
            let n = permits.chunks().answered(path_id, seq);
            if n > 0 {
                pr_info!(
                    "<{}>: {} fenced chunks free again: the server answered the fence late\n",
                    self.name,
                    n
                );
            }
        }
    }

    /// Whether a path other than `from` is connected.
    pub(crate) fn other_path_up(&self, from: &Path) -> bool {
        let g = rcu::read_lock();
        self.paths
            .read(&g)
            .iter()
            .any(|p| !core::ptr::eq(&**p, from) && p.state() == CltState::Connected)
    }

    fn policy(&self) -> MpPolicy {
        MpPolicy::from_id(self.mp_policy.load(Ordering::Relaxed) as i32)
            .unwrap_or(MpPolicy::MinInflight)
    }

    /// Tries the paths in the order of the policy, picking each as the
    /// previous one is refused, as C's `path_it` does: `try_path` says
    /// whether to stop, with a result. Moves the CPU's round-robin cursor
    /// by the picks made. Runs in a read section: `try_path` must not
    /// sleep.
    pub(crate) fn for_each_pick<R>(
        &self,
        mut try_path: impl FnMut(&Arc<Path>) -> ControlFlow<R>,
    ) -> Option<R> {
        let g = rcu::read_lock();
        let paths = Live(self.paths.read(&g));
        let cpu = (current_cpu() % nr_cpu_ids()) as usize;
        let slot = self.rr.get(cpu);
        let last = slot.map_or(usize::MAX, |s| s.load(Ordering::Relaxed));
        let mut cursor = RrCursor::at((last != usize::MAX).then_some(last));
        let mut out = None;
        for i in PathIter::new(&paths, self.policy(), &mut cursor) {
            if let ControlFlow::Break(r) = try_path(&paths.0[i]) {
                out = Some(r);
                break;
            }
        }
        if let Some(s) = slot {
            s.store(cursor.get().unwrap_or(usize::MAX), Ordering::Relaxed);
        }
        out
    }

    /// A path came up (`rtrs_clt_path_up()`): `RECONNECTED` when the first
    /// path is back after all were down (not while the session opens).
    pub(crate) fn path_up(&self) {
        let mut up = self.paths_up.lock();
        *up += 1;
        let num = self.paths_num.load(Ordering::Relaxed);
        if *up > MAX_PATHS_NUM && *up == MAX_PATHS_NUM + num {
            *up = num;
        } else if *up == 1 {
            self.link.link_ev(CltLinkEv::Reconnected);
        }
    }

    /// An established path went down (`rtrs_clt_path_down()`).
    pub(crate) fn path_down(&self) {
        let mut up = self.paths_up.lock();
        *up = up.saturating_sub(1);
        if *up == 0 {
            self.link.link_ev(CltLinkEv::Disconnected);
        }
    }

    /// A connected path's server told its limits (`rtrs_rdma_conn_established()`).
    pub(crate) fn learn(&self, queue_depth: u32, max_io_size: u32, max_segments: u32) {
        let mut l = self.limits.lock();
        l.queue_depth = queue_depth;
        l.max_io_size = match (l.max_io_size, max_io_size) {
            (0, m) | (m, 0) => m,
            (a, b) => a.min(b),
        };
        l.max_segments = if l.max_segments == 0 {
            max_segments
        } else {
            l.max_segments.min(max_segments)
        };
    }

    /// sysfs `add_path` (`rtrs_clt_create_path_from_sysfs()`): connects a
    /// new path and adds its directory to `dir`. `EEXIST` for a path the
    /// session has.
    pub(crate) fn add_path(
        core: &Arc<Core>,
        src: Option<SockAddr>,
        dst: SockAddr,
        dir: &Kobject<()>,
    ) -> Result {
        // The first path after all were removed is like a new session for
        // the server.
        let for_new = core.paths_num.load(Ordering::Relaxed) == 0;
        let path = Path::new(core, src, dst, for_new)?;
        // Added before init, since init fires the link events; IO does not
        // pick a path that is not connected.
        core.paths.push_if(path.clone(), |paths| {
            let dup = paths.iter().any(|p| {
                let (psrc, pdst) = p.addrs();
                same_addr(&pdst, &dst)
                    && match (src.as_ref(), psrc.as_ref()) {
                        (Some(a), Some(b)) => same_addr(a, b),
                        _ => true,
                    }
            });
            if dup {
                pr_err!(
                    "<{}>: add_path: the session has a path to that address\n",
                    core.name
                );
                return Err(EEXIST);
            }
            Ok(())
        })?;
        core.paths_num.fetch_add(1, Ordering::Relaxed);
        let ret = path.init().and_then(|()| PathFiles::add(dir, &path));
        if ret.is_err() {
            core.remove_path(&path);
            path.close_conns(true);
            PathFiles::remove(&path);
        }
        ret
    }

    /// Takes `path` out of the session (`rtrs_clt_remove_path_from_arr()`).
    /// Sleeps: IO may walk the list until a grace period has passed.
    pub(crate) fn remove_path(&self, path: &Arc<Path>) {
        let at = {
            let g = rcu::read_lock();
            self.paths
                .read(&g)
                .iter()
                .position(|p| Arc::ptr_eq(p, path))
        };
        match self.paths.retain(|p| !Arc::ptr_eq(p, path)) {
            Ok(0) => {}
            Ok(_) => {
                self.paths_num.fetch_sub(1, Ordering::Relaxed);
                if let Some(at) = at {
                    self.rr_path_removed(at);
                }
            }
            // IO skips it: it is closed.
            Err(e) => pr_err!(
                "{}: cannot take the path out of the session's list: {}\n",
                path.name(),
                e.to_errno()
            ),
        }
    }

    /// Keeps each CPU's round-robin cursor on the path it was on after path
    /// `at` left the list, and moves a cursor that was on `at` to the path
    /// that followed it (`rtrs_clt_remove_path_from_arr()`). A cursor an IO
    /// moved meanwhile is left as the IO set it.
    fn rr_path_removed(&self, at: usize) {
        let len = {
            let g = rcu::read_lock();
            self.paths.read(&g).len()
        };
        for slot in self.rr.iter() {
            let v = slot.load(Ordering::Relaxed);
            let mut c = RrCursor::at((v != usize::MAX).then_some(v));
            c.path_removed(at, len);
            let new = c.get().unwrap_or(usize::MAX);
            let _ = slot.compare_exchange(v, new, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    fn is_connected(&self) -> bool {
        let g = rcu::read_lock();
        self.paths
            .read(&g)
            .iter()
            .any(|p| p.state() == CltState::Connected)
    }

    /// `rtrs_clt_query()`.
    pub(crate) fn query(&self) -> Result<Attrs> {
        if !self.is_connected() {
            return Err(Error::from_errno(-(rb::ffi::ECOMM as i32)));
        }
        let l = *self.limits.lock();
        Ok(Attrs {
            // One chunk stays spare for failover (`permits_for`).
            queue_depth: permits_for(l.queue_depth),
            max_segments: l.max_segments,
            max_io_size: l.max_io_size.min(l.max_segments.saturating_mul(4096)),
        })
    }

    /// `rtrs_clt_rdma_cq_direct()`: polls poll queue `index` of a connected
    /// path; -1 if there is none.
    pub(crate) fn poll(&self, index: u32) -> i32 {
        let mut cnt = -1;
        self.for_each_pick(|p| {
            if p.state() != CltState::Connected {
                return ControlFlow::Continue(());
            }
            cnt = p.poll(index + 1);
            if cnt != 0 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        cnt
    }
}

/// A session as the C user holds it: the shared core, the permits and the
/// session's sysfs device.
///
/// # Locking
///
/// `dev` (a mutex) guards the session's sysfs device, from `open` until
/// `close` takes it; `Core`'s and the permits' locks are their own.
#[pin_data]
pub(crate) struct Sess {
    pub(crate) core: Arc<Core>,
    pub(crate) permits: Arc<Permits>,
    #[pin]
    dev: Mutex<Option<SessDev>>,
}

impl Sess {
    /// `rtrs_clt_open()`.
    pub(crate) fn open(args: OpenArgs<'_>) -> Result<Arc<Self>> {
        let name = args.sessname.as_bytes();
        check_pathname(name).map_err(|e| {
            pr_err!("pathname cannot contain / and .\n");
            kerr(e)
        })?;
        if args.paths.is_empty() || args.paths.len() > MAX_PATHS_NUM {
            return Err(EINVAL);
        }
        let mut sessname = NameBuf::new();
        if name.len() >= rtrs_proto::msg::NAME_MAX {
            return Err(EINVAL);
        }
        sessname.set(name);
        let paths_num = args.paths.len();
        let mut rr = KVec::with_capacity(nr_cpu_ids().get() as usize, GFP_KERNEL)?;
        for _ in 0..nr_cpu_ids().get() {
            rr.push(AtomicUsize::new(usize::MAX), GFP_KERNEL)?;
        }
        let core = Arc::pin_init(
            try_pin_init!(Core {
                name: sessname,
                port: args.port,
                paths_uuid: rb::random::uuid(),
                link: args.link,
                reconnect_delay_ms: u32::from(args.reconnect_delay_sec) * 1000,
                max_reconnect_attempts: AtomicI32::new(args.max_reconnect_attempts.into()),
                mp_policy: AtomicU32::new(MpPolicy::MinInflight.id() as u32),
                nr_poll_queues: args.nr_poll_queues,
                paths <- new_rcu_vec!("rtrs_clt_paths"),
                rr,
                paths_up <- new_mutex!(MAX_PATHS_NUM, "rtrs_clt_paths_up"),
                paths_num: AtomicUsize::new(paths_num),
                limits <- new_spinlock_irq!(Limits::default(), "rtrs_clt_limits"),
                wq: OwnedQueue::new(c_str!("rtrs_client_wq"), 0)?,
                failover_wq: OwnedQueue::new(c_str!("rtrs_client_failover_wq"), WQ_HIGHPRI)?,
                permits: SetOnce::new(),
                devs: DEVS.get().ok_or(ENODEV)?,
                fences <- Fences::new(),
                answering: Arc::new(AtomicU32::new(0), GFP_KERNEL)?,
            }? Error),
            GFP_KERNEL,
        )?;
        let paths = args.paths;
        let dev = SessDev::new(&core)?;
        if let Err(e) = Self::open_paths(&core, &dev, &paths) {
            Self::close_core(&core, dev);
            return Err(e);
        }
        let qd = core.limits.lock().queue_depth;
        let shift = MAX_IMM_PAYL_BITS - imm_bits(qd);
        let pdu_sz = args.pdu_sz;
        let sess_core = core.clone();
        let sess = Arc::pin_init(
            Permits::new(core.name, qd, pdu_sz, shift, core.answering.clone()),
            GFP_KERNEL,
        )
        .and_then(|permits| {
            let _ = core.permits.set(permits.clone());
            Arc::pin_init(
                try_pin_init!(Sess {
                    core: sess_core,
                    permits,
                    dev <- new_mutex!(None, "rtrs_clt_sess_dev"),
                }? Error),
                GFP_KERNEL,
            )
        });
        match sess {
            Ok(sess) => {
                // From here on the session owns the device, and `close` tears down.
                *sess.dev.lock() = Some(dev);
                Ok(sess)
            }
            Err(e) => {
                pr_err!(
                    "{}: cannot allocate the session: {}\n",
                    core.name,
                    e.to_errno()
                );
                Self::close_core(&core, dev);
                Err(e)
            }
        }
    }

    /// Connects the paths given to `open` and adds their directories.
    fn open_paths(
        core: &Arc<Core>,
        dev: &SessDev,
        paths: &[(Option<SockAddr>, SockAddr)],
    ) -> Result {
        for (i, (src, dst)) in paths.iter().enumerate() {
            let path = Path::new(core, *src, *dst, i == 0)?;
            core.paths.push_if(path.clone(), |_| Ok(()))?;
            if let Err(e) = path.init().and_then(|()| dev.add_path_files(&path)) {
                core.remove_path(&path);
                path.close_conns(true);
                PathFiles::remove(&path);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Closes every path and removes the session from sysfs: first no new
    /// paths (`paths/` taken out, after a running `add_path`), then the
    /// paths and their directories, then `paths/`, then the device (after
    /// running stores of its files).
    fn close_core(core: &Arc<Core>, dev: SessDev) {
        let dir = dev.close_paths_dir();
        let paths = core.paths.take();
        for p in paths.iter() {
            p.close_conns(true);
            PathFiles::remove(p);
        }
        drop(dir);
        drop(dev);
        core.failover_wq.flush();
        core.wq.flush();
    }

    /// `rtrs_clt_close()`: closes every path, waits for the permits.
    pub(crate) fn close(self: Arc<Self>) {
        let dev = self.dev.lock().take();
        if let Some(dev) = dev {
            Self::close_core(&self.core, dev);
        }
        self.permits.wait_all_free();
    }

    /// `rtrs_clt_request()`: sends an IO on the first path of the policy
    /// that takes it.
    pub(crate) fn request(&self, req: Request<'_>) -> Result {
        let (con_type, cpu, mem_off) = self.permits.info(req.permit);
        let usr_len = req.usr.len();
        let mut parts = Submit {
            dir: req.dir,
            permit: req.permit,
            idx: self.permits.chunk(req.permit),
            con_type,
            cpu,
            mem_off,
            data_len: req.data_len,
            usr_len,
            conf: Some(req.conf),
            sg: req.sg,
        };
        let mut err = rb::errno::ECONNABORTED();
        let done = self.core.for_each_pick(|p| {
            if p.state() != CltState::Connected {
                return ControlFlow::Continue(());
            }
            match p.submit(&mut parts, &|out: &mut [u8]| req.usr.copy_into(out)) {
                Ok(()) => ControlFlow::Break(Ok(())),
                // Too big for the server: for every path.
                Err(e) if e == rb::errno::EMSGSIZE() => ControlFlow::Break(Err(e)),
                Err(e) => {
                    err = e;
                    ControlFlow::Continue(())
                }
            }
        });
        done.unwrap_or(Err(err))
    }
}

/// Fails an IO over to another path (`rtrs_clt_failover_req()`): `parts`
/// and the user's message `usr` as they were on the failed path. With a
/// `fence` (the failed path's close is not confirmed: its writes may still
/// land in the IO's chunk), the IO leaves its chunk to the fence and moves
/// to a free one first, waiting for one if none is. Process context.
/// Returns whether another path took the IO (else it was confirmed with an
/// error).
pub(crate) fn failover(
    core: &Core,
    from: &Path,
    mut parts: Submit,
    usr: &[u8],
    fence: Option<CloseFence>,
) -> bool {
    if let (Some(cf), Some(permits)) = (fence, core.permits.get()) {
        if permits.move_out(parts.permit, &cf) {
            // No chunk needed once no other path is up: the IO fails, and
            // its permit holds none.
            let Some(c) = permits.move_to(parts.permit, || core.other_path_up(from)) else {
                if let Some(conf) = parts.conf.take() {
                    conf.confirm(rb::errno::ECONNABORTED().to_errno());
                }
                return false;
            };
            parts.idx = c;
            parts.mem_off = permits.chunks().mem_off(c);
        } else {
            // Its chunk was not the request's to leave: sending it again
            // there could be overwritten by the old path. Never expected;
            // failing the IO is safe.
            pr_err!(
                "{}: chunk {} of a failed-over IO could not be fenced; failing the IO\n",
                from.name(),
                parts.idx
            );
            if let Some(conf) = parts.conf.take() {
                conf.confirm(rb::errno::ECONNABORTED().to_errno());
            }
            return false;
        }
    }
    let mut err = rb::errno::ECONNABORTED();
    let fill = |out: &mut [u8]| -> Result<usize> {
        out.get_mut(..usr.len()).ok_or(EINVAL)?.copy_from_slice(usr);
        Ok(usr.len())
    };
    let moved = core.for_each_pick(|p| {
        if core::ptr::eq(&**p, from) || p.state() != CltState::Connected {
            return ControlFlow::Continue(());
        }
        match p.submit(&mut parts, &fill) {
            Ok(()) => {
                p.stats_failover();
                ControlFlow::Break(())
            }
            Err(e) => {
                err = e;
                ControlFlow::Continue(())
            }
        }
    });
    if moved.is_some() {
        return true;
    }
    if let Some(conf) = parts.conf.take() {
        conf.confirm(err.to_errno());
    }
    false
}
