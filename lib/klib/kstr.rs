// SPDX-License-Identifier: GPL-2.0-or-later

//! The kernel's string and number parsers of `lib/` that the C RTRS and
//! RNBD sysfs stores, module parameters and `map_device` options use
//! (`kstrtoint()`, `kstrtouint()`, `kstrtoull()`, `sysfs_streq()`,
//! `strim()`, `simple_strtol()`, `match_int()`), reproduced rule for rule,
//! quirks included, so that we accept and reject the same input with the
//! same errno.
//!
//! Inputs are byte slices holding a C string: where a function reads one,
//! the string ends at the first NUL or at the end of the slice, whichever
//! comes first.

use crate::errno::Errno;

/// The C string in `buf`: the bytes before the first NUL.
pub fn c_str(buf: &[u8]) -> &[u8] {
    buf.split(|&b| b == 0).next().unwrap_or_default()
}

/// `isspace()` of the kernel's `_ctype` table (`lib/ctype.c`): `\t`, `\n`,
/// `\v`, `\f`, `\r`, space and 0xa0 (Latin-1 no-break space).
pub const fn is_space(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ' | 0xa0)
}

/// `strim()` (`strstrip()`): `s` without leading and trailing [`is_space`].
pub fn strim(mut s: &[u8]) -> &[u8] {
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

/// `sysfs_streq()`: `a` and `b` are equal as C strings, except that one
/// of them may have a single trailing newline more.
pub fn sysfs_streq(a: &[u8], b: &[u8]) -> bool {
    let (a, b) = (c_str(a), c_str(b));
    a == b || a.strip_suffix(b"\n") == Some(b) || b.strip_suffix(b"\n") == Some(a)
}

/// `_parse_integer_fixup_radix()`: the base (0 detects 8, 10 or 16) and the
/// digits to parse, after a `0x` prefix of base 16.
fn fixup_radix(s: &[u8], base: u32) -> (u32, &[u8]) {
    // The kernel's `_tolower(c)` is `c | 0x20`, which for 'x' is ASCII's.
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

/// `_kstrtoull()`: digits in `base` (0 detects 8, 10 or 16), one optional
/// trailing newline, nothing else. [`Errno::Range`] on overflow, which wins
/// over trailing garbage; [`Errno::Inval`] otherwise.
fn parse_ull(s: &[u8], base: u32) -> Result<u64, Errno> {
    let (base, s) = fixup_radix(s, base);
    let (value, digits, overflow) = parse_digits(s, base);
    if overflow {
        return Err(Errno::Range);
    }
    if digits == 0 {
        return Err(Errno::Inval);
    }
    match s.get(digits..).unwrap_or_default() {
        [] | [b'\n'] => Ok(value),
        _ => Err(Errno::Inval),
    }
}

/// `kstrtoull()`: an unsigned 64-bit number in `base` (0: `0x` prefix for
/// hex, leading `0` for octal, else decimal), with one optional leading `+`
/// and one optional trailing newline. [`Errno::Range`] if it does not fit,
/// [`Errno::Inval`] for anything else.
pub fn kstrtoull(buf: &[u8], base: u32) -> Result<u64, Errno> {
    match c_str(buf) {
        [b'+', rest @ ..] => parse_ull(rest, base),
        s => parse_ull(s, base),
    }
}

/// `kstrtouint()`: [`kstrtoull`] of a number that fits 32 bits.
pub fn kstrtouint(buf: &[u8], base: u32) -> Result<u32, Errno> {
    let v = kstrtoull(buf, base)?;
    u32::try_from(v).map_err(|_| Errno::Range)
}

/// `kstrtoint()`: a signed 32-bit number in `base`, with one optional
/// leading `-` or `+` and one optional trailing newline. [`Errno::Range`]
/// if it does not fit, [`Errno::Inval`] for anything else.
pub fn kstrtoint(buf: &[u8], base: u32) -> Result<i32, Errno> {
    let s = c_str(buf);
    let v: i64 = match s {
        [b'-', rest @ ..] => {
            let m = parse_ull(rest, base)?;
            // (long long)-tmp > 0 is the overflow test of kstrtoll().
            0i64.checked_sub_unsigned(m).ok_or(Errno::Range)?
        }
        _ => i64::try_from(kstrtoull(s, base)?).map_err(|_| Errno::Range)?,
    };
    i32::try_from(v).map_err(|_| Errno::Range)
}

/// `simple_strtoull(s, &end, 0)`: the (wrapped) value and how many bytes
/// were consumed, the `0x` prefix included.
fn simple_strtoull(s: &[u8]) -> (u64, usize) {
    let (base, digits) = fixup_radix(s, 0);
    let prefix = s.len() - digits.len();
    let (value, n, _) = parse_digits(digits, base);
    (value, prefix + n)
}

/// `simple_strtol(s, &end, 0)`: like `simple_strtoull()` after an optional
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
pub fn matches_int(s: &[u8]) -> bool {
    let (_, used) = simple_strtol(s);
    used != 0 && used == s.len()
}

/// `match_int()` on the argument of a `%d` pattern that matched: at most 23
/// bytes (`NUMBER_BUF_LEN`), and a `long` value that fits an `int`.
pub fn match_int(s: &[u8]) -> Result<i32, Errno> {
    const NUMBER_BUF_LEN: usize = 24;
    if s.len() >= NUMBER_BUF_LEN {
        return Err(Errno::Range);
    }
    let (value, used) = simple_strtol(s);
    if used == 0 {
        return Err(Errno::Inval);
    }
    i32::try_from(value).map_err(|_| Errno::Range)
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
        assert_eq!(kstrtoint(b"2147483648", 10), Err(Errno::Range));
        assert_eq!(kstrtoint(b"-2147483649", 10), Err(Errno::Range));
        assert_eq!(kstrtoint(b"99999999999999999999", 10), Err(Errno::Range));
        assert_eq!(kstrtoint(b"99999999999999999999x", 10), Err(Errno::Range));
        assert_eq!(kstrtoint(b"-9223372036854775808", 10), Err(Errno::Range));
        assert_eq!(kstrtoint(b"", 10), Err(Errno::Inval));
        assert_eq!(kstrtoint(b"\n", 10), Err(Errno::Inval));
        assert_eq!(kstrtoint(b"1\n\n", 10), Err(Errno::Inval));
        assert_eq!(kstrtoint(b" 1", 10), Err(Errno::Inval));
        assert_eq!(kstrtoint(b"1 ", 10), Err(Errno::Inval));
        assert_eq!(kstrtoint(b"0x10", 10), Err(Errno::Inval));
        assert_eq!(kstrtoint(b"-+1", 10), Err(Errno::Inval));
        assert_eq!(kstrtoint(b"--1", 10), Err(Errno::Inval));
        assert_eq!(kstrtoint(b"a", 10), Err(Errno::Inval));
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
        assert_eq!(kstrtouint(b"4294967296", 0), Err(Errno::Range));
        assert_eq!(kstrtouint(b"08", 0), Err(Errno::Inval));
        assert_eq!(kstrtouint(b"0x", 0), Err(Errno::Inval));
        assert_eq!(kstrtouint(b"0xg", 0), Err(Errno::Inval));
        assert_eq!(kstrtouint(b"-1", 0), Err(Errno::Inval));
        assert_eq!(kstrtouint(b"eth0", 0), Err(Errno::Inval));
        assert_eq!(kstrtouint(b"ff", 16), Ok(255));
        assert_eq!(kstrtouint(b"0xff", 16), Ok(255));
        assert_eq!(kstrtouint(b"17", 8), Ok(15));
    }

    #[test]
    fn kstrtoull_is_the_kernels() {
        assert_eq!(kstrtoull(b"2048", 0), Ok(2048));
        assert_eq!(kstrtoull(b"2048\n", 0), Ok(2048));
        assert_eq!(kstrtoull(b"+2048", 0), Ok(2048));
        assert_eq!(kstrtoull(b"0x800", 0), Ok(2048));
        assert_eq!(kstrtoull(b"04000", 0), Ok(2048));
        assert_eq!(kstrtoull(b"0", 0), Ok(0));
        assert_eq!(kstrtoull(b"18446744073709551615", 0), Ok(u64::MAX));
        assert_eq!(kstrtoull(b"18446744073709551616", 0), Err(Errno::Range));
        assert_eq!(kstrtoull(b"0x1ffffffffffffffff", 0), Err(Errno::Range));
        assert_eq!(kstrtoull(b"", 0), Err(Errno::Inval));
        assert_eq!(kstrtoull(b"\n", 0), Err(Errno::Inval));
        assert_eq!(kstrtoull(b"-1", 0), Err(Errno::Inval));
        assert_eq!(kstrtoull(b"++1", 0), Err(Errno::Inval));
        assert_eq!(kstrtoull(b" 1", 0), Err(Errno::Inval));
        assert_eq!(kstrtoull(b"1 ", 0), Err(Errno::Inval));
        assert_eq!(kstrtoull(b"1\n\n", 0), Err(Errno::Inval));
        assert_eq!(kstrtoull(b"0x", 0), Err(Errno::Inval));
        assert_eq!(kstrtoull(b"09", 0), Err(Errno::Inval));
    }

    #[test]
    fn sysfs_streq_is_the_kernels() {
        assert!(sysfs_streq(b"1", b"1"));
        assert!(sysfs_streq(b"1\n", b"1"));
        assert!(sysfs_streq(b"1", b"1\n"));
        assert!(sysfs_streq(b"1\0x", b"1"));
        assert!(!sysfs_streq(b"1\n\n", b"1"));
        assert!(!sysfs_streq(b"11", b"1"));
        assert!(!sysfs_streq(b"", b"1"));
        assert!(!sysfs_streq(b" 1", b"1"));
        assert!(!sysfs_streq(b"1 ", b"1"));
        assert!(sysfs_streq(b"", b""));
        assert!(sysfs_streq(b"\n", b""));
    }

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
        assert_eq!(match_int(b"2147483648"), Err(Errno::Range));
        assert_eq!(match_int(b"18446744073709551615"), Ok(-1));
        // 23 bytes fit NUMBER_BUF_LEN, 24 do not.
        assert_eq!(match_int(b"00000000000000000000001"), Ok(1));
        assert_eq!(match_int(b"000000000000000000000001"), Err(Errno::Range));
    }
}
