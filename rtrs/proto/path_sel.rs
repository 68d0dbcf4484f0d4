// SPDX-License-Identifier: GPL-2.0-or-later

//! Multipath policies: which path of a session an IO tries first, and
//! which next when that fails (`path_it_init()`, `get_next_path_rr()`,
//! `get_next_path_min_inflight()`, `get_next_path_min_latency()` and the
//! loops of `rtrs_clt_request()` and `rtrs_clt_failover_req()`), plus the
//! sysfs `mpath_policy` file.
//!
//! The functions work on a slice of [`PathSnapshot`] in the order of the
//! session's path list; indices into that slice stand for the C path
//! pointers.
//!
//! Where C keeps per-CPU state we choose these semantics:
//!
//! - Round-robin: C keeps one "last used path" pointer per CPU. Here it
//!   is a [`RrCursor`] the caller owns, one per CPU to match C (or one per
//!   session for a global round robin); the caller passes the current
//!   CPU's cursor and keeps it from migrating for the iteration, as C does
//!   under `rcu_read_lock()` with preemption off.
//! - Min-inflight and min-latency: C marks tried paths through per-CPU
//!   list entries linked into the iterator's skip list. Here the skip set
//!   is a bitmap private to the [`PathIter`], which is what C means (a
//!   path is tried at most once per IO) without the failure mode of a
//!   migrating task.

use core::fmt;

use super::error::Error;
use super::msg::{MAX_PATHS_NUM, NAME_MAX};
use klib::kstr::{c_str, kstrtoint};

/// A multipath policy (`enum rtrs_mp_policy`); the numbers are the ones
/// sysfs shows and accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum MpPolicy {
    /// `MP_POLICY_RR` (0): the next path after the one this CPU used last.
    RoundRobin = 0,
    /// `MP_POLICY_MIN_INFLIGHT` (1): the path with fewest IOs in flight;
    /// the policy of a new session (`alloc_clt()`).
    #[default]
    MinInflight = 1,
    /// `MP_POLICY_MIN_LATENCY` (2): the path with the lowest heartbeat
    /// latency.
    MinLatency = 2,
}

impl MpPolicy {
    /// The policy with number `id`, if any.
    pub const fn from_id(id: i32) -> Option<Self> {
        match id {
            0 => Some(MpPolicy::RoundRobin),
            1 => Some(MpPolicy::MinInflight),
            2 => Some(MpPolicy::MinLatency),
            _ => None,
        }
    }

    /// The policy number.
    pub const fn id(self) -> i32 {
        self as i32
    }

    /// The long name: `round-robin`, `min-inflight` or `min-latency`.
    pub const fn name(self) -> &'static str {
        match self {
            MpPolicy::RoundRobin => "round-robin",
            MpPolicy::MinInflight => "min-inflight",
            MpPolicy::MinLatency => "min-latency",
        }
    }

    /// The short name: `RR`, `MI` or `ML`.
    pub const fn abbrev(self) -> &'static str {
        match self {
            MpPolicy::RoundRobin => "RR",
            MpPolicy::MinInflight => "MI",
            MpPolicy::MinLatency => "ML",
        }
    }

    /// Parses a write to sysfs `mpath_policy` (`mpath_policy_store()`):
    /// a decimal `0`, `1` or `2` (as `kstrtoint()` reads it), or, case
    /// insensitive, a string starting with `round-robin`, `min-inflight`
    /// or `min-latency`, or exactly `rr`, `mi` or `ml` (one trailing
    /// newline allowed). [`Error::Inval`] for anything else.
    pub fn parse(buf: &[u8]) -> Result<Self, Error> {
        if let Some(p) = kstrtoint(buf, 10).ok().and_then(Self::from_id) {
            return Ok(p);
        }
        // strnlen(buf, NAME_MAX) minus one trailing newline.
        let cs = c_str(buf);
        let s = cs.get(..NAME_MAX).unwrap_or(cs);
        let s = s.strip_suffix(b"\n").unwrap_or(s);
        let starts = |prefix: &str| {
            cs.get(..prefix.len())
                .is_some_and(|b| b.eq_ignore_ascii_case(prefix.as_bytes()))
        };
        let is = |short: &str| s.eq_ignore_ascii_case(short.as_bytes());
        if starts("round-robin") || is("rr") {
            Ok(MpPolicy::RoundRobin)
        } else if starts("min-inflight") || is("mi") {
            Ok(MpPolicy::MinInflight)
        } else if starts("min-latency") || is("ml") {
            Ok(MpPolicy::MinLatency)
        } else {
            Err(Error::Inval)
        }
    }
}

