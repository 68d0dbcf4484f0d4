// SPDX-License-Identifier: GPL-2.0-or-later

//! The path state machines of the client (`rtrs_clt_change_state()`) and
//! of the server (`rtrs_srv_change_state()`), with the names sysfs, dmesg
//! and the trace events print for each state; and [`StateCell`], the one
//! place a path keeps its state, which readers get without a lock.

use core::marker::PhantomData;
use core::sync::atomic::{AtomicU8, Ordering};

/// A state machine whose states fit in a byte.
pub trait StateMachine: Copy + Eq {
    /// What a cell reads as if it held a byte of no state: never, since a
    /// [`StateCell`] only ever holds bytes of states; the safe end of the
    /// machine, should it happen anyway.
    const FALLBACK: Self;

    /// The state's byte.
    fn to_u8(self) -> u8;

    /// The state whose byte is `v`.
    fn from_u8(v: u8) -> Option<Self>;

    /// Whether the machine moves from `self` to `new`.
    fn can_change_to(self, new: Self) -> bool;
}

/// What [`StateCell::change`] did: whether the state changed, and what it
/// was before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Changed<S> {
    /// The state changed.
    pub changed: bool,
    /// The state before the call.
    pub old: S,
}

/// The state of a path, changed only by the transitions its machine
/// allows and read without a lock (C reads `path->state` with `READ_ONCE`
/// and changes it under the state lock).
///
/// Each change is decided and published in one compare-exchange on the
/// value it was checked against: of two changes racing from one state only
/// one succeeds, and no transition the machine forbids is ever stored. A
/// reader sees a state that was the state at some moment; what was written
/// before a change is visible to whoever reads the new state (`Acquire` on
/// `Release`).
///
/// # Invariants
///
/// `v` holds `s.to_u8()` of some state `s`: `new`, `change` and
/// `change_from_to` are the only writers, and each writes a state's byte.
pub struct StateCell<S: StateMachine> {
    v: AtomicU8,
    _s: PhantomData<S>,
}

impl<S: StateMachine> StateCell<S> {
    /// A cell in state `s`.
    pub fn new(s: S) -> Self {
        // INVARIANT: the byte of a state.
        Self {
            v: AtomicU8::new(s.to_u8()),
            _s: PhantomData,
        }
    }

    /// The state now.
    pub fn get(&self) -> S {
        S::from_u8(self.v.load(Ordering::Acquire)).unwrap_or(S::FALLBACK)
    }

    /// Moves to `new` if the machine allows it from the state now
    /// (`rtrs_clt_change_state_get_old()`, `rtrs_srv_change_state()`).
    pub fn change(&self, new: S) -> Changed<S> {
        let mut cur = self.v.load(Ordering::Acquire);
        loop {
            let old = S::from_u8(cur).unwrap_or(S::FALLBACK);
            if !old.can_change_to(new) {
                return Changed {
                    changed: false,
                    old,
                };
            }
            // INVARIANT: the byte of a state.
            match self.v.compare_exchange_weak(
                cur,
                new.to_u8(),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Changed { changed: true, old },
                Err(now) => cur = now,
            }
        }
    }

    /// Moves from `old` to `new`, if the state is `old` and the machine
    /// allows it (`rtrs_clt_change_state_from_to()`).
    pub fn change_from_to(&self, old: S, new: S) -> bool {
        // INVARIANT: the byte of a state.
        old.can_change_to(new)
            && self
                .v
                .compare_exchange(
                    old.to_u8(),
                    new.to_u8(),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
    }
}

/// State of a client path (`enum rtrs_clt_state`).
///
/// The transitions `rtrs_clt_change_state()` allows:
///
/// | from | to |
/// | --- | --- |
/// | `CONNECTING` | `CONNECTED`, `CONNECTING_ERR`, `CLOSING` |
/// | `CONNECTING_ERR` | `RECONNECTING`, `CLOSING` |
/// | `RECONNECTING` | `CONNECTING`, `CLOSING` |
/// | `CONNECTED` | `RECONNECTING`, `CLOSING` |
/// | `CLOSING` | `CLOSED` |
/// | `CLOSED` | `RECONNECTING` (sysfs `reconnect`), `DEAD` |
/// | `DEAD` | none |
///
/// [`CltState::can_change_to`] is the exact rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum CltState {
    /// `RTRS_CLT_CONNECTING`: connections and handshake in progress.
    Connecting = 0,
    /// `RTRS_CLT_CONNECTING_ERR`: establishing failed.
    ConnectingErr = 1,
    /// `RTRS_CLT_RECONNECTING`: waiting to reconnect after an error.
    Reconnecting = 2,
    /// `RTRS_CLT_CONNECTED`: usable for IO.
    Connected = 3,
    /// `RTRS_CLT_CLOSING`: being torn down.
    Closing = 4,
    /// `RTRS_CLT_CLOSED`: torn down, may be reconnected from sysfs.
    Closed = 5,
    /// `RTRS_CLT_DEAD`: removed; no way back.
    Dead = 6,
}

