// SPDX-License-Identifier: GPL-2.0-or-later

//! Sequence-stamped 4 KiB blocks, and the verdict on what a block holds
//! against what its writer was told.
//!
//! fio's verify proves a block holds *a* version it wrote; it cannot tell an
//! older version from the last one. A stamp can: each write of a block
//! carries the writer's next sequence number, so a block that reads back
//! with a stamp below the last one acknowledged was overwritten by a write
//! that completed earlier, which is the stale write a failover must never
//! let land.

/// The size of a stamped block: the device's IO unit here.
pub const BLOCK: usize = 4096;

const MAGIC: &[u8; 8] = b"RTRSSTMP";
const SUM_AT: usize = BLOCK - 8;

/// What one write put in a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// The block's index on the device (in 4 KiB blocks).
    pub block: u64,
    /// The run of writers this write belongs to: an earlier run's blocks
    /// never pass for this one's.
    pub run: u64,
    /// The writer's sequence number of this write, from 1.
    pub seq: u64,
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn put(buf: &mut [u8], at: usize, v: u64) {
    buf[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}

impl Stamp {
    /// Fills `buf` (one block) with this stamp: a header, a filling that
    /// depends on every field of it, and a checksum of both.
    pub fn fill(&self, buf: &mut [u8]) {
        assert_eq!(buf.len(), BLOCK);
        buf[..8].copy_from_slice(MAGIC);
        put(buf, 8, self.block);
        put(buf, 16, self.run);
        put(buf, 24, self.seq);
        // xorshift64 from the fields: two writes of a block differ in
        // every word, so a torn block cannot pass the checksum by luck.
        let mut x =
            self.block.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ self.run.rotate_left(17) ^ self.seq
                | 1;
        for at in (32..SUM_AT).step_by(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            put(buf, at, x);
        }
        let sum = fnv1a(&buf[..SUM_AT]);
        put(buf, SUM_AT, sum);
    }

    /// The stamp a block holds, or why it holds none.
    pub fn parse(buf: &[u8]) -> Result<Stamp, Unstamped> {
        if buf.len() != BLOCK {
            return Err(Unstamped::Corrupt);
        }
        if buf.iter().all(|&b| b == 0) {
            return Err(Unstamped::Zeroes);
        }
        if &buf[..8] != MAGIC || fnv1a(&buf[..SUM_AT]) != get(buf, SUM_AT) {
            return Err(Unstamped::Corrupt);
        }
        let s = Stamp {
            block: get(buf, 8),
            run: get(buf, 16),
            seq: get(buf, 24),
        };
        let mut expect = vec![0u8; BLOCK];
        s.fill(&mut expect);
        if expect != buf {
            return Err(Unstamped::Corrupt);
        }
        Ok(s)
    }
}

/// A block that holds no valid stamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unstamped {
    /// All zeroes: never written.
    Zeroes,
    /// Anything else: not a block any writer wrote whole.
    Corrupt,
}

/// What a writer was told of one block: the stamp of the last write that
/// completed (0 if none did), and the stamps of the writes after it that
/// returned an error (which may or may not have reached the disk).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Told {
    /// The last acknowledged stamp, 0 for none.
    pub acked: u64,
    /// Writes after it that failed, in order.
    pub failed: Vec<u64>,
}

impl Told {
    /// Records the outcome of the write of stamp `seq` (later than every
    /// one recorded before).
    pub fn record(&mut self, seq: u64, ok: bool) {
        if ok {
            self.acked = seq;
            self.failed.clear();
        } else {
            self.failed.push(seq);
        }
    }
}

/// The verdict on one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It holds the last acknowledged stamp.
    Last,
    /// It holds a later write that returned an error: allowed, the error
    /// said nothing of whether the data got there.
    LaterFailed,
    /// Never acknowledged and never written: allowed.
    Unwritten,
    /// An older stamp than the last acknowledged: a write that completed
    /// was undone by one that landed after it.
    Stale,
    /// Not what any write of this block put there (another block's, another
    /// run's, a stamp never written, torn or zeroes after an ack).
    Wrong,
}

impl Verdict {
    /// Whether the block holds what the writer may find there.
    pub fn good(self) -> bool {
        matches!(
            self,
            Verdict::Last | Verdict::LaterFailed | Verdict::Unwritten
        )
    }
}

/// Judges what block `block` holds (`read`) against what its writer of run
/// `run` was told.
pub fn judge(block: u64, run: u64, told: &Told, read: Result<Stamp, Unstamped>) -> Verdict {
    match read {
        Err(Unstamped::Zeroes) if told.acked == 0 => Verdict::Unwritten,
        Err(_) => Verdict::Wrong,
        Ok(s) if s.block != block || s.run != run => Verdict::Wrong,
        Ok(s) if s.seq == told.acked => Verdict::Last,
        Ok(s) if s.seq < told.acked => Verdict::Stale,
        Ok(s) if told.failed.contains(&s.seq) => Verdict::LaterFailed,
        Ok(_) => Verdict::Wrong,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_of(s: Stamp) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK];
        s.fill(&mut b);
        b
    }

    #[test]
    fn a_stamp_reads_back() {
        let s = Stamp {
            block: 7,
            run: 99,
            seq: 12,
        };
        assert_eq!(Stamp::parse(&block_of(s)), Ok(s));
    }

    #[test]
    fn a_changed_byte_or_mixed_halves_are_corrupt() {
        let s = Stamp {
            block: 7,
            run: 99,
            seq: 12,
        };
        let mut b = block_of(s);
        b[2000] ^= 1;
        assert_eq!(Stamp::parse(&b), Err(Unstamped::Corrupt));
        let mut torn = block_of(s);
        torn[2048..].copy_from_slice(&block_of(Stamp { seq: 13, ..s })[2048..]);
        assert_eq!(Stamp::parse(&torn), Err(Unstamped::Corrupt));
        assert_eq!(Stamp::parse(&vec![0u8; BLOCK]), Err(Unstamped::Zeroes));
    }

    #[test]
    fn verdicts() {
        let mut t = Told::default();
        assert_eq!(judge(3, 1, &t, Err(Unstamped::Zeroes)), Verdict::Unwritten);
        t.record(5, true);
        t.record(6, false);
        let at = |seq| {
            Ok(Stamp {
                block: 3,
                run: 1,
                seq,
            })
        };
        assert_eq!(judge(3, 1, &t, at(5)), Verdict::Last);
        assert_eq!(judge(3, 1, &t, at(6)), Verdict::LaterFailed);
        assert_eq!(judge(3, 1, &t, at(4)), Verdict::Stale);
        assert_eq!(judge(3, 1, &t, at(7)), Verdict::Wrong);
        assert_eq!(judge(3, 2, &t, at(5)), Verdict::Wrong);
        assert_eq!(
            judge(
                4,
                1,
                &t,
                Ok(Stamp {
                    block: 3,
                    run: 1,
                    seq: 5
                })
            ),
            Verdict::Wrong
        );
        assert_eq!(judge(3, 1, &t, Err(Unstamped::Zeroes)), Verdict::Wrong);
        t.record(7, true);
        assert_eq!(judge(3, 1, &t, at(6)), Verdict::Stale);
        assert!(!Verdict::Stale.good() && Verdict::LaterFailed.good());
    }
}
