// SPDX-License-Identifier: GPL-2.0-or-later

//! Names of sessions and paths.

use rtrs_proto::msg::NAME_MAX;

/// A session or path name, at most `NAME_MAX - 1` bytes (as the C's
/// `char sessname[NAME_MAX]`).
///
/// # Invariants
///
/// The bytes from `len` on are zero: the name is NUL-terminated.
#[derive(Clone, Copy)]
pub struct NameBuf {
    buf: [u8; NAME_MAX],
    len: usize,
}

impl NameBuf {
    /// An empty name.
    pub fn new() -> Self {
        Self {
            buf: [0; NAME_MAX],
            len: 0,
        }
    }

    /// The name's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Sets it to `s`, cut to fit.
    pub fn set(&mut self, s: &[u8]) {
        self.len = s.len().min(self.buf.len() - 1);
        self.buf[..self.len].copy_from_slice(&s[..self.len]);
        self.buf[self.len..].fill(0);
    }

    /// The name as a C string (for trace events); empty if it holds a NUL.
    pub fn as_cstr(&self) -> &kernel::str::CStr {
        kernel::str::CStr::from_bytes_with_nul(&self.buf[..=self.len]).unwrap_or(kernel::c_str!(""))
    }
}

impl core::fmt::Write for NameBuf {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(self.buf.len() - 1 - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

impl core::fmt::Display for NameBuf {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(core::str::from_utf8(self.as_bytes()).unwrap_or("?"))
    }
}
