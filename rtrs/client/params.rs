// SPDX-License-Identifier: GPL-2.0-or-later

//! The client's module parameter, ours: C's `rtrs-client` has none.

use rb::param::{module_param, BoolParam};

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
