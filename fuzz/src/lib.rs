// SPDX-License-Identifier: GPL-2.0-or-later

//! Helpers shared by the fuzz targets in `fuzz_targets/`: splitting one
//! input into several text fields, and reference models of the kernel
//! number parsers to check the protocol crates against.

use core::fmt;

/// Splits `data` into `N` fields at `0xff` bytes (a byte no parser gives
/// meaning to); missing fields are empty and the last field takes the rest,
/// `0xff` included. Seeds stay readable: `search\xffsess\xffdev`.
pub fn fields<const N: usize>(data: &[u8]) -> [&[u8]; N] {
    let mut out = [&data[..0]; N];
    let mut rest = data;
    for (i, slot) in out.iter_mut().enumerate() {
        if i + 1 == N {
            *slot = rest;
            break;
        }
        match rest.iter().position(|&b| b == 0xff) {
            Some(p) => {
                *slot = &rest[..p];
                rest = &rest[p + 1..];
            }
            None => {
                *slot = rest;
                rest = &rest[rest.len()..];
            }
        }
    }
    out
}

/// A little-endian number from the first bytes of `b` (zeros past its end).
pub fn le(b: &[u8], n: usize) -> u64 {
    let mut v = 0u64;
    for i in (0..n.min(8)).rev() {
        v = (v << 8) | u64::from(b.get(i).copied().unwrap_or(0));
    }
    v
}

/// The bytes before the first NUL.
pub fn c_str(b: &[u8]) -> &[u8] {
    b.split(|&c| c == 0).next().unwrap_or_default()
}

/// `strim()` with the kernel's `isspace()` (`\t`..=`\r`, space, 0xa0).
pub fn strim(s: &[u8]) -> &[u8] {
    let space = |c: &u8| matches!(c, b'\t'..=b'\r' | b' ' | 0xa0);
    let start = s.iter().position(|c| !space(c)).unwrap_or(s.len());
    let end = s.iter().rposition(|c| !space(c)).map_or(start, |e| e + 1);
    &s[start..end]
}

/// The errors of the reference number parsers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumErr {
    /// `-EINVAL`
    Inval,
    /// `-ERANGE`
    Range,
}

/// Reference `_kstrtoull()` of `lib/kstrtox.c`, written from the C source
/// independently of the crates: base 0 detects `0x` (followed by a hex
/// digit) or a leading `0`; base 16 skips a `0x`; then the longest run of
/// digits, overflow (`-ERANGE`) winning over what follows, no digit
/// `-EINVAL`, then one optional `\n` and nothing else. Bases 0 and 2..=16.
pub fn ref_parse_ull(s: &[u8], base: u32) -> Result<u64, NumErr> {
    assert!(base == 0 || (2..=16).contains(&base));
    let lower = |c: u8| c | 0x20;
    let is_0x = |s: &[u8]| s.len() >= 2 && s[0] == b'0' && lower(s[1]) == b'x';
    let base = match base {
        0 if is_0x(s) && s.len() >= 3 && s[2].is_ascii_hexdigit() => 16,
        0 if s.first() == Some(&b'0') => 8,
        0 => 10,
        b => b,
    };
    let s = if base == 16 && is_0x(s) { &s[2..] } else { s };
    let mut value: u128 = 0;
    let mut overflow = false;
    let mut n = 0;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            _ if (b'a'..=b'f').contains(&lower(c)) => lower(c) - b'a' + 10,
            _ => break,
        };
        if u32::from(d) >= base {
            break;
        }
        if !overflow {
            value = value * u128::from(base) + u128::from(d);
            overflow = value > u128::from(u64::MAX);
        }
        n += 1;
    }
    if overflow {
        return Err(NumErr::Range);
    }
    if n == 0 {
        return Err(NumErr::Inval);
    }
    match &s[n..] {
        b"" | b"\n" => Ok(value as u64),
        _ => Err(NumErr::Inval),
    }
}

/// Reference `kstrtoull()`: one optional `+`, then [`ref_parse_ull`].
pub fn ref_kstrtoull(s: &[u8], base: u32) -> Result<u64, NumErr> {
    ref_parse_ull(s.strip_prefix(b"+").unwrap_or(s), base)
}

