// SPDX-License-Identifier: GPL-2.0-or-later

//! A client session's server chunks: which are free, which a request
//! holds, and which are fenced off because a write of a closed path may
//! still land in them.
//!
//! The server's chunks belong to the session: a request writes its data
//! and message to the chunk it holds, on whichever path carries it. When a
//! path closes without the server confirming it, the writes that path sent
//! may still be on their way and land later. A request failed over from
//! such a path therefore moves to a free chunk, and the chunk it leaves is
//! *fenced*: held by the path's close instead of by a request, until the
//! server confirms the close or must have closed the path by itself. Then
//! the fence is lifted and the chunks are free again.
//!
//! [`Bitmap`] is a lock-free set of bits over words the caller owns (so
//! that the same code runs in the kernel and on the host); the permits use
//! one. [`Chunks`] is a bitmap of the chunks in use, fenced ones included,
//! and a fence tag per chunk.
//!
//! # Invariant
//!
//! A chunk is handed out by [`Chunks::take`] only when no request holds it
//! and no fence holds it: every write to it that was sent has either
//! completed, or its path's close was confirmed (or timed out) after the
//! write was sent.

use core::ops::Deref;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

const BITS: usize = usize::BITS as usize;

/// A fence: the close of one path, by a number the caller gives out, never
/// 0 (which marks a chunk no fence holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fence(core::num::NonZeroU32);

impl Fence {
    /// Fence number `n`, if not 0.
    pub const fn new(n: u32) -> Option<Self> {
        match core::num::NonZeroU32::new(n) {
            Some(n) => Some(Fence(n)),
            None => None,
        }
    }

    /// Its number.
    pub const fn get(self) -> u32 {
        self.0.get()
    }
}

/// Chunks of a session of `queue_depth` chunks that no permit holds, so
/// that an IO failing over always finds one: one, if there are two or
/// more. Without it, IO that piles up on a path that went silent (under
/// round-robin it all does) could hold every chunk, and its failover would
/// wait for the path's fence.
pub const fn spare_chunks(queue_depth: u32) -> u32 {
    if queue_depth >= 2 {
        1
    } else {
        0
    }
}

/// The permits of a session of `queue_depth` chunks: the user's queue
/// depth (`rtrs_clt_query()`).
pub const fn permits_for(queue_depth: u32) -> u32 {
    queue_depth - spare_chunks(queue_depth)
}

/// Words of a bitmap of `n` bits.
pub const fn words_for(n: usize) -> usize {
    n.div_ceil(BITS)
}

/// A set of `n` bits over atomic words the caller owns ([`words_for`]
/// of them, zero at first): taking and giving back are lock-free (C's
/// `permits_map` with `find_first_zero_bit()` and `test_and_set_bit()`).
pub struct Bitmap<M> {
    map: M,
    n: usize,
}