impl CltState {
    /// Whether `rtrs_clt_change_state()` moves a path from `self` to
    /// `new`. A state never changes to itself.
    pub const fn can_change_to(self, new: CltState) -> bool {
        use CltState::*;
        matches!(
            (self, new),
            (Reconnecting, Connecting)
                | (Connected | ConnectingErr | Closed, Reconnecting)
                | (Connecting, Connected)
                | (Connecting, ConnectingErr)
                | (
                    Connecting | ConnectingErr | Reconnecting | Connected,
                    Closing
                )
                | (Closing, Closed)
                | (Closed, Dead)
        )
    }

    /// Moves to `new` if allowed; returns whether the state changed (the
    /// return value of `rtrs_clt_change_state()`).
    pub fn change(&mut self, new: CltState) -> bool {
        let ok = self.can_change_to(new);
        if ok {
            *self = new;
        }
        ok
    }

    /// Moves to `new` only from `old`, as `rtrs_clt_change_state_from_to()`.
    pub fn change_from_to(&mut self, old: CltState, new: CltState) -> bool {
        *self == old && self.change(new)
    }

    /// The numeric value of the C enum.
    pub const fn as_u8(self) -> u8 {
        self as u8
    }

    /// The state with C value `v`, if any.
    pub const fn from_u8(v: u8) -> Option<Self> {
        use CltState::*;
        match v {
            0 => Some(Connecting),
            1 => Some(ConnectingErr),
            2 => Some(Reconnecting),
            3 => Some(Connected),
            4 => Some(Closing),
            5 => Some(Closed),
            6 => Some(Dead),
            _ => None,
        }
    }

    /// What the path's sysfs `state` file shows, newline included
    /// (`rtrs_clt_state_show()`, ABI `sysfs-class-rtrs-client`): only
    /// `connected` or `disconnected`.
    pub const fn sysfs_str(self) -> &'static str {
        match self {
            CltState::Connected => "connected\n",
            _ => "disconnected\n",
        }
    }

    /// The name the trace events print (`show_rtrs_clt_state()`).
    pub const fn name(self) -> &'static str {
        use CltState::*;
        match self {
            Connecting => "CONNECTING",
            ConnectingErr => "CONNECTING_ERR",
            Reconnecting => "RECONNECTING",
            Connected => "CONNECTED",
            Closing => "CLOSING",
            Closed => "CLOSED",
            Dead => "DEAD",
        }
    }
}

/// State of a server path (`enum rtrs_srv_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SrvState {
    /// `RTRS_SRV_CONNECTING`: connections arriving, no info request yet.
    Connecting = 0,
    /// `RTRS_SRV_CONNECTED`: info request answered, IO flows.
    Connected = 1,
    /// `RTRS_SRV_CLOSING`: close work queued.
    Closing = 2,
    /// `RTRS_SRV_CLOSED`: torn down.
    Closed = 3,
}

impl SrvState {
    /// Whether `rtrs_srv_change_state()` moves a path from `self` to `new`.
    pub const fn can_change_to(self, new: SrvState) -> bool {
        use SrvState::*;
        matches!(
            (self, new),
            (Connecting, Connected) | (Connecting | Connected, Closing) | (Closing, Closed)
        )
    }

    /// Moves to `new` if allowed; returns whether the state changed.
    pub fn change(&mut self, new: SrvState) -> bool {
        let ok = self.can_change_to(new);
        if ok {
            *self = new;
        }
        ok
    }

    /// The numeric value of the C enum.
    pub const fn as_u8(self) -> u8 {
        self as u8
    }

    /// The state with C value `v`, if any.
    pub const fn from_u8(v: u8) -> Option<Self> {
        use SrvState::*;
        match v {
            0 => Some(Connecting),
            1 => Some(Connected),
            2 => Some(Closing),
            3 => Some(Closed),
            _ => None,
        }
    }

