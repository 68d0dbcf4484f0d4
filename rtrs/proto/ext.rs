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
//!
//! # Read responses in one message
//!
//! 2.0 answers a READ with the data (RDMA_WRITE), a SEND_WITH_INV of the
//! client's key if it asked for it, and the response: an empty
//! RDMA_WRITE_WITH_IMM, or with `always_invalidate` a SEND_WITH_IMM of an
//! RKEY_RSP. A server that sets [`MSG_READ_RSP_F`] answers with the data
//! and one SEND (SEND_WITH_INV of the client's key when asked) whose
//! payload is a [`ReadRsp`]: the request, its errno, and with
//! `always_invalidate` the chunk's new key. The client of such a path posts
//! a receive buffer of [`ReadRsp::SIZE`] for each answer it may get. WRITEs
//! and errors are answered as in 2.0.
//!
//! [`Imm::Fence`]: super::imm::Imm::Fence
//! [`Imm::FenceAck`]: super::imm::Imm::FenceAck

use super::error::Error;
use super::msg::PROTO_VER_MAJOR;

/// Version 2.1.
pub const PROTO_VER_EXT: u16 = (PROTO_VER_MAJOR << 8) | 1;

/// In CON_RSP's flags of a 2.1 path: the server answers fences.
pub const MSG_FENCE_F: u32 = 1 << 8;
/// In CON_RSP's flags of a 2.1 path: the server answers READs with one
/// [`ReadRsp`] after the data.
pub const MSG_READ_RSP_F: u32 = 1 << 9;

/// What a path negotiated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ext {
    /// The server answers [`super::imm::Imm::Fence`].
    pub fence: bool,
    /// The server answers READs with a [`ReadRsp`].
    pub read_rsp: bool,
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
/// the flags to add to CON_RSP, of those in `features` (what the server
/// does). 2.1 only if the client offered at least 2.1 and the server does
/// not pin 2.0.
pub const fn server_answer(version: u16, enabled: bool, features: u32) -> (u16, u32) {
    if enabled && version >> 8 == PROTO_VER_MAJOR && version & 0xff >= 1 {
        (PROTO_VER_EXT, features & (MSG_FENCE_F | MSG_READ_RSP_F))
    } else {
        (super::msg::PROTO_VER, 0)
    }
}

/// What a client that offered 2.1 (`enabled`) runs with, given the
/// server's CON_RSP `version` and `flags`.
pub const fn client_ext(version: u16, flags: u32, enabled: bool) -> Ext {
    let ext = enabled && version >> 8 == PROTO_VER_MAJOR && version & 0xff >= 1;
    Ext {
        fence: ext && flags & MSG_FENCE_F != 0,
        read_rsp: ext && flags & MSG_READ_RSP_F != 0,
    }
}

/// The message type of a [`ReadRsp`]: after C's five (`RTRS_MSG_INFO_REQ`
/// to `RTRS_MSG_RKEY_RSP`), on 2.1 paths only.
pub const MSG_READ_RSP: u16 = 5;
/// In [`ReadRsp::flags`]: `rkey` is the chunk's new key (the server runs
/// with `always_invalidate`).
pub const READ_RSP_NEW_RKEY_F: u16 = 1 << 0;

/// The answer to a READ on a path with [`MSG_READ_RSP_F`], the payload of
/// the SEND (or SEND_WITH_INV) that follows the data. Little endian:
///
/// | offset | size | field |
/// | --- | --- | --- |
/// | 0 | 2 | type, [`MSG_READ_RSP`] |
/// | 2 | 2 | `msg_id` |
/// | 4 | 2 | `errno`, 0 or a negative errno |
/// | 6 | 2 | `flags` |
/// | 8 | 4 | `rkey` |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadRsp {
    /// The request (and chunk) id.
    pub msg_id: u16,
    /// 0, or the negative errno the request failed with.
    pub errno: i16,
    /// [`READ_RSP_NEW_RKEY_F`] or none.
    pub flags: u16,
    /// The chunk's new key, with [`READ_RSP_NEW_RKEY_F`]; else 0.
    pub rkey: u32,
}

impl ReadRsp {
    /// Its size on the wire.
    pub const SIZE: usize = 12;
    /// The largest errno magnitude (the kernel's `MAX_ERRNO`).
    const MAX_ERRNO: i16 = 4095;

