// SPDX-License-Identifier: GPL-2.0-or-later

//! RTRS 2.1: what rtrs-rs speaks when both ends of a path are its own,
//! negotiated within 2.0's fields so that a C peer never sees it.
//!
//! # Negotiation
//!
//! The client offers version 2.1 in each CON_REQ. A C server checks only
//! the major version and answers 2.0: the path runs 2.0. Our server
//! answers 2.1 only to a client that offered it, with the flags of what it
//! does ([`MSG_FENCE_F`]) and the path's id in the first reserved bytes of
//! CON_RSP; to a C client, which offers 2.0, it answers 2.0. A module
//! parameter on each side pins 2.0.
//!
//! # Fences
//!
//! A client that fails IO over from path X of a session to path Y, while
//! the server has not confirmed X's close, sends [`Imm::Fence`] with X's id
//! on Y's service connection. The server closes X: its QPs go to the error
//! state, so nothing more of X lands; it waits until the upper layer has
//! answered X's IO, so no bio of X runs any more; and it answers
//! [`Imm::FenceAck`] on Y. Only then does the client send the failed-over
//! IO: it can neither land before a copy still running on X, nor be
//! overwritten by it. The chunks X's IO left are free again at the ack.
//!
//! [`Imm::Fence`]: super::imm::Imm::Fence
//! [`Imm::FenceAck`]: super::imm::Imm::FenceAck

use super::msg::PROTO_VER_MAJOR;

/// Version 2.1.
pub const PROTO_VER_EXT: u16 = (PROTO_VER_MAJOR << 8) | 1;

/// In CON_RSP's flags of a 2.1 path: the server answers fences.
pub const MSG_FENCE_F: u32 = 1 << 8;

/// What a path negotiated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ext {
    /// The server answers [`super::imm::Imm::Fence`].
    pub fence: bool,
}

/// The version a client offers: 2.1 unless it pins 2.0.
pub const fn client_offer(enabled: bool) -> u16 {
    if enabled {
        PROTO_VER_EXT
    } else {
        super::msg::PROTO_VER
    }
}

/// The server's answer to a client that sent `version`: the version and
/// the flags to add to CON_RSP. 2.1 only if the client offered at least
/// 2.1 and the server does not pin 2.0.
pub const fn server_answer(version: u16, enabled: bool) -> (u16, u32) {
    if enabled && version >> 8 == PROTO_VER_MAJOR && version & 0xff >= 1 {
        (PROTO_VER_EXT, MSG_FENCE_F)
    } else {
        (super::msg::PROTO_VER, 0)
    }
}

/// What a client that offered 2.1 (`enabled`) runs with, given the
/// server's CON_RSP `version` and `flags`.
pub const fn client_ext(version: u16, flags: u32, enabled: bool) -> Ext {
    Ext {
        fence: enabled
            && version >> 8 == PROTO_VER_MAJOR
            && version & 0xff >= 1
            && flags & MSG_FENCE_F != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::PROTO_VER;

    #[test]
    fn the_four_pairings() {
        // Ours to ours: 2.1 with fences.
        let (v, f) = server_answer(client_offer(true), true);
        assert_eq!(v, PROTO_VER_EXT);
        assert!(client_ext(v, f, true).fence);
        // Our client to a C server: it answers 2.0, whatever was offered.
        assert!(!client_ext(PROTO_VER, 0, true).fence);
        // A C client (2.0) to our server: 2.0, no flag.
        assert_eq!(server_answer(PROTO_VER, true), (PROTO_VER, 0));
        // A server that pins 2.0, and a client that does.
        assert_eq!(server_answer(PROTO_VER_EXT, false), (PROTO_VER, 0));
        assert_eq!(client_offer(false), PROTO_VER);
        assert!(!client_ext(PROTO_VER_EXT, MSG_FENCE_F, false).fence);
        // A later 2.x offers at least what 2.1 has.
        assert_eq!(server_answer(0x0203, true), (PROTO_VER_EXT, MSG_FENCE_F));
        // 2.1 without the flag: no fences.
        assert!(!client_ext(PROTO_VER_EXT, 0, true).fence);
    }
}
