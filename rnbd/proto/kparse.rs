// SPDX-License-Identifier: GPL-2.0-or-later

//! The kernel `lib/` string helpers that the C RNBD sysfs code parses its
//! input with (`strim`, `sysfs_streq`, `simple_strtol`, `kstrtoull`),
//! reproduced byte for byte so that we accept and reject exactly the same
//! input, quirks included.

use super::error::Error;

/// `isspace()` of the kernel's `_ctype` table (`lib/ctype.c`): `\t`, `\n`,
/// `\v`, `\f`, `\r`, space and 0xa0 (Latin-1 no-break space).
pub(super) const fn is_space(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ' | 0xa0)
}

/// The C string a sysfs `store` sees in `buf`: the bytes before the first NUL.
pub(super) fn c_str(buf: &[u8]) -> &[u8] {
    buf.split(|&b| b == 0).next().unwrap_or_default()
}

/// `strim()` (`strstrip()`): `s` without leading and trailing [`is_space`].
pub(super) fn strim(mut s: &[u8]) -> &[u8] {
    while let [rest @ .., last] = s {
        if !is_space(*last) {
            break;
        }
        s = rest;
    }
    while let [first, rest @ ..] = s {
        if !is_space(*first) {
            break;
        }
        s = rest;
    }
    s
}

/// `sysfs_streq()`: equal, treating a single trailing newline on either side
/// as the end of the string.
pub(super) fn sysfs_streq(a: &[u8], b: &[u8]) -> bool {
    a == b || a.strip_suffix(b"\n") == Some(b) || b.strip_suffix(b"\n") == Some(a)
}

/// `_parse_integer_fixup_radix()` for base 0: the detected base and the
/// length of the `0x` prefix to skip.
fn fixup_radix(s: &[u8]) -> (u32, usize) {
    // The kernel's `_tolower(c)` is `c | 0x20`, which for 'x' is the same as
    // the ASCII lowercase.
    match s {
        [b'0', x, d, ..] if (x | 0x20) == b'x' && d.is_ascii_hexdigit() => (16, 2),
        [b'0', ..] => (8, 0),
        _ => (10, 0),
    }
}

/// `_parse_integer()`: the value of the leading digits of `s` in `base`
/// (wrapped on overflow, as in C), how many digits there were, and whether
/// it overflowed.
fn parse_digits(s: &[u8], base: u32) -> (u64, usize, bool) {
    let base64 = u64::from(base);
    let mut value = 0u64;
    let mut digits = 0usize;
    let mut overflow = false;
    for &c in s {
        let digit = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => break,
        };
        if u32::from(digit) >= base {
            break;
        }
        let digit = u64::from(digit);
        value = match value.checked_mul(base64).and_then(|v| v.checked_add(digit)) {
            Some(v) => v,
            None => {
                overflow = true;
                value.wrapping_mul(base64).wrapping_add(digit)
            }
        };
        digits += 1;
    }
    (value, digits, overflow)
}

/// `simple_strtoull(s, &end, 0)`: the (wrapped) value and how many bytes
/// were consumed, the `0x` prefix included.
fn simple_strtoull(s: &[u8]) -> (u64, usize) {
    let (base, prefix) = fixup_radix(s);
    let (value, digits, _) = parse_digits(s.get(prefix..).unwrap_or_default(), base);
    (value, prefix + digits)
}

/// `simple_strtol(s, &end, 0)`: like [`simple_strtoull`] after an optional
/// `-`, which counts as consumed even when no digit follows (so `"-"` is 0).
fn simple_strtol(s: &[u8]) -> (i64, usize) {
    match s {
        [b'-', rest @ ..] => {
            let (value, used) = simple_strtoull(rest);
            (value.wrapping_neg() as i64, used + 1)
        }
        _ => {
            let (value, used) = simple_strtoull(s);
            (value as i64, used)
        }
    }
}

/// Whether `s` (the rest of an option after `name=`) matches the `%d` of a
/// `match_token()` pattern: `simple_strtol()` must consume all of it.
pub(super) fn matches_int(s: &[u8]) -> bool {
    let (_, used) = simple_strtol(s);
    used != 0 && used == s.len()
}

/// `match_int()` on the argument of a `%d` pattern that matched: at most 23
/// bytes (`NUMBER_BUF_LEN`), and a `long` value that fits an `int`.
pub(super) fn match_int(s: &[u8]) -> Result<i32, Error> {
    const NUMBER_BUF_LEN: usize = 24;
    if s.len() >= NUMBER_BUF_LEN {
        return Err(Error::Range);
    }
    let (value, used) = simple_strtol(s);
    if used == 0 {
        return Err(Error::Inval);
    }
    i32::try_from(value).map_err(|_| Error::Range)
}

