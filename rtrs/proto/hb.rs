// SPDX-License-Identifier: GPL-2.0-or-later

//! Heartbeat bookkeeping of a path (`hb_work()`, `rtrs_start_hb()`,
//! `rtrs_stop_hb()` in `rtrs.c`): when to send a heartbeat, when to give
//! up, and the latency the client measures from the acknowledgement.
//!
//! Both sides run the same timer every `interval_ms`. A heartbeat is sent
//! only when nothing was missed since the last receive; any IMM received
//! on the path resets the miss count. With the defaults (5 s, 5 misses)
//! the path fails on the 7th tick without traffic, 35 s after the last
//! receive.

/// Heartbeat period of both sides (`RTRS_HB_INTERVAL_MS`).
pub const HB_INTERVAL_MS: u32 = 5000;
/// Misses tolerated before the path is failed (`RTRS_HB_MISSED_MAX`).
pub const HB_MISSED_MAX: u32 = 5;

/// How long, by default, the client lets a request go unanswered on a
/// path whose heartbeats are answered before it closes the path
/// (`io_deadline_s`): twice the window in which the heartbeats declare a
/// silent peer dead, so that a peer slow enough to miss it is dead by the
/// heartbeats' rule first. nvme-rdma's host allows 30 s (`io_timeout`).
pub const IO_DEADLINE_MS: u32 = 2 * HB_INTERVAL_MS * HB_MISSED_MAX;

/// How long, by default, a client path with IO in flight may hear nothing
/// from its server before it fails (`silence_ms`), when another path of
/// its session can take the IO. A third of it passes before the path
/// probes with a heartbeat, the other two thirds (500 ms) wait for the
/// answer: the answer's wait is what keeps a live but busy server's path
/// up, the time before the probe only spares heartbeats. A link that
/// went silent is otherwise noticed only by the QP's retries, which rxe
/// repeats for ever with C's retry count 7, or by the heartbeats, 35 s.
pub const SILENCE_MS: u32 = 750;

/// The deadline rule of a request posted at `posted_ns` (monotonic
/// nanoseconds), looked at `now_ns`: its age in milliseconds once it has
/// waited longer than `deadline_ms`, `None` while it may still be
/// answered. A deadline of 0 is none (C's client waits for ever). A
/// request stamped after `now_ns` (a tick that read the clock before the
/// request was posted) is young.
pub const fn unanswered_ms(posted_ns: i64, now_ns: i64, deadline_ms: u32) -> Option<u64> {
    if deadline_ms == 0 || now_ns <= posted_ns {
        return None;
    }
    let age_ms = (now_ns.abs_diff(posted_ns)) / 1_000_000;
    if age_ms > deadline_ms as u64 {
        Some(age_ms)
    } else {
        None
    }
}

/// What the heartbeat timer does on one tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HbAction {
    /// Send an `HB_MSG` IMM and rearm the timer.
    Send,
    /// Rearm the timer without sending: a heartbeat is outstanding.
    Skip,
    /// Too many misses: call the error handler, do not rearm.
    Fail,
}

/// One tick of `hb_work()` given the current miss count: the action and
/// the new miss count. Fails once the count is above `missed_max`;
/// otherwise counts the tick and sends only if the count was 0.
pub const fn hb_tick(missed_cnt: u32, missed_max: u32) -> (HbAction, u32) {
    if missed_cnt > missed_max {
        return (HbAction::Fail, missed_cnt);
    }
    let action = if missed_cnt == 0 {
        HbAction::Send
    } else {
        HbAction::Skip
    };
    (action, missed_cnt.saturating_add(1))
}

/// What a path's silence probe does next ([`Probe::step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeAction {
    /// Nothing in flight: no one waits for the path; stop until IO is.
    Idle,
    /// Look again at `at_ns`.
    Wait {
        /// When.
        at_ns: i64,
    },
    /// Send a heartbeat now, and look again at `at_ns`.
    Send {
        /// When.
        at_ns: i64,
    },
    /// The path heard nothing for `silent_ms` with IO in flight, a probe
    /// unanswered among it: fail the path, so that its IO fails over.
    Fail {
        /// How long the path has heard nothing.
        silent_ms: u64,
        /// How long the probe went unanswered: two thirds of `silence_ms`
        /// when every step ran on time; what is above it, the steps'
        /// lateness. Below `silent_ms` by the time the path heard nothing
        /// before the probe went out (a long idle, or a third of the
        /// window).
        probe_ms: u64,
        /// How much later than asked the step that sent the probe ran: 0
        /// for the first step after an idle spell, which asks for none.
        send_late_ms: u64,
    },
}

