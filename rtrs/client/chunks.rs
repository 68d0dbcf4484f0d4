// SPDX-License-Identifier: GPL-2.0-or-later

//! The server's chunks as the session's IO holds them, and the fences of
//! paths closed without the server's confirmation ([`rtrs_proto::chunks`]
//! has the rules and their host model).
//!
//! A taken permit holds one chunk, normally its own. When a path closes
//! and the server has not confirmed that its side is closed, each request
//! of that path leaves its chunk to the path's fence and fails over at
//! once on a free chunk; the fence is lifted when the server confirms the
//! close, or when it must have closed the path by itself.

use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::kvec::VecExt;
use rb::sync::{new_spinlock_irq, new_wait_queue, SpinLockIrq, WaitQueue};
use rtrs_common::name::NameBuf;
use rtrs_common::now_ns;
use rtrs_proto::chunks::{words_for, Chunks, Fence};

/// What a waiter sees when it wakes: the value it waited for, or a change
/// of the fences, after which it computes its timeout again.
enum Woken<T> {
    Got(T),
    FencesChanged,
}

/// How many times its first deadline a fence that waits for an answer is
/// held at most: an answer lost on the way (the server could not send it)
/// must not hold chunks for ever.
const HOLD_MAX: i64 = 10;

/// An RTRS 2.1 fence sent for a close and not answered in time: the
/// server's id of the closed path, the fence's number, and the server's id
/// of the path it went on, the one its answer comes on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Awaited {
    pub(crate) path_id: u16,
    pub(crate) seq: u16,
    pub(crate) via: u16,
}

/// What the chunks of a close's IO are left to: its fence, the time by
/// which the server must have closed the path by itself, and the RTRS 2.1
/// fence whose answer may still come.
#[derive(Clone, Copy)]
pub(crate) struct CloseFence {
    pub(crate) fence: Fence,
    pub(crate) deadline_ns: i64,
    pub(crate) awaited: Option<Awaited>,
}

/// A fence that holds chunks.
#[derive(Clone, Copy)]
struct FenceEntry {
    fence: Fence,
    since_ns: i64,
    deadline_ns: i64,
    /// The first deadline's distance from `since_ns`.
    span_ns: i64,
    /// The RTRS 2.1 fence sent for the same close, not answered yet: its
    /// answer lifts this fence, and while it may still come (its path is
    /// up, and the server answers fences) the deadline postpones the lift,
    /// `HOLD_MAX` times the first at most: the server is closing the path
    /// and may be running its IO still.
    answer: Option<Awaited>,
}

/// The chunks of a session and the fences holding some of them.
///
/// # Locking
///
/// Taking and giving back chunks is lock-free. Fencing a chunk and lifting
/// a fence change the fence tags under `fences`, the deadline of each
/// fence holding chunks, so that every tagged chunk's fence is registered;
/// it is a leaf lock (irq-safe: permits are given back, and fences lifted
/// by a taker that finds no chunk, from any context). Whoever frees chunks
/// or changes `fences` wakes `wait`.
#[pin_data]
pub(crate) struct ChunkPool {
    /// The session's name, for log lines.
    sess: NameBuf,
    chunks: Chunks<KVec<AtomicUsize>, KVec<AtomicU32>>,
    /// `mem_off` of chunk `c` is `c << shift` (the IMM payload's offset).
    shift: u32,
    next_fence: AtomicU32,
    /// Fences that hold chunks, with the time (`ktime_get` ns) they were
    /// made and the time by which the server must have closed their path.
    /// Room for one per chunk is reserved: a fence is registered with its
    /// first chunk.
    #[pin]
    fences: SpinLockIrq<KVec<FenceEntry>>,
    /// Bumped whenever `fences` changes, so that waiters recompute their
    /// timeout.
    fences_gen: AtomicU32,
    /// Failed-over IOs waiting for a chunk: while there are, new IO takes
    /// none, so that it cannot starve them.
    movers: AtomicU32,
    /// Established paths whose server answers fences (RTRS 2.1), until
    /// their teardown, counted by the session's paths (`Core::answering`:
    /// the first paths connect before the pool exists).
    answering: Arc<AtomicU32>,
    /// Where takers of a permit or a chunk wait.
    #[pin]
    wait: WaitQueue,
}

