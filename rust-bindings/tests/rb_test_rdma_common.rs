// SPDX-License-Identifier: GPL-2.0-or-later

//! What the two halves of the rdma_cm/verbs test module share: the port, the
//! handshake, the 32-byte control message and the data pattern.

#![allow(dead_code)]

use core::sync::atomic::AtomicIsize;

/// The port the server listens on.
pub(crate) const PORT: u16 = 18_515 + 1000;
/// Private data of the connect request; anything else is rejected.
pub(crate) const HELLO: &[u8] = b"rb-test-hello";
/// Private data of the accept.
pub(crate) const WELCOME: &[u8] = b"rb-test-welcome";
/// Immediate data of the client's ping.
pub(crate) const IMM_PING: u32 = 0xc0ff_ee01;
/// Immediate data of the client's RDMA write: top byte, length below.
pub(crate) const IMM_WRITTEN: u32 = 0x5a00_0000;
/// Chunks the server registers, and their size.
pub(crate) const NCHUNKS: u32 = 4;
/// Size of one chunk.
pub(crate) const CHUNK: usize = 64 * 1024;
/// Where the client writes (crossing chunk boundaries) and how much.
pub(crate) const WRITE_OFF: usize = 4096;
/// Length of the client's write.
pub(crate) const WRITE_LEN: usize = 160 * 1024;
/// The region the server fills itself (the last chunk) for the client to read.
pub(crate) const SRV_OFF: usize = 3 * CHUNK;
/// Seed of the server's own pattern.
pub(crate) const SRV_SEED: u8 = 7;
/// Seed of the client's pattern.
pub(crate) const CLT_SEED: u8 = 1;
/// Size of a control message.
pub(crate) const MSG: usize = 32;
/// Size of what the server sends from its push pages, and of the client's
/// receive buffers.
pub(crate) const PUSH_LEN: usize = 4096;
/// Seed of push page 0; page 1 has the next seed.
pub(crate) const PUSH_SEED: u8 = 9;
/// Receives kept posted per connection.
pub(crate) const NRECV: usize = 4;

/// Live connection objects of this module; must be 0 at unload.
pub(crate) static LIVE: AtomicIsize = AtomicIsize::new(0);

/// Kinds of control messages.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
pub(crate) enum Kind {
    /// Client: ping (sent with `IMM_PING`).
    Ping = 1,
    /// Server: pong.
    Pong = 2,
    /// Server: where the registered chunks are: `a` rkey, `b` address, `c` length.
    Info = 3,
    /// Server: result of checking the client's write: `a` 0 if equal.
    WriteCheck = 4,
    /// Client: invalidate and re-register the chunks under a new key.
    Rekey = 5,
    /// Client: register push page `a % 2` under a new key and send it
    /// from the registration (`PUSH_LEN` bytes, not a message).
    Push = 6,
}

/// A control message: a kind and three values, little endian.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Msg {
    pub(crate) kind: u32,
    pub(crate) a: u32,
    pub(crate) b: u64,
    pub(crate) c: u64,
}

impl Msg {
    pub(crate) fn new(kind: Kind, a: u32, b: u64, c: u64) -> Self {
        Self {
            kind: kind as u32,
            a,
            b,
            c,
        }
    }

    pub(crate) fn encode(&self) -> [u8; MSG] {
        let mut m = [0u8; MSG];
        m[0..4].copy_from_slice(&self.kind.to_le_bytes());
        m[4..8].copy_from_slice(&self.a.to_le_bytes());
        m[8..16].copy_from_slice(&self.b.to_le_bytes());
        m[16..24].copy_from_slice(&self.c.to_le_bytes());
        m
    }

    pub(crate) fn decode(m: &[u8; MSG]) -> Self {
        let u32_at = |i: usize| u32::from_le_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
        let u64_at = |i: usize| u64::from(u32_at(i)) | (u64::from(u32_at(i + 4)) << 32);
        Self {
            kind: u32_at(0),
            a: u32_at(4),
            b: u64_at(8),
            c: u64_at(16),
        }
    }

    pub(crate) fn is(&self, kind: Kind) -> bool {
        self.kind == kind as u32
    }
}

/// Byte `i` of the pattern with `seed`: varies with every byte and seed.
pub(crate) fn pattern(seed: u8, i: usize) -> u8 {
    let x = (i as u32)
        .wrapping_mul(2_654_435_761)
        .rotate_left(u32::from(seed % 31) + 1);
    (x >> 24) as u8 ^ (x as u8) ^ seed
}