/// The silence probe of a client path: IO is in flight and nothing has
/// arrived for a third of `silence_ms`, so a heartbeat goes out; when it
/// is not answered within the other two thirds either, the path is dead
/// to its IO. A live server answers a heartbeat from its completion
/// handler, however slow its disks, so only a silent link or a dead peer
/// fails the probe. A step that would fail the path but runs late by
/// half the answer's wait or more (the CPU held up, with what arrived
/// meanwhile perhaps still in its queues) looks again that much later.
///
/// # Invariants
///
/// `sent_ns` is the time of the probe sent since the last receive, if any,
/// and `send_late_ns` how late the step that sent it ran; `due_ns` the
/// time the last step asked for the next one, if it asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Probe {
    sent_ns: Option<i64>,
    send_late_ns: i64,
    due_ns: Option<i64>,
}

impl Probe {
    /// What to do at `now_ns`, given the time of the path's last receive
    /// `last_rx_ns`, whether IO is in flight, the window `silence_ms`
    /// (0: no probe, C's behaviour) and whether another path could take
    /// the IO (`may_fail`: without one, failing the path turns a wait into
    /// an error, and the heartbeats decide). All times are of one
    /// monotonic clock; the caller runs the next step at the time a
    /// `Wait` or `Send` gives.
    pub fn step(
        &mut self,
        now_ns: i64,
        last_rx_ns: i64,
        in_flight: bool,
        silence_ms: u32,
        may_fail: bool,
    ) -> ProbeAction {
        let due = self.due_ns.take();
        if !in_flight || silence_ms == 0 {
            self.sent_ns = None;
            return ProbeAction::Idle;
        }
        let window = silence_ms as i64 * 1_000_000;
        let probe_after = window / 3;
        let answer_within = window - probe_after;
        let grace = answer_within / 2;
        // While a heartbeat waits, the steps look this often too: an
        // answer starts a new silence, whose heartbeat is due a third of
        // a window after it, not when the answered one's wait is over.
        let look = probe_after / 2;
        if let Some(sent) = self.sent_ns {
            if last_rx_ns >= sent {
                // INVARIANT: answered (or anything else arrived) since.
                self.sent_ns = None;
            } else if now_ns.saturating_sub(sent) < answer_within {
                let end = sent.saturating_add(answer_within);
                return self.wait(end.min(now_ns.saturating_add(look)));
            } else if due.is_some_and(|d| now_ns.saturating_sub(d) > grace) {
                return self.wait(now_ns.saturating_add(grace));
            } else if may_fail {
                let silent = now_ns.saturating_sub(last_rx_ns).max(0) as u64;
                let probe = now_ns.saturating_sub(sent).max(0) as u64;
                return ProbeAction::Fail {
                    silent_ms: silent / 1_000_000,
                    probe_ms: probe / 1_000_000,
                    send_late_ms: self.send_late_ns as u64 / 1_000_000,
                };
            } else {
                // Nowhere to fail over to: the heartbeats decide the
                // path's end; look again in case another path comes up.
                return self.wait(now_ns.saturating_add(answer_within));
            }
        }
        if now_ns.saturating_sub(last_rx_ns) >= probe_after {
            // INVARIANT: nothing arrived since `last_rx_ns` < `now_ns`.
            self.sent_ns = Some(now_ns);
            self.send_late_ns = due.map_or(0, |d| now_ns.saturating_sub(d).max(0));
            let at_ns = now_ns.saturating_add(look);
            self.due_ns = Some(at_ns);
            ProbeAction::Send { at_ns }
        } else {
            self.wait(last_rx_ns.saturating_add(probe_after))
        }
    }

