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
    /// The minor version the path runs: 0, or 1 for 2.1.
    pub minor: u8,
    /// The server answers [`super::imm::Imm::Fence`].
    pub fence: bool,
    /// The server answers READs with a [`ReadRsp`].
    pub read_rsp: bool,
}

impl Ext {
    /// What a path runs whose server answered CON_RSP's `version` and
    /// `flags` (flags of 2.1 mean nothing in 2.0).
    pub const fn negotiated(version: u16, flags: u32) -> Ext {
        if version >> 8 == PROTO_VER_MAJOR && version & 0xff >= 1 {
            Ext {
                minor: 1,
                fence: flags & MSG_FENCE_F != 0,
                read_rsp: flags & MSG_READ_RSP_F != 0,
            }
        } else {
            Ext {
                minor: 0,
                fence: false,
                read_rsp: false,
            }
        }
    }

    /// The path's protocol as a sysfs file shows it: the version, then
    /// the 2.1 features it uses (`2.0`, `2.1 fence read_rsp`).
    pub const fn sysfs_str(&self) -> &'static str {
        match (self.minor, self.fence, self.read_rsp) {
            (0, _, _) => "2.0",
            (_, false, false) => "2.1",
            (_, true, false) => "2.1 fence",
            (_, false, true) => "2.1 read_rsp",
            (_, true, true) => "2.1 fence read_rsp",
        }
    }

    /// The same for a log line.
    pub const fn log_str(&self) -> &'static str {
        match (self.minor, self.fence, self.read_rsp) {
            (0, _, _) => "RTRS 2.0",
            (_, false, false) => "RTRS 2.1",
            (_, true, false) => "RTRS 2.1 with fences",
            (_, false, true) => "RTRS 2.1 with read responses",
            (_, true, true) => "RTRS 2.1 with fences and read responses",
        }
    }
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
    if enabled {
        Ext::negotiated(version, flags)
    } else {
        Ext::negotiated(super::msg::PROTO_VER, 0)
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
    /// `EIO`.
    const EIO: i16 = 5;

    /// The server's answer to READ `msg_id` that ended with `errno` (0 or
    /// a negative errno; a positive one or one past `MAX_ERRNO` goes as
    /// -EIO), with the chunk's new key `rkey` if it re-registered it.
    pub fn new(msg_id: u16, errno: i32, rkey: Option<u32>) -> Self {
        let errno = match i16::try_from(errno) {
            Ok(e) if (-Self::MAX_ERRNO..=0).contains(&e) => e,
            _ => -Self::EIO,
        };
        ReadRsp {
            msg_id,
            errno,
            flags: if rkey.is_some() {
                READ_RSP_NEW_RKEY_F
            } else {
                0
            },
            rkey: rkey.unwrap_or(0),
        }
    }

    /// Checks a decoded answer against the client's requests, as the
    /// client must before it completes one: the path's `queue_depth`
    /// requests, what `slot` says of request `msg_id`, `new_rkey` if the
    /// server re-registers its chunks (CON_RSP's `MSG_NEW_RKEY_F`), and
    /// `inval`, the key the SEND_WITH_INV invalidated, if it did. Returns
    /// whether the server invalidated the request's registration, so the
    /// client need not.
    pub fn check(
        &self,
        queue_depth: u32,
        new_rkey: bool,
        inval: Option<u32>,
        slot: impl FnOnce(u16) -> Slot,
    ) -> Result<bool, ReadRspFault> {
        if u32::from(self.msg_id) >= queue_depth {
            return Err(ReadRspFault::NoSuchRequest);
        }
        if (self.flags & READ_RSP_NEW_RKEY_F != 0) != new_rkey {
            return Err(ReadRspFault::Rkey);
        }
        let key = match slot(self.msg_id) {
            Slot::Idle => return Err(ReadRspFault::NotInFlight),
            Slot::Write => return Err(ReadRspFault::NotARead),
            Slot::Read { key } => key,
        };
        match (inval, key) {
            (None, _) => Ok(false),
            (Some(i), Some(k)) if i == k => Ok(true),
            (Some(_), _) => Err(ReadRspFault::Inval),
        }
    }

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

/// What the client has in the request slot a [`ReadRsp`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// No IO is waiting for an answer there: none, or one already
    /// answered.
    Idle,
    /// A WRITE waits for its answer (an IMM, as in 2.0).
    Write,
    /// A READ waits for its answer; `key` is the key of its registered
    /// pages, which the server may invalidate with the answer.
    Read {
        /// The key of the registration, if the READ registered pages.
        key: Option<u32>,
    },
}