impl fmt::Display for MpPolicy {
    /// What sysfs `mpath_policy` shows (`mpath_policy_show()`), without
    /// the newline: `round-robin (RR: 0)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}: {})", self.name(), self.abbrev(), self.id())
    }
}

/// What the policies look at in a path, read once per IO.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathSnapshot {
    /// The path is in state `CONNECTED`.
    pub connected: bool,
    /// IOs in flight on the path (`stats->inflight`).
    pub inflight: i32,
    /// Last heartbeat latency in ns (`s.hb_cur_latency`).
    pub latency_ns: i64,
}

/// The per-CPU round-robin position (`clt->pcpu_path`): the index of the
/// path this CPU used last, or none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RrCursor(Option<usize>);

impl RrCursor {
    /// A cursor that has used no path yet.
    pub const fn new() -> Self {
        RrCursor(None)
    }

    /// A cursor whose last used path is `last` (how a caller that keeps the
    /// cursor elsewhere, per CPU, hands it back).
    pub const fn at(last: Option<usize>) -> Self {
        Self(last)
    }

    /// The index of the last used path.
    pub const fn get(&self) -> Option<usize> {
        self.0
    }

    /// `rtrs_clt_get_next_path_or_null()`: the path after the cursor in
    /// a list of `len` paths, wrapping; the first one if the cursor is
    /// unset or stale. Moves the cursor there.
    fn advance(&mut self, len: usize) -> Option<usize> {
        let next = match self.0 {
            _ if len == 0 => None,
            Some(i) if i.saturating_add(1) < len => Some(i + 1),
            _ => Some(0),
        };
        self.0 = next;
        next
    }

    /// Path `removed` left the list, which now has `new_len` paths; keeps
    /// the cursor on the same path, and if it was the removed one moves it
    /// to the path that followed it, or to the first path if it was the
    /// last, as `rtrs_clt_remove_path_from_arr()` does. (So the next IO
    /// skips that following path, as in C.)
    pub fn path_removed(&mut self, removed: usize, new_len: usize) {
        self.0 = match self.0 {
            Some(i) if i == removed && removed < new_len => Some(removed),
            Some(i) if i == removed && new_len > 0 => Some(0),
            Some(i) if i == removed => None,
            Some(i) if i > removed => Some(i - 1),
            other => other,
        };
    }
}

/// Where a [`PathIter`] reads the paths: how many, and each one's state
/// when a policy looks at it (C reads the path itself, under RCU, at each
/// pick). A slice of snapshots is one; the kernel reads its RCU list.
pub trait PathSource {
    /// Number of paths.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Path `i` (`i < len()`) as the policies see it now.
    fn snapshot(&self, i: usize) -> PathSnapshot;
}

impl PathSource for [PathSnapshot] {
    fn len(&self) -> usize {
        <[PathSnapshot]>::len(self)
    }

    fn snapshot(&self, i: usize) -> PathSnapshot {
        self[i]
    }
}

impl<const N: usize> PathSource for [PathSnapshot; N] {
    fn len(&self) -> usize {
        N
    }

    fn snapshot(&self, i: usize) -> PathSnapshot {
        self[i]
    }
}

/// The paths an IO tries, in order: the iteration of
/// `rtrs_clt_request()` and `rtrs_clt_failover_req()`.
///
/// Each `next()` yields the index of a connected path to try; the caller
/// stops when the IO is posted and calls `next()` again when posting
/// fails. As in C, at most `paths.len()` picks are made; for
/// round-robin a pick that lands on a path that is not connected uses one
/// of them up, and a round-robin iteration that runs out still advances
/// the cursor once more (C calls `next_path()` before testing the count).
pub struct PathIter<'a, S: PathSource + ?Sized> {
    paths: &'a S,
    /// How many of `paths` are looked at: at most [`MAX_PATHS_NUM`].
    len: usize,
    policy: MpPolicy,
    cursor: &'a mut RrCursor,
    picks: usize,
    skip: u128,
    done: bool,
}

