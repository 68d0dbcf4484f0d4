// SPDX-License-Identifier: GPL-2.0-or-later

//! The kernel string helpers the C RTRS sysfs stores use (`kstrtoint()`,
//! `kstrtouint()`, `sysfs_streq()` of `lib/`), reproduced rule for rule so
//! that we accept and reject the same input with the same errno.
//!
//! Inputs are byte slices holding a C string: the string ends at the first
//! NUL or at the end of the slice, whichever comes first.

use super::error::Error;

/// The C string in `buf`: the bytes before the first NUL.
pub fn c_str(buf: &[u8]) -> &[u8] {
    buf.split(|&b| b == 0).next().unwrap_or_default()
}

/// `_parse_integer_fixup_radix()`: the base and the digits to parse.
fn fixup_radix(s: &[u8], base: u32) -> (u32, &[u8]) {
    let base = match (base, s) {
        (0, [b'0', x, d, ..]) if x.eq_ignore_ascii_case(&b'x') && d.is_ascii_hexdigit() => 16,
        (0, [b'0', ..]) => 8,
        (0, _) => 10,
        (b, _) => b,
    };
    let s = match s {
        [b'0', x, rest @ ..] if base == 16 && x.eq_ignore_ascii_case(&b'x') => rest,
        _ => s,
    };
    (base, s)
}

/// `_kstrtoull()`: digits in `base` (0 detects 8, 10 or 16), one
/// optional trailing newline, nothing else. [`Error::Range`] on overflow,
/// which wins over trailing garbage; [`Error::Inval`] otherwise.
fn parse_ull(s: &[u8], base: u32) -> Result<u64, Error> {
    let (base, s) = fixup_radix(s, base);
    let mut value = 0u64;
    let mut overflow = false;
    let mut digits = 0usize;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'a'..=b'f' => u32::from(c - b'a') + 10,
            b'A'..=b'F' => u32::from(c - b'A') + 10,
            _ => break,
        };
        if d >= base {
            break;
        }
        match value
            .checked_mul(u64::from(base))
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            None => {
                overflow = true;
                value = value
                    .wrapping_mul(u64::from(base))
                    .wrapping_add(u64::from(d));
            }
        }
        digits += 1;
    }
    if overflow {
        return Err(Error::Range);
    }
    if digits == 0 {
        return Err(Error::Inval);
    }
    match s.get(digits..).unwrap_or_default() {
        [] | [b'\n'] => Ok(value),
        _ => Err(Error::Inval),
    }
}

/// `kstrtoull()`: as `_kstrtoull()` after one optional `+`.
fn kstrtoull(s: &[u8], base: u32) -> Result<u64, Error> {
    match s {
        [b'+', rest @ ..] => parse_ull(rest, base),
        _ => parse_ull(s, base),
    }
}

/// `kstrtouint()`: an unsigned 32-bit number in `base` (0: `0x` prefix
/// for hex, leading `0` for octal, else decimal), with one optional
/// leading `+` and one optional trailing newline. [`Error::Range`] if it
/// does not fit, [`Error::Inval`] for anything else.
pub fn kstrtouint(buf: &[u8], base: u32) -> Result<u32, Error> {
    let v = kstrtoull(c_str(buf), base)?;
    u32::try_from(v).map_err(|_| Error::Range)
}

/// `kstrtoint()`: a signed 32-bit number in `base`, with one optional
/// leading `-` or `+` and one optional trailing newline. [`Error::Range`]
/// if it does not fit, [`Error::Inval`] for anything else.
pub fn kstrtoint(buf: &[u8], base: u32) -> Result<i32, Error> {
    let s = c_str(buf);
    let v: i64 = match s {
        [b'-', rest @ ..] => {
            let m = parse_ull(rest, base)?;
            // (long long)-tmp > 0 is the overflow test of kstrtoll().
            0i64.checked_sub_unsigned(m).ok_or(Error::Range)?
        }
        _ => i64::try_from(kstrtoull(s, base)?).map_err(|_| Error::Range)?,
    };
    i32::try_from(v).map_err(|_| Error::Range)
}

