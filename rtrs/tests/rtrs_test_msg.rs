// SPDX-License-Identifier: GPL-2.0-or-later

//! The user message of the RTRS API test modules: 24 bytes, little endian,
//! `magic: u32` ([`MAGIC`]), `op: u32` (0 read, 1 write, 2 hold), `offset: u64` on
//! the server's disk, `len: u32` (the IO's data length), `reserved: u32`.

/// The port the test server listens on by default (RNBD's is 1234).
pub(crate) const PORT: u16 = 1235;

/// "RTST".
const MAGIC: u32 = 0x5453_5452;

/// The encoded length.
pub(crate) const LEN: usize = 24;

/// What a message asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// Answer with `len` bytes of the disk at `offset`.
    Read,
    /// Store the IO's data at `offset`.
    Write,
    /// Answer after [`HOLD_MS`], without touching the disk: keeps the
    /// request's chunk in use for that long (`rtrs_test_evil.rs`).
    Hold,
}

/// How long rtrs-test-srv holds a [`Op::Hold`] request.
pub(crate) const HOLD_MS: u32 = 3000;

/// One message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Msg {
    pub(crate) op: Op,
    pub(crate) offset: u64,
    pub(crate) len: u32,
}

impl Msg {
    /// The wire form.
    pub(crate) fn encode(&self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        let op: u32 = match self.op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Hold => 2,
        };
        b[4..8].copy_from_slice(&op.to_le_bytes());
        b[8..16].copy_from_slice(&self.offset.to_le_bytes());
        b[16..20].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    /// Parses `b`: `None` unless it is [`LEN`] bytes with our magic, a
    /// known op and a zero reserved field.
    pub(crate) fn decode(b: &[u8]) -> Option<Self> {
        let b: &[u8; LEN] = b.try_into().ok()?;
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        if u32_at(0) != MAGIC || u32_at(20) != 0 {
            return None;
        }
        let op = match u32_at(4) {
            0 => Op::Read,
            1 => Op::Write,
            2 => Op::Hold,
            _ => return None,
        };
        let mut off = [0u8; 8];
        off.copy_from_slice(&b[8..16]);
        Some(Self {
            op,
            offset: u64::from_le_bytes(off),
            len: u32_at(16),
        })
    }
}
