// SPDX-License-Identifier: GPL-2.0-or-later
//! The multipath iterator (`PathIter`, `RrCursor`): over any path list,
//! policy and cursor it ends, yields only connected paths of the first
//! `MAX_PATHS_NUM`, at most one pick per path, each min policy in its
//! order; removing a path keeps the cursor in range.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rtrs_proto::msg::MAX_PATHS_NUM;
use rtrs_proto::path_sel::{MpPolicy, PathIter, PathSnapshot, RrCursor};

#[derive(Arbitrary, Debug)]
struct Path {
    connected: bool,
    inflight: i32,
    latency_ns: i64,
}

#[derive(Arbitrary, Debug)]
struct Input {
    paths: Vec<Path>,
    policy: u8,
    cursor: Option<usize>,
    removed: usize,
    rounds: u8,
}

fuzz_target!(|x: Input| {
    let paths: Vec<PathSnapshot> = x
        .paths
        .iter()
        .map(|p| PathSnapshot {
            connected: p.connected,
            inflight: p.inflight,
            latency_ns: p.latency_ns,
        })
        .collect();
    let policy = MpPolicy::from_id(i32::from(x.policy % 3)).unwrap();
    let usable = paths.len().min(MAX_PATHS_NUM);
    let mut cursor = RrCursor::at(x.cursor);
    for _ in 0..=x.rounds % 4 {
        let picks: Vec<usize> = PathIter::new(&paths[..], policy, &mut cursor).collect();
        assert!(picks.len() <= usable);
        for &i in &picks {
            assert!(i < usable && paths[i].connected, "picked {i} of {usable}");
        }
        match policy {
            MpPolicy::RoundRobin => {
                if usable > 0 {
                    assert!(cursor.get().is_some_and(|c| c < usable));
                }
            }
            MpPolicy::MinInflight | MpPolicy::MinLatency => {
                let key = |i: usize| match policy {
                    MpPolicy::MinInflight => i64::from(paths[i].inflight),
                    _ => paths[i].latency_ns,
                };
                let max = match policy {
                    MpPolicy::MinInflight => i64::from(i32::MAX),
                    _ => i64::MAX,
                };
                let mut sorted = picks.clone();
                sorted.sort_unstable();
                sorted.dedup();
                assert_eq!(sorted.len(), picks.len(), "a path picked twice");
                assert!(picks.windows(2).all(|w| key(w[0]) <= key(w[1])));
                // Every connected path below the maximum is picked, in order.
                let want = (0..usable)
                    .filter(|&i| paths[i].connected && key(i) < max)
                    .count();
                assert_eq!(picks.len(), want);
            }
        }
    }
    let new_len = usable.saturating_sub(1);
    let removed = if usable == 0 {
        x.removed
    } else {
        x.removed % usable
    };
    let before = cursor.get();
    cursor.path_removed(removed, new_len);
    if let (Some(_), Some(c)) = (before, cursor.get()) {
        if before.unwrap() < usable {
            assert!(c < new_len.max(1));
        }
    }
});