impl ChunkPool {
    /// `n` free chunks of session `sess`; chunk `c` is at `c << shift` in
    /// the IMM payload.
    pub(crate) fn new(
        sess: NameBuf,
        n: u32,
        shift: u32,
        answering: Arc<AtomicU32>,
    ) -> impl PinInit<Self, Error> {
        let n = n as usize;
        try_pin_init!(Self {
            sess,
            chunks: {
                let mut map = KVec::with_capacity(words_for(n), GFP_KERNEL)?;
                for _ in 0..words_for(n) {
                    map.push(AtomicUsize::new(0), GFP_KERNEL)?;
                }
                let mut fence = KVec::with_capacity(n, GFP_KERNEL)?;
                for _ in 0..n {
                    fence.push(AtomicU32::new(0), GFP_KERNEL)?;
                }
                Chunks::new(map, fence, n).ok_or(EINVAL)?
            },
            shift,
            next_fence: AtomicU32::new(1),
            fences <- new_spinlock_irq!(KVec::with_capacity(n, GFP_KERNEL)?, "rtrs_clt_fences"),
            fences_gen: AtomicU32::new(0),
            movers: AtomicU32::new(0),
            answering,
            wait <- new_wait_queue!("rtrs_clt_permits"),
        }? Error)
    }

    /// The IMM payload offset of chunk `c`.
    pub(crate) fn mem_off(&self, c: u32) -> u32 {
        c << self.shift
    }

    /// Takes chunk `prefer` if free, else the lowest free one, for a new
    /// IO: none while a failed-over IO waits for one.
    pub(crate) fn take(&self, prefer: u32) -> Option<u32> {
        if self.movers.load(Ordering::Acquire) != 0 {
            return None;
        }
        self.chunks.take(prefer as usize).map(|c| c as u32)
    }

    /// Takes a chunk for an IO failed over from a fenced one, waiting for
    /// one if none is free; new IO takes none meanwhile. `None` once
    /// `wanted` says the IO has nowhere to go any more (checked whenever
    /// the waiters are woken: a path's state change wakes them). Process
    /// context.
    pub(crate) fn take_for_failover(&self, prefer: u32, wanted: impl Fn() -> bool) -> Option<u32> {
        if let Some(c) = self.chunks.take(prefer as usize) {
            return Some(c as u32);
        }
        self.movers.fetch_add(1, Ordering::AcqRel);
        let c = self.wait_for(|| match self.chunks.take(prefer as usize) {
            Some(c) => Some(Some(c as u32)),
            None => (!wanted()).then_some(None),
        });
        self.movers.fetch_sub(1, Ordering::AcqRel);
        // New IO may take chunks again.
        self.wake();
        c
    }

    /// Gives chunk `c` back (a request held it); false if it was free.
    /// Does not wake the waiters: see [`ChunkPool::wake`].
    pub(crate) fn put(&self, c: u32) -> bool {
        self.chunks.put(c as usize)
    }

    /// Wakes the waiters if any, after chunks or permits were freed.
    pub(crate) fn wake(&self) {
        // `has_sleepers` has the barrier that pairs with the taker's before
        // it looks again: either it sees what was freed, or we see it
        // queued.
        if self.wait.has_sleepers() {
            self.wait.wake_up_all();
        }
    }

    /// A fence for the close of one path.
    pub(crate) fn new_fence(&self) -> Fence {
        loop {
            if let Some(f) = Fence::new(self.next_fence.fetch_add(1, Ordering::Relaxed)) {
                return f;
            }
        }
    }

    /// Moves chunk `c` from its request to the close's fence; false if `c`
    /// was not in use or already fenced.
    pub(crate) fn fence(&self, c: u32, cf: &CloseFence) -> bool {
        let fence = cf.fence;
        let ok = {
            // The tag is set under the lock that `lift` scans under: a
            // chunk is never tagged by a fence that is not registered.
            let mut fences = self.fences.lock();
            if !fences.iter().any(|e| e.fence == fence) {
                let now = now_ns();
                let e = FenceEntry {
                    fence,
                    since_ns: now,
                    deadline_ns: cf.deadline_ns,
                    span_ns: (cf.deadline_ns - now).max(1_000_000_000),
                    answer: cf.awaited,
                };
                // Room for one fence per chunk was reserved, and a fence
                // is registered only with a chunk: this never allocates.
                if fences.push(e, GFP_ATOMIC).is_err() {
                    return false;
                }
                self.fences_gen.fetch_add(1, Ordering::Release);
            }
            self.chunks.fence(c as usize, fence)
        };
        self.wake();
        ok
    }

