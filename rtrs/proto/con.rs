// SPDX-License-Identifier: GPL-2.0-or-later

//! What a client connection knows of its own life: how far it got with
//! rdma_cm ([`CmOutcome`], C's `con->cm_err`) and whether the server
//! confirmed the close of the established connection ([`CloseConfirm`]).

use crate::state::StateMachine;
use core::sync::atomic::{AtomicI32, Ordering};

/// How far a connection got with rdma_cm (C's `cm_err`: 0 while
/// connecting, 1 once established, a negative errno once failed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmOutcome {
    /// Address, route or connection still being resolved or made.
    Pending,
    /// Established (CON_RSP accepted).
    Established,
    /// Failed, with a negative errno.
    Failed(i32),
}

impl CmOutcome {
    /// A failure with `errno`; a non-negative one (a caller's bug) becomes
    /// `-EPERM`, so that the value stays a failure.
    pub const fn failed(errno: i32) -> Self {
        CmOutcome::Failed(if errno < 0 { errno } else { -1 })
    }

    /// C's encoding.
    pub const fn to_raw(self) -> i32 {
        match self {
            CmOutcome::Pending => 0,
            CmOutcome::Established => 1,
            CmOutcome::Failed(e) => e,
        }
    }

    /// The outcome C's encoding `v` means.
    pub const fn from_raw(v: i32) -> Self {
        match v {
            0 => CmOutcome::Pending,
            1 => CmOutcome::Established,
            e => CmOutcome::failed(e),
        }
    }
}

/// A connection's [`CmOutcome`], read and changed without a lock (the CM
/// handler changes it; the thread that opens the connection waits for it).
///
/// # Invariants
///
/// `v` holds `o.to_raw()` of some outcome `o`: the only writers store one.
pub struct CmCell {
    v: AtomicI32,
}

impl CmCell {
    /// A pending connection.
    pub const fn new() -> Self {
        // INVARIANT: `Pending`'s encoding.
        Self {
            v: AtomicI32::new(0),
        }
    }

    /// The outcome now.
    pub fn get(&self) -> CmOutcome {
        CmOutcome::from_raw(self.v.load(Ordering::Acquire))
    }

    /// The connection is established; false (and nothing changes) unless
    /// it was pending: a connection that failed (or was retired before its
    /// ID is destroyed) stays failed.
    pub fn establish(&self) -> bool {
        // INVARIANT: `Established`'s encoding replaces `Pending`'s.
        self.v
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The connection failed with `errno` (a later failure's errno replaces
    /// an earlier one's, as C's `flag_error_on_conn()`); returns the outcome
    /// before.
    pub fn fail(&self, errno: i32) -> CmOutcome {
        // INVARIANT: a failure's encoding.
        CmOutcome::from_raw(
            self.v
                .swap(CmOutcome::failed(errno).to_raw(), Ordering::AcqRel),
        )
    }
}

impl Default for CmCell {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether the server confirmed the close of an established connection:
/// until it did (its DREQ, or its DREP to ours), its QP on the server may
/// still take writes. `NotEstablished` -> `Unconfirmed` -> `Confirmed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum CloseConfirm {
    /// Not established (yet).
    NotEstablished = 0,
    /// Established; the server has not confirmed a close.
    Unconfirmed = 1,
    /// The server confirmed the close.
    Confirmed = 2,
}

impl StateMachine for CloseConfirm {
    const FALLBACK: Self = CloseConfirm::Confirmed;

    fn to_u8(self) -> u8 {
        self as u8
    }

    fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(CloseConfirm::NotEstablished),
            1 => Some(CloseConfirm::Unconfirmed),
            2 => Some(CloseConfirm::Confirmed),
            _ => None,
        }
    }

    fn can_change_to(self, new: Self) -> bool {
        matches!(
            (self, new),
            (CloseConfirm::NotEstablished, CloseConfirm::Unconfirmed)
                | (CloseConfirm::Unconfirmed, CloseConfirm::Confirmed)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::StateCell;

    #[test]
    fn outcome_encoding_is_cs() {
        for o in [
            CmOutcome::Pending,
            CmOutcome::Established,
            CmOutcome::Failed(-104),
            CmOutcome::Failed(-113),
        ] {
            assert_eq!(CmOutcome::from_raw(o.to_raw()), o);
        }
        assert_eq!(CmOutcome::Pending.to_raw(), 0);
        assert_eq!(CmOutcome::Established.to_raw(), 1);
        assert_eq!(CmOutcome::failed(-110).to_raw(), -110);
        // Never a success by mistake.
        assert_eq!(CmOutcome::failed(0), CmOutcome::Failed(-1));
        assert_eq!(CmOutcome::failed(1), CmOutcome::Failed(-1));
    }

    #[test]
    fn cell_establishes_once_and_fails_for_good() {
        let c = CmCell::new();
        assert_eq!(c.get(), CmOutcome::Pending);
        assert!(c.establish());
        assert!(!c.establish());
        assert_eq!(c.fail(-104), CmOutcome::Established);
        assert_eq!(c.get(), CmOutcome::Failed(-104));
        // A second failure keeps the connection failed, with its errno.
        assert_eq!(c.fail(-103), CmOutcome::Failed(-104));
        assert_eq!(c.get(), CmOutcome::Failed(-103));
        // A late ESTABLISHED does not bring a failed connection back.
        assert!(!c.establish());
        assert_eq!(c.get(), CmOutcome::Failed(-103));
        // A failure before ESTABLISHED: the connection was never counted.
        let c = CmCell::new();
        assert_eq!(c.fail(-113), CmOutcome::Pending);
        assert!(!c.establish());
    }

    #[test]
    fn close_is_confirmed_only_after_establishing() {
        let c = StateCell::new(CloseConfirm::NotEstablished);
        assert!(!c.change_from_to(CloseConfirm::Unconfirmed, CloseConfirm::Confirmed));
        assert!(c.change(CloseConfirm::Unconfirmed).changed);
        assert!(c.change_from_to(CloseConfirm::Unconfirmed, CloseConfirm::Confirmed));
        // Counted once.
        assert!(!c.change_from_to(CloseConfirm::Unconfirmed, CloseConfirm::Confirmed));
        assert_eq!(c.get(), CloseConfirm::Confirmed);
    }
}