    /// Writes the message into the first [`Self::SIZE`] bytes of `buf`.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let b = buf.get_mut(..Self::SIZE).ok_or(Error::MsgSize)?;
        b[0..2].copy_from_slice(&MSG_READ_RSP.to_le_bytes());
        b[2..4].copy_from_slice(&self.msg_id.to_le_bytes());
        b[4..6].copy_from_slice(&self.errno.to_le_bytes());
        b[6..8].copy_from_slice(&self.flags.to_le_bytes());
        b[8..12].copy_from_slice(&self.rkey.to_le_bytes());
        Ok(Self::SIZE)
    }

    /// Reads what a server sent, as the client must take it:
    /// [`Error::MsgSize`] unless exactly [`Self::SIZE`] bytes came,
    /// [`Error::Inval`] for another type, an errno that is not 0 or
    /// -1..-4095, unknown flags, or a key without [`READ_RSP_NEW_RKEY_F`].
    /// That `msg_id` names a READ in flight on the path is the caller's to
    /// check.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        if buf.len() != Self::SIZE {
            return Err(Error::MsgSize);
        }
        let u16_at = |o: usize| u16::from_le_bytes([buf[o], buf[o + 1]]);
        if u16_at(0) != MSG_READ_RSP {
            return Err(Error::Inval);
        }
        let rsp = ReadRsp {
            msg_id: u16_at(2),
            errno: u16_at(4) as i16,
            flags: u16_at(6),
            rkey: u32::from_le_bytes([buf[8], buf[9], buf[10], buf[11]]),
        };
        let errno_ok = rsp.errno <= 0 && rsp.errno >= -Self::MAX_ERRNO;
        let flags_ok = rsp.flags & !READ_RSP_NEW_RKEY_F == 0;
        let rkey_ok = rsp.flags & READ_RSP_NEW_RKEY_F != 0 || rsp.rkey == 0;
        if errno_ok && flags_ok && rkey_ok {
            Ok(rsp)
        } else {
            Err(Error::Inval)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::PROTO_VER;

    const ALL: u32 = MSG_FENCE_F | MSG_READ_RSP_F;

    #[test]
    fn the_four_pairings() {
        // Ours to ours: 2.1 with fences and read responses.
        let (v, f) = server_answer(client_offer(true), true, ALL);
        assert_eq!(v, PROTO_VER_EXT);
        assert_eq!(
            client_ext(v, f, true),
            Ext {
                fence: true,
                read_rsp: true
            }
        );
        // Our client to a C server: it answers 2.0, whatever was offered.
        assert_eq!(client_ext(PROTO_VER, 0, true), Ext::default());
        // A C client (2.0) to our server: 2.0, no flag.
        assert_eq!(server_answer(PROTO_VER, true, ALL), (PROTO_VER, 0));
        // A server that pins 2.0, and a client that does.
        assert_eq!(server_answer(PROTO_VER_EXT, false, ALL), (PROTO_VER, 0));
        assert_eq!(client_offer(false), PROTO_VER);
        assert_eq!(client_ext(PROTO_VER_EXT, ALL, false), Ext::default());
        // A later 2.x offers at least what 2.1 has.
        assert_eq!(server_answer(0x0203, true, ALL), (PROTO_VER_EXT, ALL));
        // 2.1 without the flags: neither.
        assert_eq!(client_ext(PROTO_VER_EXT, 0, true), Ext::default());
        // A server offers only what it does, and a C flag passes by.
        assert_eq!(
            server_answer(PROTO_VER_EXT, true, MSG_FENCE_F | 1 << 1),
            (PROTO_VER_EXT, MSG_FENCE_F)
        );
        assert_eq!(
            client_ext(PROTO_VER_EXT, MSG_FENCE_F, true),
            Ext {
                fence: true,
                read_rsp: false
            }
        );
    }

    #[test]
    fn read_rsp_round_trips() {
        let r = ReadRsp {
            msg_id: 511,
            errno: -5,
            flags: 0,
            rkey: 0,
        };
        let mut b = [0xffu8; 16];
        assert_eq!(r.encode(&mut b), Ok(ReadRsp::SIZE));
        assert_eq!(
            &b[..ReadRsp::SIZE],
            &[5, 0, 0xff, 1, 0xfb, 0xff, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(ReadRsp::decode(&b[..ReadRsp::SIZE]), Ok(r));
        let k = ReadRsp {
            msg_id: 0,
            errno: 0,
            flags: READ_RSP_NEW_RKEY_F,
            rkey: 0x1234_5678,
        };
        k.encode(&mut b).unwrap();
        assert_eq!(ReadRsp::decode(&b[..ReadRsp::SIZE]), Ok(k));
        assert_eq!(r.encode(&mut b[..11]), Err(Error::MsgSize));
    }

    #[test]
    fn read_rsp_refuses_what_a_server_must_not_send() {
        let good = ReadRsp {
            msg_id: 3,
            errno: 0,
            flags: 0,
            rkey: 0,
        };
        let mut b = [0u8; ReadRsp::SIZE];
        let bad = |f: &dyn Fn(&mut [u8; ReadRsp::SIZE])| {
            let mut c = [0u8; ReadRsp::SIZE];
            good.encode(&mut c).unwrap();
            f(&mut c);
            ReadRsp::decode(&c)
        };
        good.encode(&mut b).unwrap();
        assert_eq!(ReadRsp::decode(&b[..11]), Err(Error::MsgSize));
        assert_eq!(
            ReadRsp::decode(&[b.as_slice(), &[0]].concat()),
            Err(Error::MsgSize)
        );
        assert_eq!(bad(&|c| c[0] = 4), Err(Error::Inval)); // an RKEY_RSP
        assert_eq!(
            bad(&|c| c[4..6].copy_from_slice(&1i16.to_le_bytes())),
            Err(Error::Inval)
        );
        assert_eq!(
            bad(&|c| c[4..6].copy_from_slice(&(-4096i16).to_le_bytes())),
            Err(Error::Inval)
        );
        assert!(bad(&|c| c[4..6].copy_from_slice(&(-4095i16).to_le_bytes())).is_ok());
        assert_eq!(bad(&|c| c[6] = 2), Err(Error::Inval));
        assert_eq!(bad(&|c| c[8] = 1), Err(Error::Inval)); // a key without the flag
    }
}