/// Reference `kstrtouint()` on a C string.
pub fn ref_kstrtouint(s: &[u8], base: u32) -> Result<u32, NumErr> {
    let v = ref_kstrtoull(c_str(s), base)?;
    u32::try_from(v).map_err(|_| NumErr::Range)
}

/// Reference `kstrtoint()` on a C string (`kstrtoll()` then the `int`
/// check): `-` then digits, where `(long long)-tmp > 0` is `-ERANGE`.
pub fn ref_kstrtoint(s: &[u8], base: u32) -> Result<i32, NumErr> {
    let s = c_str(s);
    let v: i128 = match s.strip_prefix(b"-") {
        Some(rest) => {
            let m = ref_parse_ull(rest, base)?;
            if m > 1u64 << 63 {
                return Err(NumErr::Range);
            }
            -i128::from(m)
        }
        None => {
            let m = ref_kstrtoull(s, base)?;
            if m > i64::MAX as u64 {
                return Err(NumErr::Range);
            }
            i128::from(m)
        }
    };
    i32::try_from(v).map_err(|_| NumErr::Range)
}

/// Formats `v` with its `Display` into a `String`.
pub fn show(v: &dyn fmt::Display) -> String {
    let mut s = String::new();
    fmt::write(&mut s, format_args!("{v}")).expect("Display failed");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_split_at_0xff() {
        assert_eq!(
            fields::<3>(b"a\xffb\xffc\xffd"),
            [&b"a"[..], b"b", b"c\xffd"]
        );
        assert_eq!(fields::<3>(b"a"), [&b"a"[..], b"", b""]);
        assert_eq!(fields::<1>(b"a\xff"), [&b"a\xff"[..]]);
    }

    #[test]
    fn reference_parsers() {
        assert_eq!(ref_kstrtouint(b"0x1f\n", 0), Ok(31));
        assert_eq!(ref_kstrtouint(b"017", 0), Ok(15));
        assert_eq!(ref_kstrtouint(b"08", 0), Err(NumErr::Inval));
        assert_eq!(ref_kstrtouint(b"4294967296", 10), Err(NumErr::Range));
        assert_eq!(ref_kstrtouint(b"0x", 16), Err(NumErr::Inval));
        assert_eq!(ref_kstrtoint(b"-2147483648", 10), Ok(i32::MIN));
        assert_eq!(ref_kstrtoint(b"-2147483649", 10), Err(NumErr::Range));
        assert_eq!(ref_kstrtoint(b"+-1", 10), Err(NumErr::Inval));
        assert_eq!(
            ref_kstrtoull(b"99999999999999999999x", 10),
            Err(NumErr::Range)
        );
        assert_eq!(le(&[1, 2], 4), 0x0201);
    }

    #[test]
    fn oracle_is_the_kernel() {
        assert_eq!(oracle::kstrtouint_c(b"0x1f\n", 0), Ok(31));
        assert_eq!(oracle::kstrtoint_c(b"-2147483649", 10), Err(-34));
        assert_eq!(oracle::kstrtoull_c(b"08", 0), Err(-22));
        let a = oracle::str_to_sockaddr(b"ip:fe80::1%eth0", 1234).unwrap();
        assert_eq!(
            (a.family, a.port, a.scope_id, a.addr[0]),
            (10, 1234, 7, 0xfe)
        );
        let a = oracle::str_to_sockaddr(b"ip:010.001.0.7:80", 1).unwrap();
        assert_eq!((a.family, &a.addr[..4]), (2, &[10, 1, 0, 7][..]));
        assert_eq!(oracle::str_to_sockaddr(b"tcp:1.2.3.4", 1).err(), Some(-93));
        let (rc, m) = oracle::map_options(
            b"sessname=blya path=ip:10.50.100.66 dest_port=7 path=ip:1.1.1.1@ip:2.2.2.2 \
              device_path=/dev/ram0 nr_poll_queues=-1\n",
            4,
        );
        assert_eq!(rc, 0);
        assert_eq!(c_str(&m.sessname), b"blya");
        assert_eq!(c_str(&m.pathname), b"/dev/ram0");
        assert_eq!((m.dest_port, m.access_mode, m.nr_poll_queues), (7, 1, 4));
        assert_eq!(m.path_cnt, 2);
        assert_eq!((m.paths[0].has_src, m.paths[0].dst.port), (0, 1234));
        assert_eq!((m.paths[1].has_src, m.paths[1].dst.port), (1, 7));
        assert_eq!(&m.paths[1].src.addr[..4], &[1, 1, 1, 1]);
        assert_eq!(oracle::map_options(b"sessname=a device_path=b x", 4).0, -22);
        assert_eq!(
            oracle::full_path(b"/run//%SESSNAME%/x\n", b"c", b"//d"),
            (0, Ok(b"/run/c/d".to_vec()))
        );
        assert_eq!(oracle::full_path(b"/dev", b"c", b"a..b"), (0, Err(-22)));
        assert_eq!(oracle::mpath_policy_store(b"MI\n"), Ok(1));
        assert_eq!(oracle::mpath_policy_store(b"Round-Robin junk"), Ok(0));
        assert_eq!(oracle::mpath_policy_store(b"mix"), Err(-22));
        assert_eq!(oracle::max_reconnect_attempts_store(b"-1\n"), Ok(-1));
        assert_eq!(oracle::max_reconnect_attempts_store(b"1e"), Err(-22));
        assert_eq!(oracle::full_path(&[b'a'; 4096], b"c", b"d").0, -22);
    }
}