impl<'a, S: PathSource + ?Sized> PathIter<'a, S> {
    /// Iterates over `paths` (at most [`MAX_PATHS_NUM`] are looked at)
    /// with `policy`; `cursor` is the current CPU's round-robin position,
    /// used and moved only by [`MpPolicy::RoundRobin`].
    pub fn new(paths: &'a S, policy: MpPolicy, cursor: &'a mut RrCursor) -> Self {
        PathIter {
            len: paths.len().min(MAX_PATHS_NUM),
            paths,
            policy,
            cursor,
            picks: 0,
            skip: 0,
            done: false,
        }
    }

    fn get(&self, i: usize) -> Option<PathSnapshot> {
        (i < self.len).then(|| self.paths.snapshot(i))
    }

    /// The not yet tried, connected path with the smallest key; the first
    /// in list order on ties. Marks it tried.
    fn pick_min<K: Ord>(&mut self, key: impl Fn(&PathSnapshot) -> K) -> Option<(usize, K)> {
        let mut best: Option<(usize, K)> = None;
        for i in 0..self.len {
            let p = self.paths.snapshot(i);
            if !p.connected || self.skip & (1u128 << i) != 0 {
                continue;
            }
            let k = key(&p);
            let better = match &best {
                Some((_, b)) => k < *b,
                None => true,
            };
            if better {
                best = Some((i, k));
            }
        }
        let (i, _) = best.as_ref()?;
        self.skip |= 1u128 << *i;
        best
    }

    /// One `it->next_path()` call.
    fn next_path(&mut self) -> Option<usize> {
        match self.policy {
            MpPolicy::RoundRobin => self.cursor.advance(self.len),
            // C starts from INT_MAX / KTIME_MAX and keeps strictly smaller
            // values, so a path at exactly the maximum is never picked.
            MpPolicy::MinInflight => self
                .pick_min(|p| p.inflight)
                .filter(|(_, k)| *k < i32::MAX)
                .map(|(i, _)| i),
            MpPolicy::MinLatency => self
                .pick_min(|p| p.latency_ns)
                .filter(|(_, k)| *k < i64::MAX)
                .map(|(i, _)| i),
        }
    }
}

