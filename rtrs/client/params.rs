// SPDX-License-Identifier: GPL-2.0-or-later

//! The client's module parameters, ours: C's `rtrs-client` has none.

use rb::param::{module_param, BoolParam, UintParam};
use rtrs_proto::hb::{IO_DEADLINE_MS, SILENCE_MS};

module_param! {
    /// `proto_ext`.
    static PROTO_EXT: BoolParam = BoolParam::new(true);
    name: proto_ext, perm: 0o644,
    desc: "Offer RTRS 2.1, rtrs-rs's extensions (failover fences, one-message read responses), to servers; N pins 2.0 (default: Y)";
}

/// Whether new connections offer RTRS 2.1 (`proto_ext`).
pub(crate) fn proto_ext() -> bool {
    PROTO_EXT.value()
}

module_param! {
    /// `io_deadline_s`.
    static IO_DEADLINE_S: UintParam = UintParam::new(IO_DEADLINE_MS / 1000);
    name: io_deadline_s, perm: 0o644,
    desc: "Close a path whose server has left an IO unanswered for this many seconds while it answers heartbeats, and fail the IO over; 0 waits for ever, as C (default: 50)";
}

/// How long an IO may go unanswered before its path is closed, in
/// milliseconds; 0: for ever (`io_deadline_s`).
pub(crate) fn io_deadline_ms() -> u32 {
    IO_DEADLINE_S.value().saturating_mul(1000)
}

module_param! {
    /// `silence_ms`.
    static SILENCE: UintParam = UintParam::new(SILENCE_MS);
    name: silence_ms, perm: 0o644,
    desc: "Fail a path over when it hears nothing from its server for this many milliseconds, the last two thirds waiting for a heartbeat sent after the first third, while IO is in flight and another path is up; 0 leaves it to the QP and the heartbeats, as C (default: 750)";
}

/// The silence window of a path with IO in flight, in milliseconds; 0:
/// none (`silence_ms`).
pub(crate) fn silence_ms() -> u32 {
    SILENCE.value()
}
