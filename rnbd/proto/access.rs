// SPDX-License-Identifier: GPL-2.0-or-later

//! The server's open-permission rule for one exported device
//! (`rnbd_srv_check_update_open_perm` in `rnbd-srv.c`): any number of
//! readers, one `rw` writer, and a second writer only with `migration`.

use super::error::Error;
use super::msg::AccessMode;

/// How many sessions have one device open for writing (the C
/// `open_write_cnt` of `struct rnbd_srv_dev`); the caller holds the
/// device's lock around [`OpenPerm::open`] and [`OpenPerm::close`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenPerm {
    writers: u32,
}

impl OpenPerm {
    /// Most writers: a `rw` one and a `migration` one, or two `migration`.
    pub const MAX_WRITERS: u32 = 2;

    /// A device nobody has open.
    pub const fn new() -> Self {
        Self { writers: 0 }
    }

    /// Admits an open in `mode` and counts it: `ro` always; `rw` only if
    /// there is no writer; `migration` if there are fewer than two. `EPERM`
    /// otherwise, and nothing changes. (C's `EINVAL` for an unknown mode
    /// happens in [`AccessMode::from_wire`].)
    pub fn open(&mut self, mode: AccessMode) -> Result<(), Error> {
        let limit = match mode {
            AccessMode::Ro => return Ok(()),
            AccessMode::Rw => 1,
            AccessMode::Migration => Self::MAX_WRITERS,
        };
        if self.writers >= limit {
            return Err(Error::Perm);
        }
        self.writers += 1;
        Ok(())
    }

    /// Forgets an open in `mode` that [`OpenPerm::open`] admitted: a writer
    /// (`rw` or `migration`) is uncounted. Never goes below zero.
    pub fn close(&mut self, mode: AccessMode) {
        if mode.is_write() {
            self.writers = self.writers.saturating_sub(1);
        }
    }

    /// The number of writers.
    pub const fn writers(&self) -> u32 {
        self.writers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AccessMode::{Migration, Ro, Rw};

    #[test]
    fn many_readers() {
        let mut p = OpenPerm::new();
        for _ in 0..100 {
            assert_eq!(p.open(Ro), Ok(()));
        }
        assert_eq!(p.writers(), 0);
        assert_eq!(p.open(Rw), Ok(()));
        assert_eq!(p.open(Ro), Ok(()));
        assert_eq!(p.writers(), 1);
    }

    #[test]
    fn one_rw_writer() {
        let mut p = OpenPerm::new();
        assert_eq!(p.open(Rw), Ok(()));
        assert_eq!(p.open(Rw), Err(Error::Perm));
        assert_eq!(p.open(Rw).unwrap_err().errno(), 1);
        assert_eq!(p.writers(), 1);
        p.close(Rw);
        assert_eq!(p.writers(), 0);
        assert_eq!(p.open(Rw), Ok(()));
    }

    #[test]
    fn migration_allows_a_second_writer() {
        let mut p = OpenPerm::new();
        assert_eq!(p.open(Rw), Ok(()));
        assert_eq!(p.open(Migration), Ok(()));
        assert_eq!(p.writers(), 2);
        assert_eq!(p.open(Migration), Err(Error::Perm));
        assert_eq!(p.open(Rw), Err(Error::Perm));
        assert_eq!(p.open(Ro), Ok(()));
        assert_eq!(p.writers(), 2);
    }

    #[test]
    fn migration_first_then_rw_is_refused() {
        let mut p = OpenPerm::new();
        assert_eq!(p.open(Migration), Ok(()));
        assert_eq!(p.open(Rw), Err(Error::Perm));
        assert_eq!(p.open(Migration), Ok(()));
        assert_eq!(p.writers(), 2);
        p.close(Migration);
        p.close(Migration);
        assert_eq!(p.writers(), 0);
        assert_eq!(p.open(Rw), Ok(()));
    }

    #[test]
    fn close_of_reader_and_underflow() {
        let mut p = OpenPerm::new();
        assert_eq!(p.open(Rw), Ok(()));
        p.close(Ro);
        assert_eq!(p.writers(), 1);
        p.close(Rw);
        p.close(Rw);
        assert_eq!(p.writers(), 0);
        assert_eq!(p, OpenPerm::default());
    }
}