    /// The name the C server logs (`rtrs_srv_state_str()`).
    pub const fn log_str(self) -> &'static str {
        match self {
            SrvState::Connecting => "RTRS_SRV_CONNECTING",
            SrvState::Connected => "RTRS_SRV_CONNECTED",
            SrvState::Closing => "RTRS_SRV_CLOSING",
            SrvState::Closed => "RTRS_SRV_CLOSED",
        }
    }

    /// The name the trace events print (`show_rtrs_srv_state()`).
    pub const fn name(self) -> &'static str {
        match self {
            SrvState::Connecting => "CONNECTING",
            SrvState::Connected => "CONNECTED",
            SrvState::Closing => "CLOSING",
            SrvState::Closed => "CLOSED",
        }
    }
}

/// How long a server path may stay connecting, connections made but no
/// INFO_REQ, before a client's new attempt on it closes it
/// (`RTRS_MAX_CONN_TIMEOUT`, upstream since 6.12).
pub const MAX_CONN_TIMEOUT_MS: u64 = 30_000;

/// Whether a server path in `state`, whose last connection began
/// `connecting_ms` ago (`None`: none is being made, or INFO_REQ was
/// answered), is a zombie that a client's new attempt closes
/// (`rtrs_srv_check_close_path()`).
pub const fn is_zombie(state: SrvState, connecting_ms: Option<u64>) -> bool {
    match (state, connecting_ms) {
        (SrvState::Connecting, Some(ms)) => ms > MAX_CONN_TIMEOUT_MS,
        _ => false,
    }
}

impl StateMachine for CltState {
    const FALLBACK: Self = CltState::Dead;

    fn to_u8(self) -> u8 {
        self.as_u8()
    }

    fn from_u8(v: u8) -> Option<Self> {
        CltState::from_u8(v)
    }

    fn can_change_to(self, new: Self) -> bool {
        CltState::can_change_to(self, new)
    }
}

impl StateMachine for SrvState {
    const FALLBACK: Self = SrvState::Closed;

    fn to_u8(self) -> u8 {
        self.as_u8()
    }

    fn from_u8(v: u8) -> Option<Self> {
        SrvState::from_u8(v)
    }

