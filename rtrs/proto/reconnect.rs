// SPDX-License-Identifier: GPL-2.0-or-later

//! Client reconnect arithmetic (`rtrs_clt_err_recovery_work()`,
//! `rtrs_clt_reconnect_work()`) and the sysfs `max_reconnect_attempts`
//! rules (`rtrs-clt-sysfs.c`).
//!
//! After an error the path waits `reconnect_delay_sec` seconds plus a
//! random jitter, then [`RECONNECT_BACKOFF_MS`] more, then tries again,
//! unless it already tried `max_reconnect_attempts` times.

use super::error::Error;
use klib::kstr::kstrtoint;

/// Pause before each reconnect attempt, letting the server clean up
/// (`RTRS_RECONNECT_BACKOFF`).
pub const RECONNECT_BACKOFF_MS: u32 = 1000;
/// Range of the random reconnect jitter (`RTRS_RECONNECT_SEED`).
pub const RECONNECT_SEED: u32 = 8;
/// Timeout of each connection step and of the info exchange
/// (`RTRS_CONNECT_TIMEOUT_MS`).
pub const CONNECT_TIMEOUT_MS: u32 = 30000;
/// Smallest `max_reconnect_attempts`: -1, reconnect forever.
pub const MIN_MAX_RECONN_ATT: i32 = -1;
/// Largest `max_reconnect_attempts` sysfs accepts.
pub const MAX_MAX_RECONN_ATT: i32 = 9999;

/// The delay before the reconnect work runs after an error, in ms:
/// `reconnect_delay_sec * 1000 + get_random_u32_below(RECONNECT_SEED)`,
/// with `random` a uniformly random `u32` standing for the random source.
///
/// The C comment speaks of a jitter "between 0 and 8 seconds", but the
/// code adds 0 to 7 *milliseconds*; we do what the code does.
pub const fn reconnect_delay_ms(reconnect_delay_sec: u32, random: u32) -> u32 {
    reconnect_delay_sec
        .saturating_mul(1000)
        .saturating_add(random % RECONNECT_SEED)
}

/// Whether the reconnect work closes the path instead of trying again:
/// `attempts >= max_reconnect_attempts`, compared as the C `unsigned int`s,
/// so that -1 means forever and 0 means never reconnect.
pub const fn reconnect_exhausted(attempts: u32, max_reconnect_attempts: i32) -> bool {
    attempts >= max_reconnect_attempts as u32
}

/// The reconnect attempts of a client path since it was last connected
/// (C's `reconnect_attempts`, where -1 stands for [`Attempts::Stopped`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attempts {
    /// Tried this many times.
    Tried(u32),
    /// The server changed its queue depth, which the session's permits
    /// cannot follow: only a manual `reconnect` may try again.
    Stopped,
}

impl Attempts {
    /// No attempt yet: the path was connected, or a user asked for it.
    pub const NONE: Self = Self::Tried(0);

    /// Counts one more attempt and returns `true`, or returns `false`
    /// when `max_reconnect_attempts` are used up or reconnecting stopped.
    pub fn take(&mut self, max_reconnect_attempts: i32) -> bool {
        match *self {
            Self::Tried(n) if !reconnect_exhausted(n, max_reconnect_attempts) => {
                *self = Self::Tried(n + 1);
                true
            }
            _ => false,
        }
    }
}

/// The value of a write to sysfs `max_reconnect_attempts`
/// (`max_reconnect_attempts_store()`): a decimal `int` in
/// [`MIN_MAX_RECONN_ATT`]`..=`[`MAX_MAX_RECONN_ATT`]; the `kstrtoint()`
/// errno when it is not a number, [`Error::Inval`] when out of range.
pub fn parse_max_reconnect_attempts(buf: &[u8]) -> Result<i32, Error> {
    let v = kstrtoint(buf, 10)?;
    if !(MIN_MAX_RECONN_ATT..=MAX_MAX_RECONN_ATT).contains(&v) {
        return Err(Error::Inval);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_adds_millisecond_jitter() {
        assert_eq!(reconnect_delay_ms(0, 0), 0);
        assert_eq!(reconnect_delay_ms(5, 0), 5000);
        assert_eq!(reconnect_delay_ms(5, 7), 5007);
        assert_eq!(reconnect_delay_ms(5, 8), 5000);
        assert_eq!(reconnect_delay_ms(5, u32::MAX), 5007);
        assert_eq!(reconnect_delay_ms(255, 3), 255_003);
        assert_eq!(reconnect_delay_ms(u32::MAX, 3), u32::MAX);
        for r in 0..64 {
            let d = reconnect_delay_ms(1, r);
            assert!((1000..1008).contains(&d));
        }
    }

    #[test]
    fn attempts_compare_unsigned() {
        assert!(reconnect_exhausted(0, 0));
        assert!(!reconnect_exhausted(2, 3));
        assert!(reconnect_exhausted(3, 3));
        assert!(!reconnect_exhausted(1_000_000, -1));
        assert!(reconnect_exhausted(u32::MAX, -1));
        // reconnect_attempts = -1 (queue depth changed) stops for good.
        assert!(reconnect_exhausted(u32::MAX, 9999));
    }

    #[test]
    fn attempts_count_up_to_max() {
        let mut a = Attempts::NONE;
        assert!(a.take(2));
        assert!(a.take(2));
        assert!(!a.take(2));
        assert_eq!(a, Attempts::Tried(2));
        let mut a = Attempts::NONE;
        assert!(!a.take(0));
        let mut a = Attempts::Tried(1_000_000);
        assert!(a.take(-1));
        assert_eq!(a, Attempts::Tried(1_000_001));
        // A stopped path never tries on its own, not even with -1.
        for max in [-1, 0, 9999] {
            let mut a = Attempts::Stopped;
            assert!(!a.take(max));
            assert_eq!(a, Attempts::Stopped);
        }
    }

    #[test]
    fn sysfs_max_reconnect_attempts() {
        assert_eq!(parse_max_reconnect_attempts(b"-1\n"), Ok(-1));
        assert_eq!(parse_max_reconnect_attempts(b"0"), Ok(0));
        assert_eq!(parse_max_reconnect_attempts(b"9999\n"), Ok(9999));
        assert_eq!(parse_max_reconnect_attempts(b"10000"), Err(Error::Inval));
        assert_eq!(parse_max_reconnect_attempts(b"-2"), Err(Error::Inval));
        assert_eq!(parse_max_reconnect_attempts(b"abc"), Err(Error::Inval));
        assert_eq!(
            parse_max_reconnect_attempts(b"99999999999"),
            Err(Error::Range)
        );
        assert_eq!(parse_max_reconnect_attempts(b""), Err(Error::Inval));
    }
}