/// `kstrtoull(s, 0, &res)` (and `kstrtoul()` on 64-bit): an optional `+`,
/// digits in the detected base, an optional single `\n`, nothing else.
pub(super) fn kstrtoull(s: &[u8]) -> Result<u64, Error> {
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let (base, prefix) = fixup_radix(s);
    let s = s.get(prefix..).unwrap_or_default();
    let (value, digits, overflow) = parse_digits(s, base);
    if overflow {
        return Err(Error::Range);
    }
    if digits == 0 {
        return Err(Error::Inval);
    }
    let rest = s.get(digits..).unwrap_or_default();
    let rest = rest.strip_prefix(b"\n").unwrap_or(rest);
    if rest.is_empty() {
        Ok(value)
    } else {
        Err(Error::Inval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_is_the_kernel_ctype() {
        for b in [b'\t', b'\n', 0x0b, 0x0c, b'\r', b' ', 0xa0] {
            assert!(is_space(b), "{b:#x}");
        }
        for b in [0u8, 0x08, 0x0e, b'a', 0x85, 0x9f, 0xa1, 0xff] {
            assert!(!is_space(b), "{b:#x}");
        }
    }

    #[test]
    fn strim_and_c_str() {
        assert_eq!(strim(b" \t a b \n\xa0"), b"a b");
        assert_eq!(strim(b"   "), b"");
        assert_eq!(strim(b""), b"");
        assert_eq!(c_str(b"ab\0cd"), b"ab");
        assert_eq!(c_str(b"\0"), b"");
        assert_eq!(c_str(b"abc"), b"abc");
    }

    #[test]
    fn sysfs_streq_is_the_kernels() {
        assert!(sysfs_streq(b"1", b"1"));
        assert!(sysfs_streq(b"1\n", b"1"));
        assert!(sysfs_streq(b"1", b"1\n"));
        assert!(sysfs_streq(b"\n", b""));
        assert!(!sysfs_streq(b"1\n\n", b"1"));
        assert!(!sysfs_streq(b" 1", b"1"));
        assert!(!sysfs_streq(b"1 ", b"1"));
        assert!(!sysfs_streq(b"11", b"1"));
        assert!(!sysfs_streq(b"", b"1"));
    }

    #[test]
    fn strtol_quirks() {
        assert_eq!(simple_strtol(b"42"), (42, 2));
        assert_eq!(simple_strtol(b"-1"), (-1, 2));
        // A lone '-' is consumed and reads as 0.
        assert_eq!(simple_strtol(b"-"), (0, 1));
        assert_eq!(simple_strtol(b"0x1f"), (31, 4));
        assert_eq!(simple_strtol(b"0X1F"), (31, 4));
        // "0x" without a hex digit is octal 0 followed by 'x'.
        assert_eq!(simple_strtol(b"0x"), (0, 1));
        assert_eq!(simple_strtol(b"0xg"), (0, 1));
        assert_eq!(simple_strtol(b"017"), (15, 3));
        assert_eq!(simple_strtol(b"08"), (0, 1));
        assert_eq!(simple_strtol(b"+5"), (0, 0));
        assert_eq!(simple_strtol(b""), (0, 0));
        // Overflow wraps: ULLONG_MAX reads as -1.
        assert_eq!(simple_strtol(b"18446744073709551615"), (-1, 20));
        assert_eq!(simple_strtol(b"18446744073709551617"), (1, 20));
    }

    #[test]
    fn match_int_is_the_kernels() {
        assert!(matches_int(b"12"));
        assert!(matches_int(b"-"));
        assert!(!matches_int(b"12x"));
        assert!(!matches_int(b""));
        assert!(!matches_int(b"+1"));
        assert!(!matches_int(b"--1"));
        assert_eq!(match_int(b"12"), Ok(12));
        assert_eq!(match_int(b"-"), Ok(0));
        assert_eq!(match_int(b"-2147483648"), Ok(i32::MIN));
        assert_eq!(match_int(b"2147483647"), Ok(i32::MAX));
        assert_eq!(match_int(b"2147483648"), Err(Error::Range));
        assert_eq!(match_int(b"18446744073709551615"), Ok(-1));
        // 23 bytes fit NUMBER_BUF_LEN, 24 do not.
        assert_eq!(match_int(b"00000000000000000000001"), Ok(1));
        assert_eq!(match_int(b"000000000000000000000001"), Err(Error::Range));
    }

    #[test]
    fn kstrtoull_is_the_kernels() {
        assert_eq!(kstrtoull(b"2048"), Ok(2048));
        assert_eq!(kstrtoull(b"2048\n"), Ok(2048));
        assert_eq!(kstrtoull(b"+2048"), Ok(2048));
        assert_eq!(kstrtoull(b"0x800"), Ok(2048));
        assert_eq!(kstrtoull(b"04000"), Ok(2048));
        assert_eq!(kstrtoull(b"0"), Ok(0));
        assert_eq!(kstrtoull(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(kstrtoull(b"18446744073709551616"), Err(Error::Range));
        assert_eq!(kstrtoull(b"0x1ffffffffffffffff"), Err(Error::Range));
        assert_eq!(kstrtoull(b""), Err(Error::Inval));
        assert_eq!(kstrtoull(b"\n"), Err(Error::Inval));
        assert_eq!(kstrtoull(b"-1"), Err(Error::Inval));
        assert_eq!(kstrtoull(b"++1"), Err(Error::Inval));
        assert_eq!(kstrtoull(b" 1"), Err(Error::Inval));
        assert_eq!(kstrtoull(b"1 "), Err(Error::Inval));
        assert_eq!(kstrtoull(b"1\n\n"), Err(Error::Inval));
        assert_eq!(kstrtoull(b"0x"), Err(Error::Inval));
        assert_eq!(kstrtoull(b"09"), Err(Error::Inval));
    }
}