/// `sysfs_streq()`: `a` and `b` are equal as C strings, except that one
/// of them may have a single trailing newline more.
pub fn sysfs_streq(a: &[u8], b: &[u8]) -> bool {
    let (a, b) = (c_str(a), c_str(b));
    a == b || a.strip_suffix(b"\n") == Some(b) || b.strip_suffix(b"\n") == Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kstrtoint_base_10() {
        assert_eq!(kstrtoint(b"0", 10), Ok(0));
        assert_eq!(kstrtoint(b"12\n", 10), Ok(12));
        assert_eq!(kstrtoint(b"+7", 10), Ok(7));
        assert_eq!(kstrtoint(b"-1", 10), Ok(-1));
        assert_eq!(kstrtoint(b"-0", 10), Ok(0));
        assert_eq!(kstrtoint(b"007", 10), Ok(7));
        assert_eq!(kstrtoint(b"2147483647", 10), Ok(i32::MAX));
        assert_eq!(kstrtoint(b"-2147483648", 10), Ok(i32::MIN));
        assert_eq!(kstrtoint(b"2147483648", 10), Err(Error::Range));
        assert_eq!(kstrtoint(b"-2147483649", 10), Err(Error::Range));
        assert_eq!(kstrtoint(b"99999999999999999999", 10), Err(Error::Range));
        assert_eq!(kstrtoint(b"99999999999999999999x", 10), Err(Error::Range));
        assert_eq!(kstrtoint(b"-9223372036854775808", 10), Err(Error::Range));
        assert_eq!(kstrtoint(b"", 10), Err(Error::Inval));
        assert_eq!(kstrtoint(b"\n", 10), Err(Error::Inval));
        assert_eq!(kstrtoint(b"1\n\n", 10), Err(Error::Inval));
        assert_eq!(kstrtoint(b" 1", 10), Err(Error::Inval));
        assert_eq!(kstrtoint(b"1 ", 10), Err(Error::Inval));
        assert_eq!(kstrtoint(b"0x10", 10), Err(Error::Inval));
        assert_eq!(kstrtoint(b"-+1", 10), Err(Error::Inval));
        assert_eq!(kstrtoint(b"--1", 10), Err(Error::Inval));
        assert_eq!(kstrtoint(b"a", 10), Err(Error::Inval));
        // The string ends at a NUL.
        assert_eq!(kstrtoint(b"5\0junk", 10), Ok(5));
    }

    #[test]
    fn kstrtouint_base_0() {
        assert_eq!(kstrtouint(b"10", 0), Ok(10));
        assert_eq!(kstrtouint(b"010", 0), Ok(8));
        assert_eq!(kstrtouint(b"0x1F", 0), Ok(31));
        assert_eq!(kstrtouint(b"0X1f\n", 0), Ok(31));
        assert_eq!(kstrtouint(b"0", 0), Ok(0));
        assert_eq!(kstrtouint(b"+3", 0), Ok(3));
        assert_eq!(kstrtouint(b"4294967295", 0), Ok(u32::MAX));
        assert_eq!(kstrtouint(b"4294967296", 0), Err(Error::Range));
        assert_eq!(kstrtouint(b"08", 0), Err(Error::Inval));
        assert_eq!(kstrtouint(b"0x", 0), Err(Error::Inval));
        assert_eq!(kstrtouint(b"0xg", 0), Err(Error::Inval));
        assert_eq!(kstrtouint(b"-1", 0), Err(Error::Inval));
        assert_eq!(kstrtouint(b"eth0", 0), Err(Error::Inval));
        assert_eq!(kstrtouint(b"ff", 16), Ok(255));
        assert_eq!(kstrtouint(b"0xff", 16), Ok(255));
        assert_eq!(kstrtouint(b"17", 8), Ok(15));
    }

    #[test]
    fn sysfs_streq_rules() {
        assert!(sysfs_streq(b"1", b"1"));
        assert!(sysfs_streq(b"1\n", b"1"));
        assert!(sysfs_streq(b"1", b"1\n"));
        assert!(sysfs_streq(b"1\0x", b"1"));
        assert!(!sysfs_streq(b"1\n\n", b"1"));
        assert!(!sysfs_streq(b"11", b"1"));
        assert!(!sysfs_streq(b"", b"1"));
        assert!(!sysfs_streq(b" 1", b"1"));
        assert!(sysfs_streq(b"", b""));
        assert!(sysfs_streq(b"\n", b""));
    }
}
