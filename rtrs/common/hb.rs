// SPDX-License-Identifier: GPL-2.0-or-later

//! The heartbeat of a path (C's `hb_*` fields of `struct rtrs_path`,
//! `rtrs_init_hb()`, `rtrs_start_hb()`, `rtrs_stop_hb()` and `hb_work()`):
//! every `HB_INTERVAL_MS` a path that heard nothing from its peer sends a
//! heartbeat on its service connection; after `HB_MISSED_MAX` of them
//! without an answer, the path fails. The same tick fails a path whose
//! peer answers heartbeats but leaves a request unanswered past its
//! deadline ([`HbPath::unanswered`]).

use crate::con::{Con, Side};
use crate::now_ns;
use crate::slots::ConSlots;
use core::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::sync::{new_spinlock_irq, SpinLockIrq};
use rb::workqueue::{DelayedWork, DelayedWorkItem, OwnedQueue};
use rtrs_proto::hb::{HbAction, Heartbeat};
use rtrs_proto::imm::Imm;

/// The work id of a path's heartbeat.
pub const HB_WORK: u64 = 0;

/// A path with a heartbeat: its work item is [`HB_WORK`], whose `run` is
/// [`Hb::run`].
pub trait HbPath: Side + DelayedWorkItem<HB_WORK> {
    /// The queue the heartbeat runs on.
    fn hb_queue(&self) -> &OwnedQueue;

    /// Whether the path is connected: the heartbeat only runs then.
    fn hb_connected(&self) -> bool;

    /// The path's connections (the heartbeat goes on the first).
    fn cons(&self) -> &ConSlots<Self>;

    /// A request the peer has left unanswered past the side's deadline at
    /// `now_ns`, as `(its slot, its age in ms)`: the peer answers
    /// heartbeats but not it, and the tick closes the path. Only a client
    /// has requests to wait for.
    fn unanswered(&self, _now_ns: i64) -> Option<(u32, u64)> {
        None
    }
}

/// A path's heartbeat.
///
/// # Locking
///
/// `beat` (irq-safe, a leaf) holds the counters, changed per tick and per
/// HB_ACK. `seen` is set by every receive completion and `latency_ns` read
/// per IO by the client's min-latency policy: atomics.
#[pin_data]
pub struct Hb {
    #[pin]
    beat: SpinLockIrq<Heartbeat>,
    /// Something arrived since the last tick: the tick forgets its misses
    /// (C's `hb_missed_cnt = 0` in every completion), without taking
    /// `beat`'s lock per completion.
    seen: AtomicBool,
    /// The last heartbeat's round trip (`hb_cur_latency`).
    latency_ns: AtomicI64,
}

impl Hb {
    /// A stopped heartbeat (`rtrs_init_hb()`).
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Hb {
            beat <- new_spinlock_irq!(Heartbeat::default(), "rtrs_hb"),
            seen: AtomicBool::new(false),
            latency_ns: AtomicI64::new(0),
        })
    }

    /// Something arrived from the peer.
    pub fn seen(&self) {
        self.seen.store(true, Ordering::Relaxed);
    }

    /// The peer answered a heartbeat: its round trip, and the peer is
    /// alive.
    pub fn acked(&self) {
        let mut beat = self.beat.lock();
        self.latency_ns.store(beat.ack(now_ns()), Ordering::Relaxed);
        beat.received();
    }

    /// The last heartbeat's round trip in nanoseconds.
    pub fn latency_ns(&self) -> i64 {
        self.latency_ns.load(Ordering::Relaxed)
    }

    /// `rtrs_start_hb()`: misses forgotten, the first tick after an
    /// interval.
    pub fn start<P: HbPath>(path: &Arc<P>) {
        let ms = {
            let mut beat = path.hb().beat.lock();
            beat.stop();
            beat.interval_ms()
        };
        DelayedWork::<P, HB_WORK>::schedule(path, path.hb_queue(), ms);
    }

    /// `rtrs_stop_hb()`: no more ticks (a running one finishes first), and
    /// misses forgotten. Process context.
    pub fn stop<P: HbPath>(path: &P) {
        DelayedWork::<P, HB_WORK>::cancel_sync(path);
        path.hb().beat.lock().stop();
    }

    /// `hb_work()`: a tick. Fails the path after too many misses or on a
    /// request unanswered past its deadline; sends a heartbeat when one is
    /// due; and ticks again an interval later, unless the path failed.
    pub fn run<P: HbPath>(path: Arc<P>) {
        if !path.hb_connected() {
            return;
        }
        let hb = path.hb();
        let now = now_ns();
        let (action, ms) = {
            let mut beat = hb.beat.lock();
            if hb.seen.swap(false, Ordering::Relaxed) {
                beat.received();
            }
            (beat.tick(now), beat.interval_ms())
        };
        if let Some((id, age_ms)) = path.unanswered(now) {
            pr_err!(
                "{}: IO {} unanswered for {} ms, closing the path\n",
                path.name(),
                id,
                age_ms
            );
            path.fail();
            return;
        }
        match action {
            HbAction::Fail => {
                pr_err!("{}: HB missed max reached.\n", path.name());
                path.fail();
                return;
            }
            HbAction::Send => {
                let sent = path
                    .cons()
                    .with(0, |id| Con::<P>::post_imm_empty(id, Imm::HbMsg));
                if let Err(e) = sent {
                    pr_err!("{}: HB send failed, errno: {}\n", path.name(), e.to_errno());
                    path.fail();
                    return;
                }
            }
            HbAction::Skip => {}
        }
        DelayedWork::<P, HB_WORK>::schedule(&path, path.hb_queue(), ms);
    }
}