    fn can_change_to(self, new: Self) -> bool {
        SrvState::can_change_to(self, new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLT: [CltState; 7] = [
        CltState::Connecting,
        CltState::ConnectingErr,
        CltState::Reconnecting,
        CltState::Connected,
        CltState::Closing,
        CltState::Closed,
        CltState::Dead,
    ];

    #[test]
    fn clt_transition_table_is_rtrs_clt_change_state() {
        // Rows: old state, columns: new state, in enum order
        // (CONNECTING, CONNECTING_ERR, RECONNECTING, CONNECTED, CLOSING,
        // CLOSED, DEAD), transcribed from the switch in rtrs-clt.c.
        #[rustfmt::skip]
        const ALLOWED: [[bool; 7]; 7] = [
            // CONNECTING ->
            [false, true,  false, true,  true,  false, false],
            // CONNECTING_ERR ->
            [false, false, true,  false, true,  false, false],
            // RECONNECTING ->
            [true,  false, false, false, true,  false, false],
            // CONNECTED ->
            [false, false, true,  false, true,  false, false],
            // CLOSING ->
            [false, false, false, false, false, true,  false],
            // CLOSED ->
            [false, false, true,  false, false, false, true ],
            // DEAD ->
            [false, false, false, false, false, false, false],
        ];
        for (i, &old) in CLT.iter().enumerate() {
            for (j, &new) in CLT.iter().enumerate() {
                assert_eq!(
                    old.can_change_to(new),
                    ALLOWED[i][j],
                    "{} -> {}",
                    old.name(),
                    new.name()
                );
                let mut s = old;
                assert_eq!(s.change(new), ALLOWED[i][j]);
                assert_eq!(s, if ALLOWED[i][j] { new } else { old });
            }
        }
    }

    #[test]
    fn clt_change_from_to() {
        let mut s = CltState::Connected;
        assert!(!s.change_from_to(CltState::Connecting, CltState::ConnectingErr));
        assert_eq!(s, CltState::Connected);
        assert!(s.change_from_to(CltState::Connected, CltState::Reconnecting));
        assert_eq!(s, CltState::Reconnecting);
        // The error recovery path: CONNECTED -> RECONNECTING fails while
        // CONNECTING, then CONNECTING -> CONNECTING_ERR.
        let mut s = CltState::Connecting;
        assert!(!s.change_from_to(CltState::Connected, CltState::Reconnecting));
        assert!(s.change_from_to(CltState::Connecting, CltState::ConnectingErr));
        assert_eq!(s, CltState::ConnectingErr);
    }

    #[test]
    fn clt_values_and_strings() {
        for (i, &s) in CLT.iter().enumerate() {
            assert_eq!(s.as_u8(), i as u8);
            assert_eq!(CltState::from_u8(i as u8), Some(s));
            let want = if s == CltState::Connected {
                "connected\n"
            } else {
                "disconnected\n"
            };
            assert_eq!(s.sysfs_str(), want);
        }
        assert_eq!(CltState::from_u8(7), None);
        assert_eq!(CltState::ConnectingErr.name(), "CONNECTING_ERR");
        assert_eq!(CltState::Dead.name(), "DEAD");
        assert_eq!(CltState::Reconnecting.name(), "RECONNECTING");
    }

    #[test]
    fn srv_transition_table_is_rtrs_srv_change_state() {
        const SRV: [SrvState; 4] = [
            SrvState::Connecting,
            SrvState::Connected,
            SrvState::Closing,
            SrvState::Closed,
        ];
        #[rustfmt::skip]
        const ALLOWED: [[bool; 4]; 4] = [
            // CONNECTING -> CONNECTED, CLOSING
            [false, true,  true,  false],
            // CONNECTED -> CLOSING
            [false, false, true,  false],
            // CLOSING -> CLOSED
            [false, false, false, true ],
            // CLOSED -> nothing
            [false, false, false, false],
        ];
        for (i, &old) in SRV.iter().enumerate() {
            assert_eq!(old.as_u8(), i as u8);
            assert_eq!(SrvState::from_u8(i as u8), Some(old));
            for (j, &new) in SRV.iter().enumerate() {
                assert_eq!(old.can_change_to(new), ALLOWED[i][j]);
                let mut s = old;
                assert_eq!(s.change(new), ALLOWED[i][j]);
            }
        }
        assert_eq!(SrvState::from_u8(4), None);
        assert_eq!(SrvState::Connecting.log_str(), "RTRS_SRV_CONNECTING");
        assert_eq!(SrvState::Closed.log_str(), "RTRS_SRV_CLOSED");
        assert_eq!(SrvState::Closing.name(), "CLOSING");
    }

    #[test]
    fn cell_changes_as_the_machine_allows() {
        for &old in CLT.iter() {
            for &new in CLT.iter() {
                let c = StateCell::new(old);
                let r = c.change(new);
                assert_eq!(r.old, old);
                assert_eq!(r.changed, old.can_change_to(new));
                assert_eq!(c.get(), if r.changed { new } else { old });
                let c = StateCell::new(old);
                for &from in CLT.iter() {
                    let ok = c.change_from_to(from, new);
                    assert_eq!(ok, from == old && old.can_change_to(new));
                    assert_eq!(c.get(), if ok { new } else { old });
                    if ok {
                        break;
                    }
                }
            }
        }
    }

    #[test]
    fn cell_one_winner_per_transition() {
        extern crate std;
        use std::sync::atomic::AtomicUsize;
        use std::sync::Arc;
        // Threads race CONNECTED -> RECONNECTING (error recovery) and
        // CONNECTED -> CLOSING (close): exactly one wins, and the state is
        // the winner's.
        for _ in 0..200 {
            let c = Arc::new(StateCell::new(CltState::Connected));
            let won = Arc::new(AtomicUsize::new(0));
            let hs: std::vec::Vec<_> = (0..8)
                .map(|i| {
                    let (c, won) = (c.clone(), won.clone());
                    std::thread::spawn(move || {
                        let to = if i % 2 == 0 {
                            CltState::Reconnecting
                        } else {
                            CltState::Closing
                        };
                        if c.change_from_to(CltState::Connected, to) {
                            won.fetch_add(1, Ordering::SeqCst);
                            return Some(to);
                        }
                        None
                    })
                })
                .collect();
            let winners: std::vec::Vec<_> =
                hs.into_iter().filter_map(|h| h.join().unwrap()).collect();
            assert_eq!(won.load(Ordering::SeqCst), 1);
            assert_eq!(winners.len(), 1);
            assert_eq!(c.get(), winners[0]);
        }
    }

    #[test]
    fn zombie_paths() {
        assert!(!is_zombie(SrvState::Connecting, None));
        assert!(!is_zombie(SrvState::Connecting, Some(30_000)));
        assert!(is_zombie(SrvState::Connecting, Some(30_001)));
        for s in [SrvState::Connected, SrvState::Closing, SrvState::Closed] {
            assert!(!is_zombie(s, Some(u64::MAX)));
        }
    }
}