impl<S: PathSource + ?Sized> Iterator for PathIter<'_, S> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while !self.done {
            let Some(i) = self.next_path() else { break };
            if self.picks >= self.len {
                break;
            }
            self.picks += 1;
            if self.get(i).is_some_and(|p| p.connected) {
                return Some(i);
            }
        }
        self.done = true;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Buf {
        data: [u8; 64],
        len: usize,
    }

    impl fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let end = self.len + s.len();
            self.data
                .get_mut(self.len..end)
                .ok_or(fmt::Error)?
                .copy_from_slice(s.as_bytes());
            self.len = end;
            Ok(())
        }
    }

    fn shown(p: MpPolicy) -> Buf {
        let mut b = Buf {
            data: [0; 64],
            len: 0,
        };
        fmt::write(&mut b, format_args!("{p}\n")).unwrap();
        b
    }

    #[test]
    fn sysfs_show() {
        assert_eq!(
            &shown(MpPolicy::RoundRobin).data[..20],
            b"round-robin (RR: 0)\n"
        );
        let b = shown(MpPolicy::MinInflight);
        assert_eq!(&b.data[..b.len], b"min-inflight (MI: 1)\n");
        let b = shown(MpPolicy::MinLatency);
        assert_eq!(&b.data[..b.len], b"min-latency (ML: 2)\n");
        assert_eq!(MpPolicy::default(), MpPolicy::MinInflight);
    }

    #[test]
    fn sysfs_store_accepts_what_c_accepts() {
        use MpPolicy::*;
        let ok: &[(&[u8], MpPolicy)] = &[
            (b"0", RoundRobin),
            (b"1\n", MinInflight),
            (b"2", MinLatency),
            (b"+2", MinLatency),
            (b"-0", RoundRobin),
            (b"002\n", MinLatency),
            (b"round-robin", RoundRobin),
            (b"round-robin\n", RoundRobin),
            (b"Round-Robin", RoundRobin),
            (b"round-robinXYZ", RoundRobin),
            (b"rr", RoundRobin),
            (b"RR\n", RoundRobin),
            (b"min-inflight\n", MinInflight),
            (b"MIN-INFLIGHT", MinInflight),
            (b"mi", MinInflight),
            (b"mi\n", MinInflight),
            (b"min-latency", MinLatency),
            (b"min-latency-and-more", MinLatency),
            (b"ml\n", MinLatency),
            (b"Ml", MinLatency),
        ];
        for (input, want) in ok {
            assert_eq!(MpPolicy::parse(input), Ok(*want), "{input:?}");
        }
        let bad: &[&[u8]] = &[
            b"",
            b"\n",
            b"3",
            b"-1",
            b"0x1",
            b" 1",
            b"round",
            b"round robin",
            b"rr\n\n",
            b"rrr",
            b"r",
            b"min",
            b"min-",
            b"mi ",
            b"m",
            b"latency",
            b"\0rr",
        ];
        for input in bad {
            assert_eq!(MpPolicy::parse(input), Err(Error::Inval), "{input:?}");
        }
    }

    #[test]
    fn ids_and_names() {
        for id in 0..3 {
            let p = MpPolicy::from_id(id).unwrap();
            assert_eq!(p.id(), id);
            assert_eq!(MpPolicy::parse(p.name().as_bytes()), Ok(p));
            assert_eq!(MpPolicy::parse(p.abbrev().as_bytes()), Ok(p));
        }
        assert_eq!(MpPolicy::from_id(3), None);
        assert_eq!(MpPolicy::from_id(-1), None);
    }

    const fn up(inflight: i32, latency_ns: i64) -> PathSnapshot {
        PathSnapshot {
            connected: true,
            inflight,
            latency_ns,
        }
    }

    const DOWN: PathSnapshot = PathSnapshot {
        connected: false,
        inflight: 0,
        latency_ns: 0,
    };

    /// The paths an IO would try if every attempt failed.
    fn tries(paths: &[PathSnapshot], policy: MpPolicy, cursor: &mut RrCursor) -> [usize; 8] {
        let mut out = [usize::MAX; 8];
        for (slot, i) in out.iter_mut().zip(PathIter::new(paths, policy, cursor)) {
            *slot = i;
        }
        out
    }

    const NONE: usize = usize::MAX;

    #[test]
    fn round_robin_rotates_per_cursor() {
        let paths = [up(0, 0), up(0, 0), up(0, 0)];
        let mut cpu0 = RrCursor::new();
        let mut cpu1 = RrCursor::new();
        // First IO on a CPU starts at the first path.
        let first = PathIter::new(&paths, MpPolicy::RoundRobin, &mut cpu0).next();
        assert_eq!(first, Some(0));
        assert_eq!(cpu0.get(), Some(0));
        let next = PathIter::new(&paths, MpPolicy::RoundRobin, &mut cpu0).next();
        assert_eq!(next, Some(1));
        let next = PathIter::new(&paths, MpPolicy::RoundRobin, &mut cpu0).next();
        assert_eq!(next, Some(2));
        let next = PathIter::new(&paths, MpPolicy::RoundRobin, &mut cpu0).next();
        assert_eq!(next, Some(0));
        // Another CPU has its own position.
        let other = PathIter::new(&paths, MpPolicy::RoundRobin, &mut cpu1).next();
        assert_eq!(other, Some(0));
    }

    #[test]
    fn round_robin_failover_order_and_cursor() {
        let paths = [up(0, 0), DOWN, up(0, 0), up(0, 0)];
        let mut cur = RrCursor(Some(1));
        // Picks 2, 3, 0, 1(down, skipped), then one more advance to 2.
        assert_eq!(
            tries(&paths, MpPolicy::RoundRobin, &mut cur),
            [2, 3, 0, NONE, NONE, NONE, NONE, NONE]
        );
        assert_eq!(cur.get(), Some(2));
        // All down: nothing, but the cursor moved n + 1 times.
        let all_down = [DOWN, DOWN];
        let mut cur = RrCursor::new();
        assert_eq!(tries(&all_down, MpPolicy::RoundRobin, &mut cur)[0], NONE);
        assert_eq!(cur.get(), Some(0));
        // No paths at all.
        let mut cur = RrCursor(Some(3));
        assert_eq!(tries(&[], MpPolicy::RoundRobin, &mut cur)[0], NONE);
        assert_eq!(cur.get(), None);
        // A stale cursor restarts at the first path.
        let mut cur = RrCursor(Some(9));
        assert_eq!(
            PathIter::new(&paths, MpPolicy::RoundRobin, &mut cur).next(),
            Some(0)
        );
    }

    #[test]
    fn round_robin_iterator_stops_for_good() {
        let paths = [up(0, 0)];
        let mut cur = RrCursor::new();
        {
            let mut it = PathIter::new(&paths, MpPolicy::RoundRobin, &mut cur);
            assert_eq!(it.next(), Some(0));
            assert_eq!(it.next(), None);
            assert_eq!(it.next(), None);
        }
        // One pick, plus the extra advance C makes before giving up.
        assert_eq!(cur.get(), Some(0));
    }

    #[test]
    fn min_inflight_orders_by_inflight() {
        let paths = [up(5, 0), up(2, 0), DOWN, up(2, 0), up(9, 0)];
        let mut cur = RrCursor::new();
        // Ties go to the first in list order; down paths never.
        assert_eq!(
            tries(&paths, MpPolicy::MinInflight, &mut cur),
            [1, 3, 0, 4, NONE, NONE, NONE, NONE]
        );
        assert_eq!(cur.get(), None, "cursor is round-robin only");
        // A path at INT_MAX is never chosen (strict < INT_MAX in C).
        let paths = [up(i32::MAX, 0), up(3, 0)];
        assert_eq!(
            tries(&paths, MpPolicy::MinInflight, &mut cur),
            [1, NONE, NONE, NONE, NONE, NONE, NONE, NONE]
        );
        let paths = [up(-1, 0), up(0, 0)];
        assert_eq!(
            tries(&paths, MpPolicy::MinInflight, &mut cur),
            [0, 1, NONE, NONE, NONE, NONE, NONE, NONE]
        );
    }

    #[test]
    fn min_latency_orders_by_latency() {
        let paths = [up(0, 300), up(0, 100), up(0, 200), DOWN];
        let mut cur = RrCursor::new();
        assert_eq!(
            tries(&paths, MpPolicy::MinLatency, &mut cur),
            [1, 2, 0, NONE, NONE, NONE, NONE, NONE]
        );
        let paths = [up(0, i64::MAX), up(0, 7), up(0, 7)];
        assert_eq!(
            tries(&paths, MpPolicy::MinLatency, &mut cur),
            [1, 2, NONE, NONE, NONE, NONE, NONE, NONE]
        );
        // Fresh paths have latency 0 and win.
        let paths = [up(0, 50), up(0, 0)];
        assert_eq!(
            PathIter::new(&paths, MpPolicy::MinLatency, &mut cur).next(),
            Some(1)
        );
    }

    #[test]
    fn at_most_max_paths() {
        let paths = [up(0, 0); MAX_PATHS_NUM + 5];
        let mut cur = RrCursor::new();
        assert_eq!(
            PathIter::new(&paths, MpPolicy::MinInflight, &mut cur).count(),
            MAX_PATHS_NUM
        );
        assert_eq!(
            PathIter::new(&paths, MpPolicy::RoundRobin, &mut cur).count(),
            MAX_PATHS_NUM
        );
        assert_eq!(
            PathIter::new(&paths, MpPolicy::MinLatency, &mut cur).last(),
            Some(MAX_PATHS_NUM - 1)
        );
    }

    #[test]
    fn cursor_follows_path_removal() {
        // Cursor on the removed path moves to its successor...
        let mut c = RrCursor(Some(1));
        c.path_removed(1, 3);
        assert_eq!(c.get(), Some(1));
        // ...or to the first path when the removed one was last...
        let mut c = RrCursor(Some(3));
        c.path_removed(3, 3);
        assert_eq!(c.get(), Some(0));
        // ...or to none when no path is left.
        let mut c = RrCursor(Some(0));
        c.path_removed(0, 0);
        assert_eq!(c.get(), None);
        // Other positions keep pointing at the same path.
        let mut c = RrCursor(Some(2));
        c.path_removed(0, 3);
        assert_eq!(c.get(), Some(1));
        let mut c = RrCursor(Some(0));
        c.path_removed(2, 3);
        assert_eq!(c.get(), Some(0));
        let mut c = RrCursor::new();
        c.path_removed(0, 2);
        assert_eq!(c.get(), None);
    }
}
