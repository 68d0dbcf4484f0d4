// SPDX-License-Identifier: GPL-2.0-or-later

//! The path state machines of the client (`rtrs_clt_change_state()`) and
//! of the server (`rtrs_srv_change_state()`), with the names sysfs, dmesg
//! and the trace events print for each state.

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
}