    /// Asks for the next step at `at_ns`.
    fn wait(&mut self, at_ns: i64) -> ProbeAction {
        // INVARIANT: the step asked for.
        self.due_ns = Some(at_ns);
        ProbeAction::Wait { at_ns }
    }
}

/// The delay of a timer for `at_ns`, looked at `now_ns`, in whole
/// milliseconds rounded up (a timer never fires early), at least 1.
pub fn ms_until(now_ns: i64, at_ns: i64) -> u32 {
    let ns = at_ns.saturating_sub(now_ns).max(0) as u64;
    ns.div_ceil(1_000_000).clamp(1, u32::MAX as u64) as u32
}

/// The heartbeat state of one path (the `hb_*` fields of `struct
/// rtrs_path`). Times are nanoseconds of a monotonic clock (`ktime_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heartbeat {
    interval_ms: u32,
    missed_max: u32,
    missed_cnt: u32,
    last_sent_ns: i64,
    cur_latency_ns: i64,
    /// The path's last receive as the last tick saw it.
    heard_ns: i64,
}

impl Heartbeat {
    /// A stopped heartbeat (`rtrs_init_hb()`); the latency starts at 0.
    pub const fn new(interval_ms: u32, missed_max: u32) -> Self {
        Heartbeat {
            interval_ms,
            missed_max,
            missed_cnt: 0,
            last_sent_ns: 0,
            cur_latency_ns: 0,
            heard_ns: 0,
        }
    }

    /// The timer period.
    pub const fn interval_ms(&self) -> u32 {
        self.interval_ms
    }

    /// Ticks since the last receive.
    pub const fn missed_cnt(&self) -> u32 {
        self.missed_cnt
    }

    /// The timer fired at `now_ns` (`hb_work()`); when the action is
    /// [`HbAction::Send`], `now_ns` is remembered as the send time.
    pub fn tick(&mut self, now_ns: i64) -> HbAction {
        let (action, cnt) = hb_tick(self.missed_cnt, self.missed_max);
        self.missed_cnt = cnt;
        if action == HbAction::Send {
            self.last_sent_ns = now_ns;
        }
        action
    }

    /// Something (IO response, heartbeat, ack) arrived on the path.
    pub fn received(&mut self) {
        self.missed_cnt = 0;
    }

    /// Before a tick: the path's last receive was stamped `last_rx_ns`;
    /// a stamp other than the last tick saw is something new, and the
    /// misses are forgotten.
    pub fn heard(&mut self, last_rx_ns: i64) {
        if last_rx_ns != self.heard_ns {
            self.heard_ns = last_rx_ns;
            self.received();
        }
    }

    /// A heartbeat went out of turn at `now_ns` (a probe): its
    /// acknowledgement measures from it.
    pub fn sent(&mut self, now_ns: i64) {
        self.last_sent_ns = now_ns;
    }

    /// The client got an `HB_ACK` at `now_ns`: records and returns the
    /// latency, the time since the last heartbeat was sent
    /// (`hb_cur_latency`, shown by sysfs `cur_latency`). Call
    /// [`Heartbeat::received`] too, as every receive does.
    pub fn ack(&mut self, now_ns: i64) -> i64 {
        self.cur_latency_ns = now_ns.saturating_sub(self.last_sent_ns);
        self.cur_latency_ns
    }

    /// The last measured latency, used by the min-latency policy.
    pub const fn latency_ns(&self) -> i64 {
        self.cur_latency_ns
    }

    /// The heartbeat was stopped (`rtrs_stop_hb()`): misses are forgotten.
    pub fn stop(&mut self) {
        self.missed_cnt = 0;
    }
}

