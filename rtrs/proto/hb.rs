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

/// The heartbeat state of one path (the `hb_*` fields of `struct
/// rtrs_path`). Times are nanoseconds of a monotonic clock (`ktime_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heartbeat {
    interval_ms: u32,
    missed_max: u32,
    missed_cnt: u32,
    last_sent_ns: i64,
    cur_latency_ns: i64,
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