/// Why a client refuses a [`ReadRsp`] that decoded well: each closes the
/// path, since the server answered what it was not asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadRspFault {
    /// `msg_id` is past the path's requests.
    NoSuchRequest,
    /// No IO waits for an answer in that slot.
    NotInFlight,
    /// The IO there is a WRITE.
    NotARead,
    /// A new key where the server does not re-register its chunks, or
    /// none where it does.
    Rkey,
    /// It invalidated a key that is not the READ's registration.
    Inval,
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
                minor: 1,
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
        assert_eq!(
            client_ext(PROTO_VER_EXT, 0, true),
            Ext {
                minor: 1,
                ..Ext::default()
            }
        );
        // A server offers only what it does, and a C flag passes by.
        assert_eq!(
            server_answer(PROTO_VER_EXT, true, MSG_FENCE_F | 1 << 1),
            (PROTO_VER_EXT, MSG_FENCE_F)
        );
        assert_eq!(
            client_ext(PROTO_VER_EXT, MSG_FENCE_F, true),
            Ext {
                minor: 1,
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

    #[test]
    fn what_paths_show() {
        let ext = |v, f| Ext::negotiated(v, f).sysfs_str();
        assert_eq!(ext(PROTO_VER, ALL), "2.0");
        assert_eq!(ext(PROTO_VER_EXT, 0), "2.1");
        assert_eq!(ext(PROTO_VER_EXT, MSG_FENCE_F), "2.1 fence");
        assert_eq!(ext(PROTO_VER_EXT, MSG_READ_RSP_F), "2.1 read_rsp");
        assert_eq!(ext(PROTO_VER_EXT, ALL), "2.1 fence read_rsp");
        assert_eq!(Ext::default().log_str(), "RTRS 2.0");
        assert_eq!(
            Ext::negotiated(PROTO_VER_EXT, ALL).log_str(),
            "RTRS 2.1 with fences and read responses"
        );
    }

    #[test]
    fn read_rsp_new_keeps_errno_in_range() {
        assert_eq!(ReadRsp::new(7, 0, None).errno, 0);
        assert_eq!(ReadRsp::new(7, -5, None).errno, -5);
        assert_eq!(ReadRsp::new(7, -4095, None).errno, -4095);
        assert_eq!(ReadRsp::new(7, -4096, None).errno, -5);
        assert_eq!(ReadRsp::new(7, 5, None).errno, -5);
        assert_eq!(ReadRsp::new(7, i32::MIN, None).errno, -5);
        let k = ReadRsp::new(7, 0, Some(0xabcd));
        assert_eq!((k.flags, k.rkey), (READ_RSP_NEW_RKEY_F, 0xabcd));
        // What the server makes, the client takes.
        let mut b = [0u8; ReadRsp::SIZE];
        for r in [ReadRsp::new(1, -4096, None), k] {
            r.encode(&mut b).unwrap();
            assert_eq!(ReadRsp::decode(&b), Ok(r));
        }
    }

    #[test]
    fn read_rsp_checked_against_the_requests() {
        let read = |key| move |_| Slot::Read { key };
        let rsp = ReadRsp::new(3, 0, None);
        // A READ without pages, and one whose key the server invalidated.
        assert_eq!(rsp.check(4, false, None, read(None)), Ok(false));
        assert_eq!(rsp.check(4, false, None, read(Some(9))), Ok(false));
        assert_eq!(rsp.check(4, false, Some(9), read(Some(9))), Ok(true));
        // Past the requests, before the slot is looked at.
        assert_eq!(
            rsp.check(3, false, None, |_| unreachable!()),
            Err(ReadRspFault::NoSuchRequest)
        );
        assert_eq!(
            rsp.check(4, false, None, |_| Slot::Idle),
            Err(ReadRspFault::NotInFlight)
        );
        assert_eq!(
            rsp.check(4, false, None, |_| Slot::Write),
            Err(ReadRspFault::NotARead)
        );
        // Another key invalidated, or one where nothing was registered.
        assert_eq!(
            rsp.check(4, false, Some(8), read(Some(9))),
            Err(ReadRspFault::Inval)
        );
        assert_eq!(
            rsp.check(4, false, Some(8), read(None)),
            Err(ReadRspFault::Inval)
        );
        // A new key exactly when the server re-registers its chunks.
        assert_eq!(
            rsp.check(4, true, None, read(None)),
            Err(ReadRspFault::Rkey)
        );
        let k = ReadRsp::new(3, -5, Some(1));
        assert_eq!(k.check(4, true, None, read(None)), Ok(false));
        assert_eq!(k.check(4, false, None, read(None)), Err(ReadRspFault::Rkey));
    }
}