impl Default for Heartbeat {
    /// The heartbeat both C sides use: [`HB_INTERVAL_MS`], [`HB_MISSED_MAX`].
    fn default() -> Self {
        Heartbeat::new(HB_INTERVAL_MS, HB_MISSED_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_rtrs_pri_h() {
        assert_eq!(HB_INTERVAL_MS, 5000);
        assert_eq!(HB_MISSED_MAX, 5);
        assert_eq!(Heartbeat::default().interval_ms(), 5000);
    }

    #[test]
    fn io_deadline_is_twice_the_heartbeat_window() {
        assert_eq!(IO_DEADLINE_MS, 50_000);
        let hb_window_ms = (HB_MISSED_MAX + 2) * HB_INTERVAL_MS;
        assert!(IO_DEADLINE_MS > hb_window_ms);
    }

    #[test]
    fn unanswered_only_past_the_deadline() {
        const MS: i64 = 1_000_000;
        let posted = 7 * MS;
        assert_eq!(unanswered_ms(posted, posted, 50_000), None);
        assert_eq!(unanswered_ms(posted, posted + 50_000 * MS, 50_000), None);
        assert_eq!(
            unanswered_ms(posted, posted + 50_001 * MS, 50_000),
            Some(50_001)
        );
        assert_eq!(
            unanswered_ms(posted, posted + 50_001 * MS - 1, 50_000),
            None
        );
        // Off: never, however old.
        assert_eq!(unanswered_ms(0, i64::MAX, 0), None);
        // Stamped after the clock was read: young.
        assert_eq!(unanswered_ms(posted, posted - MS, 1), None);
        // No overflow at the clock's ends.
        assert_eq!(
            unanswered_ms(i64::MIN, i64::MAX, 1),
            Some(u64::MAX / 1_000_000)
        );
    }

    #[test]
    fn heartbeat_ticks_close_an_unanswered_request_in_time() {
        // A request posted just after a tick is found by the first tick
        // past the deadline: at most one interval late.
        const MS: i64 = 1_000_000;
        let posted = 1;
        let first = (1..)
            .map(|k| k * HB_INTERVAL_MS as i64 * MS)
            .find(|&t| unanswered_ms(posted, t, IO_DEADLINE_MS).is_some())
            .unwrap();
        assert!(first - posted <= (IO_DEADLINE_MS + HB_INTERVAL_MS) as i64 * MS);
        assert!(first - posted > IO_DEADLINE_MS as i64 * MS);
    }

    #[test]
    fn silent_peer_fails_on_the_seventh_tick() {
        let mut hb = Heartbeat::default();
        let mut actions = [HbAction::Fail; 8];
        for (i, a) in actions.iter_mut().enumerate() {
            *a = hb.tick(i as i64 * 5_000_000_000);
        }
        use HbAction::*;
        assert_eq!(actions, [Send, Skip, Skip, Skip, Skip, Skip, Fail, Fail]);
        assert_eq!(hb.missed_cnt(), 6);
    }

    #[test]
    fn receive_resets_and_next_tick_sends() {
        let mut hb = Heartbeat::new(1000, 2);
        assert_eq!(hb.tick(10), HbAction::Send);
        assert_eq!(hb.tick(20), HbAction::Skip);
        hb.received();
        assert_eq!(hb.missed_cnt(), 0);
        assert_eq!(hb.tick(30), HbAction::Send);
        assert_eq!(hb.ack(45), 15);
        assert_eq!(hb.latency_ns(), 15);
        // A late ack still measures from the last send.
        assert_eq!(hb.tick(40), HbAction::Skip);
        assert_eq!(hb.ack(100), 70);
        hb.stop();
        assert_eq!(hb.missed_cnt(), 0);
    }

    const MS: i64 = 1_000_000;
    /// The default window and its parts, as `Probe::step` splits it.
    const WINDOW: i64 = SILENCE_MS as i64 * MS;
    const PROBE_AFTER: i64 = WINDOW / 3;
    const ANSWER: i64 = WINDOW - PROBE_AFTER;
    const GRACE: i64 = ANSWER / 2;
    const LOOK: i64 = PROBE_AFTER / 2;

    /// Runs `p` from `now` at each time it asks for, with the last
    /// receive `rx(now)` and IO in flight, until it fails (its time and
    /// action) or `end` passes.
    fn follow(
        p: &mut Probe,
        mut now: i64,
        rx: impl Fn(i64) -> i64,
        may_fail: impl Fn(i64) -> bool,
        end: i64,
    ) -> Option<(i64, ProbeAction)> {
        while now <= end {
            match p.step(now, rx(now), true, SILENCE_MS, may_fail(now)) {
                ProbeAction::Wait { at_ns } | ProbeAction::Send { at_ns } => {
                    assert!(at_ns > now, "a step moves on");
                    now = at_ns;
                }
                a @ ProbeAction::Fail { .. } => return Some((now, a)),
                ProbeAction::Idle => panic!("idle at {now}"),
            }
        }
        None
    }

    #[test]
    fn default_window_splits_into_a_quarter_second_and_half_a_second() {
        // What the parameter's description and the documents say.
        assert_eq!(PROBE_AFTER, 250 * MS);
        assert_eq!(ANSWER, 500 * MS);
        assert_eq!(GRACE, 250 * MS);
    }

    /// Runs a probe as the client's work does: at each time it asks for,
    /// with receives at `rx` (sorted) and IO in flight until `busy_until`.
    /// Returns the time of the failure, if any, and the probes sent.
    fn run_probe(rx: &[i64], busy_until: i64, may_fail: bool, end: i64) -> (Option<i64>, u32) {
        let mut p = Probe::default();
        let mut now = 0;
        let mut sent = 0;
        while now <= end {
            let last_rx = rx.iter().copied().filter(|&t| t <= now).max().unwrap_or(0);
            match p.step(now, last_rx, now < busy_until, SILENCE_MS, may_fail) {
                ProbeAction::Idle => return (None, sent),
                ProbeAction::Wait { at_ns } => {
                    assert!(at_ns > now, "a wait moves on");
                    now = at_ns;
                }
                ProbeAction::Send { at_ns } => {
                    sent += 1;
                    assert_eq!(at_ns, now + LOOK);
                    now = at_ns;
                }
                ProbeAction::Fail { .. } => return (Some(now), sent),
            }
        }
        (None, sent)
    }

    #[test]
    fn silent_path_with_io_fails_within_the_window() {
        // Receives every 10 ms until 3 s, then nothing; IO throughout.
        let rx: [i64; 300] = core::array::from_fn(|i| i as i64 * 10 * MS);
        let last = rx[299];
        let (failed, sent) = run_probe(&rx, i64::MAX, true, 100_000 * MS);
        let failed = failed.expect("a silent path fails");
        assert_eq!(failed - last, WINDOW);
        assert_eq!(sent, 1);
        // Any window: the probe goes out after a third of it, and the
        // path fails when the window has passed.
        for window_ms in [1, 2, 3, 10, 750, 1000, 4000, 3001] {
            let mut p = Probe::default();
            let w = window_ms as i64 * MS;
            let t = p.step(0, 0, true, window_ms, true);
            assert_eq!(t, ProbeAction::Wait { at_ns: w / 3 }, "{window_ms}");
            let mut now = w / 3;
            loop {
                match p.step(now, 0, true, window_ms, true) {
                    ProbeAction::Send { at_ns } | ProbeAction::Wait { at_ns } => now = at_ns,
                    ProbeAction::Fail { .. } => break,
                    a => panic!("{a:?} at {now}, window {window_ms}"),
                }
            }
            assert_eq!(now, w, "{window_ms}");
        }
    }

    #[test]
    fn answered_probe_keeps_a_slow_path() {
        // IO in flight for 60 s, a disk that answers nothing, but the
        // server answers each probe 300 ms after it was sent.
        let mut p = Probe::default();
        let mut now = 0;
        let mut last_rx = 0;
        let mut sent_at = None;
        let mut probes = 0;
        while now < 60_000 * MS {
            if let Some(s) = sent_at {
                if now >= s + 300 * MS {
                    last_rx = s + 300 * MS;
                    sent_at = None;
                }
            }
            match p.step(now, last_rx, true, SILENCE_MS, true) {
                ProbeAction::Send { at_ns } => {
                    probes += 1;
                    sent_at = Some(now);
                    now = at_ns.min(now + 300 * MS);
                }
                ProbeAction::Wait { at_ns } => now = at_ns.min(now + 300 * MS),
                a => panic!("{a:?} at {now}"),
            }
        }
        // One probe per answer and a third of a window: 109 a minute.
        assert!((100..=120).contains(&probes), "{probes}");
    }

    #[test]
    fn idle_path_is_not_probed() {
        assert_eq!(run_probe(&[], 0, true, 10_000 * MS), (None, 0));
        let mut p = Probe::default();
        assert_eq!(p.step(5, 0, false, SILENCE_MS, true), ProbeAction::Idle);
        // Off: C's behaviour.
        assert_eq!(p.step(i64::MAX, 0, true, 0, true), ProbeAction::Idle);
    }

    #[test]
    fn io_after_a_long_idle_is_watched_from_its_start() {
        // The last receive long ago, IO posted at 100 s: a probe at once,
        // and a silent link fails the path once it went unanswered.
        let mut p = Probe::default();
        let t = 100_000 * MS;
        assert_eq!(
            p.step(t, 0, true, SILENCE_MS, true),
            ProbeAction::Send { at_ns: t + LOOK }
        );
        assert_eq!(
            follow(&mut p, t + LOOK, |_| 0, |_| true, i64::MAX),
            Some((
                t + ANSWER,
                ProbeAction::Fail {
                    silent_ms: 100_500,
                    probe_ms: 500,
                    send_late_ms: 0
                }
            ))
        );
    }

    #[test]
    fn no_other_path_never_fails_and_probes_once() {
        let (failed, sent) = run_probe(&[0], i64::MAX, false, 10_000 * MS);
        assert_eq!(failed, None);
        assert_eq!(sent, 1);
        // Another path comes up: the unanswered probe fails this one.
        let mut p = Probe::default();
        assert!(matches!(
            p.step(PROBE_AFTER, 0, true, SILENCE_MS, false),
            ProbeAction::Send { .. }
        ));
        // Up at 1.1 s: the next step, at 1.25 s, fails the path.
        assert_eq!(
            follow(
                &mut p,
                PROBE_AFTER + LOOK,
                |_| 0,
                |t| t >= 1100 * MS,
                i64::MAX
            ),
            Some((
                WINDOW + ANSWER,
                ProbeAction::Fail {
                    silent_ms: 1250,
                    probe_ms: 1000,
                    send_late_ms: 0
                }
            ))
        );
    }

    #[test]
    fn a_late_heartbeat_is_told_from_an_idle_spell() {
        // IO in flight since the last receive at 0: the step due at
        // 0.25 s runs at 0.55 s and sends the probe; the failure says so.
        let mut p = Probe::default();
        assert_eq!(
            p.step(0, 0, true, SILENCE_MS, true),
            ProbeAction::Wait { at_ns: PROBE_AFTER }
        );
        let late = PROBE_AFTER + 300 * MS;
        assert_eq!(
            p.step(late, 0, true, SILENCE_MS, true),
            ProbeAction::Send { at_ns: late + LOOK }
        );
        assert_eq!(
            follow(&mut p, late + LOOK, |_| 0, |_| true, i64::MAX),
            Some((
                late + ANSWER,
                ProbeAction::Fail {
                    silent_ms: 1050,
                    probe_ms: 500,
                    send_late_ms: 300
                }
            ))
        );
    }

    #[test]
    fn late_step_looks_again_before_it_fails() {
        // A probe sent at 1 s; the step due at 1.5 s runs at 2.2 s (the
        // CPU held up): it looks again at 2.45 s, and fails then if
        // nothing came.
        let sent = 1000 * MS;
        // A probe sent at `sent`, its steps run on time until the one
        // due when its answer's wait is over.
        let waited = || {
            let mut p = Probe::default();
            let mut at = match p.step(sent, 0, true, SILENCE_MS, true) {
                ProbeAction::Send { at_ns } => at_ns,
                a => panic!("{a:?}"),
            };
            while at < sent + ANSWER {
                at = match p.step(at, 0, true, SILENCE_MS, true) {
                    ProbeAction::Wait { at_ns } => at_ns,
                    a => panic!("{a:?} at {at}"),
                };
            }
            assert_eq!(at, sent + ANSWER);
            p
        };
        let late = sent + ANSWER + 700 * MS;
        let mut p = waited();
        assert_eq!(
            p.step(late, 0, true, SILENCE_MS, true),
            ProbeAction::Wait {
                at_ns: late + GRACE
            }
        );
        assert_eq!(
            p.step(late + GRACE, 0, true, SILENCE_MS, true),
            ProbeAction::Fail {
                silent_ms: 2450,
                probe_ms: 1450,
                send_late_ms: 0
            }
        );
        // What the held-up CPU had in its queues came meanwhile: kept.
        let mut p = waited();
        p.step(late, 0, true, SILENCE_MS, true);
        assert_eq!(
            p.step(late + GRACE, late + MS, true, SILENCE_MS, true),
            ProbeAction::Wait {
                at_ns: late + MS + PROBE_AFTER
            }
        );
        // Late by less than the grace: fails.
        let mut p = waited();
        assert!(matches!(
            p.step(sent + ANSWER + GRACE, 0, true, SILENCE_MS, true),
            ProbeAction::Fail { .. }
        ));
    }

    #[test]
    fn a_probe_answered_just_before_the_silence_does_not_delay_the_next() {
        // Receives until 0, a probe at 0.25 s answered 10 ms later, then
        // nothing: the path fails a window after that answer, not a
        // window after the answered probe's own wait was over.
        let answer = PROBE_AFTER + 10 * MS;
        let mut p = Probe::default();
        let rx = |t: i64| if t >= answer { answer } else { 0 };
        let (failed, _) = follow(&mut p, 0, rx, |_| true, i64::MAX).unwrap();
        assert_eq!(failed, answer + WINDOW);
    }

    #[test]
    fn probe_edges() {
        let mut p = Probe::default();
        // A receive stamped in the future is recent.
        assert_eq!(
            p.step(0, 10, true, SILENCE_MS, true),
            ProbeAction::Wait {
                at_ns: 10 + PROBE_AFTER
            }
        );
        // No overflow at the clock's ends.
        let mut p = Probe::default();
        assert_eq!(
            p.step(i64::MAX, i64::MIN, true, u32::MAX, true),
            ProbeAction::Send { at_ns: i64::MAX }
        );
        assert_eq!(
            p.step(i64::MAX, i64::MIN, true, 1, true),
            ProbeAction::Wait { at_ns: i64::MAX }
        );
    }

    #[test]
    fn heard_forgets_misses_only_for_a_new_receive() {
        let mut hb = Heartbeat::new(1000, 2);
        hb.heard(0);
        assert_eq!(hb.tick(10), HbAction::Send);
        hb.heard(0);
        assert_eq!(hb.tick(20), HbAction::Skip);
        hb.heard(15);
        assert_eq!(hb.missed_cnt(), 0);
        assert_eq!(hb.tick(30), HbAction::Send);
        hb.heard(15);
        assert_eq!(hb.tick(40), HbAction::Skip);
        // A probe's ack measures from the probe.
        hb.sent(50);
        assert_eq!(hb.ack(58), 8);
    }

    #[test]
    fn ms_until_rounds_up() {
        assert_eq!(ms_until(0, 0), 1);
        assert_eq!(ms_until(10, 0), 1);
        assert_eq!(ms_until(0, 1), 1);
        assert_eq!(ms_until(0, MS), 1);
        assert_eq!(ms_until(0, MS + 1), 2);
        assert_eq!(ms_until(i64::MIN, i64::MAX), u32::MAX);
    }

    #[test]
    fn tick_function_edges() {
        assert_eq!(hb_tick(0, 0), (HbAction::Send, 1));
        assert_eq!(hb_tick(1, 0), (HbAction::Fail, 1));
        assert_eq!(hb_tick(5, 5), (HbAction::Skip, 6));
        assert_eq!(hb_tick(6, 5), (HbAction::Fail, 6));
        assert_eq!(hb_tick(u32::MAX, u32::MAX), (HbAction::Skip, u32::MAX));
        let mut hb = Heartbeat::new(1, 0);
        assert_eq!(hb.ack(i64::MIN), i64::MIN);
        assert_eq!(hb.tick(i64::MAX), HbAction::Send);
        assert_eq!(hb.ack(i64::MIN), i64::MIN);
    }
}
