// SPDX-License-Identifier: GPL-2.0-or-later

//! Names and numbers of a client's mapped devices: the disk name `rnbd<N>`,
//! its minors, and the `<device_id>@<session_name>` link under
//! `/sys/class/rnbd-client/ctl/devices/` (`rnbd-clt.c`, `rnbd-clt-sysfs.c`).

use super::error::Error;
use super::msg::NAME_MAX;

/// Size of a disk name, NUL included (`DISK_NAME_LEN`).
pub const DISK_NAME_LEN: usize = 32;
/// Minor bits per disk, for its partitions (`RNBD_PART_BITS`).
pub const PART_BITS: u32 = 6;
/// Minors per disk.
pub const MINORS: u32 = 1 << PART_BITS;
/// Bits of a minor number (`MINORBITS`).
pub const MINORBITS: u32 = 20;
/// Largest disk index, the `N` of `rnbd<N>` (the C `ida_alloc_max()` bound).
pub const MAX_DISK_INDEX: u32 = (1 << (MINORBITS - PART_BITS)) - 1;

/// The first minor of disk `index`; `None` past [`MAX_DISK_INDEX`].
pub const fn first_minor(index: u32) -> Option<u32> {
    if index > MAX_DISK_INDEX {
        None
    } else {
        Some(index << PART_BITS)
    }
}

/// The name of disk `index`, `rnbd<index>`.
///
/// # Invariants
///
/// `buf[..len]` is ASCII and `len < DISK_NAME_LEN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskName {
    buf: [u8; DISK_NAME_LEN],
    len: usize,
}

impl DiskName {
    /// `rnbd<index>` (the C `snprintf(..., "rnbd%d", idx)`); any `u32` fits.
    pub fn new(index: u32) -> Self {
        let mut buf = [0u8; DISK_NAME_LEN];
        let mut digits = [0u8; 10];
        let mut n_digits = 0;
        let mut rest = index;
        for slot in digits.iter_mut() {
            // `rest % 10` is a digit, so the cast cannot truncate.
            *slot = b'0' + (rest % 10) as u8;
            n_digits += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        let mut len = 0;
        for &b in b"rnbd".iter().chain(digits.iter().take(n_digits).rev()) {
            if let Some(slot) = buf.get_mut(len) {
                *slot = b;
                len += 1;
            }
        }
        // INVARIANT: 4 + at most 10 digits < DISK_NAME_LEN, all ASCII.
        Self { buf, len }
    }

    /// The name, without NUL.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The name with its NUL, for C.
    pub fn as_bytes_with_nul(&self) -> &[u8] {
        self.buf.get(..=self.len).unwrap_or_default()
    }
}

/// Writes to `out` the name of the link in `/sys/class/rnbd-client/ctl/devices/`
/// for device path `pathname` of session `sessname`, NUL-terminated, and
/// returns its length without the NUL (`rnbd_clt_get_path_name`).
///
/// The name is the device path, cut to `NAME_MAX - 1` bytes, with every `/`
/// turned into `!`, then `@` and the session name. `ENAMETOOLONG` if it and
/// its NUL do not fit `out` (C sizes its buffer so that it always does).
pub fn symlink_name(pathname: &[u8], sessname: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    let pathname = pathname.get(..NAME_MAX - 1).unwrap_or(pathname);
    let name = pathname
        .iter()
        .map(|&b| if b == b'/' { b'!' } else { b })
        .chain(core::iter::once(b'@'))
        .chain(sessname.iter().copied())
        .chain(core::iter::once(0));
    let mut len = 0;
    for b in name {
        *out.get_mut(len).ok_or(Error::NameTooLong)? = b;
        len += 1;
    }
    Ok(len.saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(DISK_NAME_LEN, 32);
        assert_eq!(PART_BITS, 6);
        assert_eq!(MINORS, 64);
        assert_eq!(MAX_DISK_INDEX, 16383);
        assert_eq!(first_minor(0), Some(0));
        assert_eq!(first_minor(3), Some(192));
        assert_eq!(first_minor(16383), Some(16383 * 64));
        assert_eq!(first_minor(16384), None);
    }

    #[test]
    fn disk_names() {
        assert_eq!(DiskName::new(0).as_str(), "rnbd0");
        assert_eq!(DiskName::new(7).as_bytes(), b"rnbd7");
        assert_eq!(DiskName::new(10).as_str(), "rnbd10");
        assert_eq!(DiskName::new(16383).as_str(), "rnbd16383");
        assert_eq!(DiskName::new(u32::MAX).as_str(), "rnbd4294967295");
        assert_eq!(DiskName::new(42).as_bytes_with_nul(), b"rnbd42\0");
    }

    #[test]
    fn symlink_names() {
        let mut out = [0xffu8; 64];
        let n = symlink_name(b"/dev/ram0", b"sess", &mut out).unwrap();
        assert_eq!(&out[..=n], b"!dev!ram0@sess\0");
        let n = symlink_name(b"ram0", b"s", &mut out).unwrap();
        assert_eq!(&out[..=n], b"ram0@s\0");
        // Exactly big enough, and one byte short.
        let mut out = [0u8; 7];
        assert_eq!(symlink_name(b"ram0", b"s", &mut out), Ok(6));
        let mut out = [0u8; 6];
        assert_eq!(
            symlink_name(b"ram0", b"s", &mut out),
            Err(Error::NameTooLong)
        );
        assert_eq!(symlink_name(b"", b"", &mut []), Err(Error::NameTooLong));

        // The device path is cut to NAME_MAX - 1 bytes.
        let mut out = [0u8; 300];
        let long = [b'p'; 300];
        let n = symlink_name(&long, b"s", &mut out).unwrap();
        assert_eq!(n, 254 + 2);
        assert_eq!(&out[252..=n], b"pp@s\0");
    }
}