/// What the address targets share: the interface lookup the parsers are
/// given (`eth0` is index 7) and the checks every parsed address passes.
pub mod addr {
    use core::net::{Ipv4Addr, Ipv6Addr};

    use rtrs_proto::addr::{parse_addr, Addr, PathAddr, SockAddr};

    /// `dev_get_by_name()` stand-in: only `eth0` exists.
    pub fn ifindex(name: &[u8]) -> Option<u32> {
        (name == b"eth0").then_some(7)
    }

    /// A parsed address prints as sysfs shows it and parses back to itself
    /// (less the IPv6 scope, which is not printed).
    pub fn check_reparse(a: &SockAddr) {
        let shown = super::show(&a.addr);
        assert!(shown.len() <= 4 + 39 + 6, "too long: {shown}");
        let again = parse_addr(shown.as_bytes(), a.port, ifindex)
            .unwrap_or_else(|e| panic!("{shown:?} does not parse back: {e:?}"));
        let want = match a.addr {
            Addr::Ipv6 { addr, .. } => Addr::Ipv6 { addr, scope_id: 0 },
            other => other,
        };
        assert_eq!(again.addr, want, "{shown:?}");
        // And the printed form is what std prints for the same address
        // (std's `Display` is RFC 5952, as `%pI6c` is).
        match a.addr {
            Addr::Ipv4(v4) => assert_eq!(shown, format!("ip:{}", Ipv4Addr::from(v4))),
            Addr::Ipv6 { addr, .. } => {
                let std = Ipv6Addr::from(addr);
                // %pI6c prints ISATAP addresses with an IPv4 tail; std
                // prints IPv4-mapped ones that way too.
                let isatap =
                    (addr[8] | 2) == 2 && addr[9] == 0 && addr[10] == 0x5e && addr[11] == 0xfe;
                if !isatap && std.to_ipv4_mapped().is_none() {
                    assert_eq!(shown, format!("ip:{std}"));
                }
            }
            Addr::Gid(_) => assert_eq!(shown.len(), 4 + 39),
        }
    }

    /// Checks a parsed path: the destination has `port`, the source 0, and
    /// both re-parse.
    pub fn check_path(p: &PathAddr, port: u16) {
        assert_eq!(p.dst.port, port);
        check_reparse(&p.dst);
        if let Some(src) = &p.src {
            assert_eq!(src.port, 0);
            check_reparse(src);
        }
        let shown = super::show(p);
        assert!(shown.contains('@'));
    }
}

/// The C oracle: the Linux 6.12 functions listed in `oracle/functions`,
/// extracted from the kernel sources and compiled with `oracle/shim.h` and
/// `oracle/glue.c` by `build.rs`, behind safe wrappers that take Rust byte
/// strings.
pub mod oracle;