impl<M: Deref<Target = [AtomicUsize]>> Bitmap<M> {
    /// `n` bits over `map`; `None` if `map` is too small.
    pub fn new(map: M, n: usize) -> Option<Self> {
        (map.len() >= words_for(n)).then_some(Self { map, n })
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Takes bit `i` if it is free.
    pub fn take_exact(&self, i: usize) -> bool {
        if i >= self.n {
            return false;
        }
        let bit = 1usize << (i % BITS);
        self.map[i / BITS].fetch_or(bit, Ordering::Acquire) & bit == 0
    }

    /// Takes the lowest free bit.
    pub fn take_any(&self) -> Option<usize> {
        for (w, word) in self.map.iter().enumerate() {
            let mut v = word.load(Ordering::Relaxed);
            loop {
                let free = !v;
                if free == 0 {
                    break;
                }
                let bit = free.trailing_zeros() as usize;
                let i = w * BITS + bit;
                if i >= self.n {
                    break;
                }
                match word.compare_exchange_weak(
                    v,
                    v | (1 << bit),
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Some(i),
                    Err(cur) => v = cur,
                }
            }
        }
        None
    }

    /// Takes bit `prefer` if it is free, else the lowest free one.
    pub fn take(&self, prefer: usize) -> Option<usize> {
        if self.take_exact(prefer) {
            return Some(prefer);
        }
        self.take_any()
    }

    /// Gives bit `i` back; false if it was free.
    pub fn put(&self, i: usize) -> bool {
        if i >= self.n {
            return false;
        }
        let bit = 1usize << (i % BITS);
        self.map[i / BITS].fetch_and(!bit, Ordering::Release) & bit != 0
    }

    /// Whether bit `i` is taken.
    pub fn is_taken(&self, i: usize) -> bool {
        i < self.n && self.map[i / BITS].load(Ordering::Acquire) & (1 << (i % BITS)) != 0
    }

    /// Whether no bit is taken.
    pub fn all_free(&self) -> bool {
        self.map.iter().all(|w| w.load(Ordering::Acquire) == 0)
    }
}

/// The chunks of a session: a [`Bitmap`] of those in use, fenced ones
/// included, and a fence tag per chunk over `fence`, which the caller owns
/// (one per chunk, zero at first).
///
/// Taking and giving back are the bitmap's; fencing moves a chunk from its
/// request to a fence without freeing it. Lifting a fence scans all tags:
/// it happens once per closed path.
pub struct Chunks<M, F> {
    map: Bitmap<M>,
    fence: F,
}

impl<M, F> Chunks<M, F>
where
    M: Deref<Target = [AtomicUsize]>,
    F: Deref<Target = [AtomicU32]>,
{
    /// `n` chunks over `map` and `fence`; `None` if the storage is too
    /// small for `n`.
    pub fn new(map: M, fence: F, n: usize) -> Option<Self> {
        if fence.len() < n {
            return None;
        }
        Some(Self {
            map: Bitmap::new(map, n)?,
            fence,
        })
    }

    /// Number of chunks.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Takes a free chunk: `prefer` if it is free (a permit keeps its own
    /// chunk while nothing is fenced), else the lowest free one.
    pub fn take(&self, prefer: usize) -> Option<usize> {
        self.map.take(prefer)
    }

    /// Takes the lowest free chunk.
    pub fn take_any(&self) -> Option<usize> {
        self.map.take_any()
    }

    /// Gives chunk `i`, held by a request, back; false if it was free.
    pub fn put(&self, i: usize) -> bool {
        self.map.put(i)
    }

    /// Whether chunk `i` is in use (held by a request or a fence).
    pub fn in_use(&self, i: usize) -> bool {
        self.map.is_taken(i)
    }

    /// Whether no chunk is in use.
    pub fn all_free(&self) -> bool {
        self.map.all_free()
    }

    /// Moves chunk `i` from the request that holds it to `fence`: it stays
    /// in use until [`Chunks::lift`] of that fence. False (and nothing
    /// changes) if `i` is not in use or already fenced.
    pub fn fence(&self, i: usize, fence: Fence) -> bool {
        if !self.in_use(i) {
            return false;
        }
        self.fence[i]
            .compare_exchange(0, fence.get(), Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The fence holding chunk `i`, if any.
    pub fn fenced_by(&self, i: usize) -> Option<Fence> {
        Fence::new(self.fence.get(i)?.load(Ordering::Acquire))
    }

    /// Lifts `fence`: the chunks it holds are free again. Returns how many.
    pub fn lift(&self, fence: Fence) -> usize {
        let mut n = 0;
        for (i, tag) in self.fence[..self.len()].iter().enumerate() {
            if tag
                .compare_exchange(fence.get(), 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                self.put(i);
                n += 1;
            }
        }
        n
    }

    /// How many chunks fences hold.
    pub fn fenced(&self) -> usize {
        self.fence[..self.len()]
            .iter()
            .filter(|t| t.load(Ordering::Acquire) != 0)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    type Owned = Chunks<Vec<AtomicUsize>, Vec<AtomicU32>>;

    fn chunks(n: usize) -> Owned {
        let map = (0..words_for(n)).map(|_| AtomicUsize::new(0)).collect();
        let fence = (0..n).map(|_| AtomicU32::new(0)).collect();
        Chunks::new(map, fence, n).unwrap()
    }

    fn f(n: u32) -> Fence {
        Fence::new(n).unwrap()
    }

    #[test]
    fn a_spare_chunk_when_there_are_two() {
        assert_eq!(permits_for(0), 0);
        assert_eq!(permits_for(1), 1);
        assert_eq!(permits_for(2), 1);
        assert_eq!(permits_for(512), 511);
        assert_eq!(permits_for(65535), 65534);
    }

    #[test]
    fn storage_must_fit() {
        let words: Vec<AtomicUsize> = (0..1).map(|_| AtomicUsize::new(0)).collect();
        assert!(Bitmap::new(words, 65).is_none());
        let map: Vec<AtomicUsize> = Vec::new();
        let fence: Vec<AtomicU32> = (0..3).map(|_| AtomicU32::new(0)).collect();
        assert!(Chunks::new(map, fence, 3).is_none());
        assert!(Fence::new(0).is_none());
    }

    #[test]
    fn take_prefers_and_falls_back() {
        let c = chunks(130);
        assert_eq!(c.take(5), Some(5));
        assert!(!c.map.take_exact(5));
        assert_eq!(c.take(5), Some(0));
        assert_eq!(c.take(200), Some(1));
        for _ in 3..130 {
            assert!(c.take(0).is_some());
        }
        assert_eq!(c.take(129), None);
        assert!(c.put(64));
        assert!(!c.put(64));
        assert_eq!(c.take(0), Some(64));
        assert!(!c.put(130));
    }

    #[test]
    fn fence_keeps_a_chunk_until_lifted() {
        let c = chunks(4);
        let a = c.take(0).unwrap();
        assert!(!c.fence(1, f(1)), "a free chunk cannot be fenced");
        assert!(c.fence(a, f(1)));
        assert!(!c.fence(a, f(2)), "one fence per chunk");
        assert_eq!(c.fenced_by(a), Some(f(1)));
        // The exchange: the request takes another chunk.
        assert_eq!(c.take(a), Some(1));
        assert_eq!(c.lift(f(2)), 0);
        assert!(c.in_use(a));
        assert_eq!(c.lift(f(1)), 1);
        assert!(!c.in_use(a));
        assert_eq!(c.fenced(), 0);
        assert!(c.put(1));
        assert!(c.all_free());
    }

    /// A model of the client: requests on paths write to their chunks;
    /// paths close unconfirmed and their requests fail over with a chunk
    /// exchange; closes are confirmed or time out in any order. Every
    /// chunk handed out has no write that may still land in it.
    #[test]
    fn no_chunk_reused_while_a_write_may_land() {
        const N: usize = 8;
        const PATHS: usize = 3;
        // A small deterministic generator (xorshift).
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        let c = chunks(N);
        // In flight: (request, chunk, path).
        let mut inflight: Vec<(usize, usize, usize)> = Vec::new();
        // Writes that may still land: (chunk, path, generation of its close).
        let mut may_land: Vec<(usize, usize)> = Vec::new();
        // Per path: open, or closed with a fence not lifted yet.
        let mut closed: [Option<Fence>; PATHS] = [None; PATHS];
        let mut next_fence = 1u32;
        let mut next_req = 0usize;
        let mut exchanges = 0;
        for _ in 0..200_000 {
            match rnd(5) {
                // A new request on an open path.
                0 | 1 => {
                    let p = rnd(PATHS);
                    if closed[p].is_some() {
                        continue;
                    }
                    if let Some(ch) = c.take(next_req % N) {
                        assert!(
                            !may_land.iter().any(|&(mc, _)| mc == ch),
                            "chunk {ch} handed out while a write may land in it"
                        );
                        inflight.push((next_req, ch, p));
                        may_land.push((ch, p));
                        next_req += 1;
                    }
                }
                // A request completes on its path: its write has landed.
                2 => {
                    if inflight.is_empty() {
                        continue;
                    }
                    let k = rnd(inflight.len());
                    let (_, ch, p) = inflight.swap_remove(k);
                    if closed[p].is_some() {
                        // Its path closed: it was failed over already.
                        continue;
                    }
                    let pos = may_land.iter().position(|&x| x == (ch, p)).unwrap();
                    may_land.swap_remove(pos);
                    assert!(c.put(ch));
                }
                // A path closes without confirmation: its requests fail
                // over to another open path, each with a new chunk.
                3 => {
                    let p = rnd(PATHS);
                    if closed[p].is_some() {
                        continue;
                    }
                    let fence = Fence::new(next_fence).unwrap();
                    next_fence += 1;
                    closed[p] = Some(fence);
                    let to = (0..PATHS).find(|&q| closed[q].is_none());
                    let mut moved = Vec::new();
                    for r in inflight.iter_mut().filter(|r| r.2 == p) {
                        assert!(c.fence(r.1, fence));
                        match (to, c.take(r.0 % N)) {
                            (Some(q), Some(ch)) => {
                                assert!(!may_land.iter().any(|&(mc, _)| mc == ch));
                                may_land.push((ch, q));
                                moved.push((r.0, ch, q));
                                exchanges += 1;
                            }
                            // No chunk or no path: the request fails.
                            (_, taken) => {
                                if let Some(ch) = taken {
                                    c.put(ch);
                                }
                            }
                        }
                    }
                    inflight.retain(|r| r.2 != p);
                    inflight.extend(moved);
                }
                // A close is confirmed (or timed out): nothing of that
                // path lands any more; its fence is lifted and it reopens.
                _ => {
                    let p = rnd(PATHS);
                    let Some(fence) = closed[p].take() else {
                        continue;
                    };
                    may_land.retain(|&(_, mp)| mp != p);
                    c.lift(fence);
                }
            }
            // Every chunk in use is held by a request or a fence, and
            // none by both.
            for ch in 0..N {
                let held = inflight.iter().filter(|r| r.1 == ch).count();
                let fenced = c.fenced_by(ch).is_some() as usize;
                assert_eq!(held + fenced, c.in_use(ch) as usize, "chunk {ch}");
            }
        }
        assert!(
            exchanges > 1000,
            "the model exercised exchanges ({exchanges})"
        );
    }
}
