// SPDX-License-Identifier: GPL-2.0-or-later

//! The heartbeat of a path (C's `hb_*` fields of `struct rtrs_path`,
//! `rtrs_init_hb()`, `rtrs_start_hb()`, `rtrs_stop_hb()` and `hb_work()`):
//! every `HB_INTERVAL_MS` a path that heard nothing from its peer sends a
//! heartbeat on its service connection; after `HB_MISSED_MAX` of them
//! without an answer, the path fails. The same tick fails a path whose
//! peer answers heartbeats but leaves a request unanswered past its
//! deadline ([`HbPath::unanswered`]). A side may also probe out of turn
//! ([`Hb::probe`]): the client does when its IO waits on a silent path.

use crate::con::{Con, Side};
use crate::now_ns;
use crate::slots::ConSlots;
use core::sync::atomic::{AtomicI64, Ordering};
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
/// HB_ACK. `last_rx_ns` is stamped by every receive completion and
/// `latency_ns` read per IO by the client's min-latency policy: atomics.
#[pin_data]
pub struct Hb {
    #[pin]
    beat: SpinLockIrq<Heartbeat>,
    /// When something last arrived from the peer, on the coarse clock
    /// ([`rb::time::coarse_ns`]): a tick that finds it changed forgets its
    /// misses (C's `hb_missed_cnt = 0` in every completion) without
    /// `beat`'s lock per completion, and the client's probe measures its
    /// silence from it.
    last_rx_ns: AtomicI64,
    /// The last heartbeat's round trip (`hb_cur_latency`).
    latency_ns: AtomicI64,
}

impl Hb {
    /// A stopped heartbeat (`rtrs_init_hb()`).
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Hb {
            beat <- new_spinlock_irq!(Heartbeat::default(), "rtrs_hb"),
            last_rx_ns: AtomicI64::new(0),
            latency_ns: AtomicI64::new(0),
        })
    }

    /// Something arrived from the peer.
    pub fn seen(&self) {
        self.last_rx_ns
            .store(rb::time::coarse_ns(), Ordering::Relaxed);
    }

    /// When something last arrived from the peer, on the coarse clock
    /// ([`rb::time::coarse_ns`]); the start of the heartbeat counts.
    pub fn last_rx_ns(&self) -> i64 {
        self.last_rx_ns.load(Ordering::Relaxed)
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
        path.hb().seen();
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
            beat.heard(hb.last_rx_ns());
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
                if Self::send(&path).is_err() {
                    return;
                }
            }
            HbAction::Skip => {}
        }
        DelayedWork::<P, HB_WORK>::schedule(&path, path.hb_queue(), ms);
    }

    /// Sends a heartbeat out of turn (the client's silence probe); its
    /// answer measures the round trip as a regular one's does. A path that
    /// cannot send it has failed.
    pub fn probe<P: HbPath>(path: &Arc<P>) -> Result {
        path.hb().beat.lock().sent(now_ns());
        Self::send(path)
    }

    /// Posts an `HB_MSG` on the service connection; fails the path if it
    /// cannot.
    fn send<P: HbPath>(path: &Arc<P>) -> Result {
        let sent = path
            .cons()
            .with(0, |id| Con::<P>::post_imm_empty(id, Imm::HbMsg));
        if let Err(e) = sent {
            pr_err!("{}: HB send failed, errno: {}\n", path.name(), e.to_errno());
            path.fail();
        }
        sent
    }
}