    /// Lifts `fence`: its chunks are free again. Returns how many, and how
    /// long ago (ms) the fence took its first chunk.
    pub(crate) fn lift(&self, fence: Fence) -> (usize, i64) {
        let (n, since) = {
            let mut fences = self.fences.lock();
            let since = fences
                .iter()
                .find(|e| e.fence == fence)
                .map_or(now_ns(), |e| e.since_ns);
            fences.retain(|e| e.fence != fence);
            self.fences_gen.fetch_add(1, Ordering::Release);
            (self.chunks.lift(fence), since)
        };
        self.wake();
        (n, (now_ns() - since) / 1_000_000)
    }

    /// The path the server knows as `via` went down: the answers of
    /// fences it carried will not come; their chunk fences lift at their
    /// deadline. Any context.
    pub(crate) fn drop_answers_via(&self, via: u16) {
        for e in self.fences.lock().iter_mut() {
            if e.answer.is_some_and(|a| a.via == via) {
                e.answer = None;
            }
        }
    }

    /// The server answered fence `seq` of its path `path_id`: lifts the
    /// fences that waited for it; returns how many chunks are free again.
    /// Any context.
    pub(crate) fn answered(&self, path_id: u16, seq: u16) -> usize {
        let f = self
            .fences
            .lock()
            .iter()
            .find(|e| {
                e.answer
                    .is_some_and(|a| a.path_id == path_id && a.seq == seq)
            })
            .map(|e| e.fence);
        f.map_or(0, |f| self.lift(f).0)
    }

    /// Lifts the fences whose deadline has passed; returns whether any.
    /// A fence that waits for an answer while a server that answers is
    /// reachable has its deadline postponed instead. Any context.
    pub(crate) fn lift_expired(&self) -> bool {
        let now = now_ns();
        let mut lifted = false;
        loop {
            let expired = {
                let mut fences = self.fences.lock();
                let answering = self.answering.load(Ordering::Acquire) > 0;
                let mut found = None;
                for e in fences.iter_mut().filter(|e| e.deadline_ns <= now) {
                    if e.answer.is_some() && answering && now - e.since_ns < HOLD_MAX * e.span_ns {
                        e.deadline_ns = now + e.span_ns;
                        pr_warn!(
                            "<{}>: the server has not answered the fence of a path it is closing after {} ms; its chunks stay fenced\n",
                            self.sess,
                            (now - e.since_ns) / 1_000_000
                        );
                    } else {
                        found = Some(e.fence);
                        break;
                    }
                }
                found
            };
            let Some(f) = expired else {
                return lifted;
            };
            let (n, ms) = self.lift(f);
            if n > 0 {
                pr_info!(
                    "<{}>: {} fenced chunks free again after {} ms: the server must have closed their path\n",
                    self.sess,
                    n,
                    ms
                );
            }
            lifted = true;
        }
    }

    /// Milliseconds until the next fence's deadline, if a fence holds
    /// chunks.
    fn next_deadline_ms(&self) -> Option<u32> {
        let now = now_ns();
        let next = self.fences.lock().iter().map(|e| e.deadline_ns).min()?;
        Some(((next - now).max(0) / 1_000_000).min(i64::from(u32::MAX)) as u32 + 1)
    }

    /// Sleeps until `get` gives a value: woken when chunks or permits are
    /// freed or fences change, and lifting each fence whose deadline passed
    /// (nothing else lifts a fence the server never confirmed). Process
    /// context.
    pub(crate) fn wait_for<T>(&self, mut get: impl FnMut() -> Option<T>) -> T {
        loop {
            if let Some(v) = get() {
                return v;
            }
            if self.lift_expired() {
                continue;
            }
            let gen = self.fences_gen.load(Ordering::Acquire);
            let mut cond = || match get() {
                Some(v) => Some(Woken::Got(v)),
                None => {
                    (self.fences_gen.load(Ordering::Acquire) != gen).then_some(Woken::FencesChanged)
                }
            };
            // Every fenced chunk's fence is registered (`fence` tags under
            // the lock), so with no deadline no chunk is fenced: what is
            // waited for comes back with a permit or a chunk, which wake.
            let woken = match self.next_deadline_ms() {
                Some(ms) => self.wait.wait_event_timeout(ms, &mut cond),
                None => Some(self.wait.wait_event(&mut cond)),
            };
            if let Some(Woken::Got(v)) = woken {
                return v;
            }
        }
    }
}
