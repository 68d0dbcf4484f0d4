// SPDX-License-Identifier: GPL-2.0-or-later

//! RTRS path addresses: parsing `[src@]dst` as sysfs `add_path` and the
//! RNBD `path=` option take them (`rtrs_addr_to_sockaddr()`,
//! `rtrs_str_to_sockaddr()`), and printing them as sysfs, dmesg and the
//! path directory names show them (`sockaddr_to_str()`,
//! `rtrs_addr_to_str()`).
//!
//! An address is `ip:<ipv4|ipv6[%scope]>` or `gid:<gid>`. The text after
//! the prefix goes through re-implementations of the kernel's `in4_pton()`
//! and `in6_pton()` state machines, so that exactly the same strings are
//! accepted, quirks included (e.g. `ip:1.2.3.4:80` is 1.2.3.4, and any
//! number of leading zeros is fine).

use core::fmt;

use super::error::Error;
use klib::kstr::{c_str, kstrtouint};

/// Longest text `inet4_pton()` considers (`INET_ADDRSTRLEN`).
pub const INET_ADDRSTRLEN: usize = 16;
/// Longest text `inet6_pton()` considers (`INET6_ADDRSTRLEN`).
pub const INET6_ADDRSTRLEN: usize = 48;
/// Longest IPv6 scope text looked up: `IFNAMSIZ - 1` bytes.
pub const MAX_SCOPE_LEN: usize = 15;
/// The IB port space of RDMA CM service ids (`RDMA_IB_IP_PS_IB`).
pub const RDMA_IB_IP_PS_IB: u64 = 0x0000_0000_013F_0000;
/// What `sockaddr_to_str()` prints for an unset (`AF_UNSPEC`) address.
pub const INVALID_FAMILY: &str = "<invalid address family>";

/// One end of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addr {
    /// `AF_INET`: an IPv4 address, network byte order.
    Ipv4([u8; 4]),
    /// `AF_INET6`: an IPv6 address, network byte order.
    Ipv6 {
        /// The address.
        addr: [u8; 16],
        /// `sin6_scope_id`: the interface index of a link-local address,
        /// 0 for none.
        scope_id: u32,
    },
    /// `AF_IB`: an InfiniBand GID.
    Gid([u8; 16]),
}

/// An address with its port (`struct sockaddr_storage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SockAddr {
    /// The address.
    pub addr: Addr,
    /// The port; for a GID, the low 16 bits of the service id. 0 for a
    /// source address.
    pub port: u16,
}

impl SockAddr {
    /// The RDMA CM service id of a GID address (`sib_sid`:
    /// `RDMA_IB_IP_PS_IB | port`; its mask is all ones and the pkey
    /// 0xffff).
    pub const fn ib_service_id(&self) -> u64 {
        RDMA_IB_IP_PS_IB | self.port as u64
    }
}

/// The two ends of a path (`struct rtrs_addr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathAddr {
    /// The source, if one was given.
    pub src: Option<SockAddr>,
    /// The destination.
    pub dst: SockAddr,
}

/// A character as `xdigit2bin()` classifies it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// The delimiter, a NUL, or past the end (`IN6PTON_DELIM`).
    End,
    Colon,
    Dot,
    Hex(u8),
    Other,
}

fn classify(c: Option<u8>, delim: u8) -> Tok {
    match c {
        None | Some(0) => Tok::End,
        Some(c) if c == delim => Tok::End,
        Some(b':') => Tok::Colon,
        Some(b'.') => Tok::Dot,
        Some(c @ b'0'..=b'9') => Tok::Hex(c - b'0'),
        Some(c @ b'a'..=b'f') => Tok::Hex(c - b'a' + 10),
        Some(c @ b'A'..=b'F') => Tok::Hex(c - b'A' + 10),
        Some(_) => Tok::Other,
    }
}

/// `in4_pton()`: four decimal bytes separated by dots, ended by `delim`,
/// a NUL, the end of `s` or a colon. Returns the address and the index of
/// the character that ended it.
fn parse_in4(s: &[u8], delim: u8) -> Option<([u8; 4], usize)> {
    let mut out = [0u8; 4];
    let mut n = 0usize;
    let mut byte: Option<u32> = None;
    let mut i = 0usize;
    loop {
        let tok = classify(s.get(i).copied(), delim);
        match tok {
            Tok::Hex(d) if d < 10 => {
                let v = byte.unwrap_or(0) * 10 + u32::from(d);
                if v > 255 {
                    return None;
                }
                byte = Some(v);
            }
            Tok::Dot | Tok::End | Tok::Colon => {
                *out.get_mut(n)? = u8::try_from(byte.take()?).ok()?;
                n += 1;
                if tok != Tok::Dot {
                    return (n == 4).then_some((out, i));
                }
                if n == 4 {
                    return None;
                }
            }
            _ => return None,
        }
        i += 1;
    }
}

// What may come next in `parse_in6()` (the IN6PTON_* state bits).
/// A hex digit.
const HEX: u8 = 1 << 0;
/// A single colon after a word.
const COLON: u8 = 1 << 1;
/// The second colon of `::`.
const COLON2: u8 = 1 << 2;
/// A colon that may be the first of `::`.
const COLON_ANY: u8 = 1 << 3;
/// A dot: the rest is an IPv4 address.
const DOT: u8 = 1 << 4;
/// The end.
const END: u8 = 1 << 5;
const COLONS: u8 = COLON | COLON2 | COLON_ANY;

/// `in6_pton()`: an IPv6 address (or GID) ended by `delim`, a NUL or the
/// end of `s`, possibly with a dotted IPv4 tail. Returns the address and
/// the index of the character that ended it.
fn parse_in6(s: &[u8], delim: u8) -> Option<([u8; 16], usize)> {
    let mut buf = [0u8; 16];
    let mut n = 0usize; // bytes stored in buf
    let mut gap: Option<usize> = None; // where "::" was, in buf
    let mut word_start: Option<usize> = None;
    let mut word = 0u32;
    let mut next = HEX | COLON_ANY;
    let mut have_word = false; // !IN6PTON_NULL
    let mut i = 0usize;
    let end = loop {
        let tok = classify(s.get(i).copied(), delim);
        match tok {
            Tok::Other => return None,
            Tok::End | Tok::Colon => {
                let wanted = if tok == Tok::End { END } else { COLONS };
                if next & wanted == 0 {
                    return None;
                }
                if have_word {
                    buf.get_mut(n..n + 2)?
                        .copy_from_slice(&(word as u16).to_be_bytes());
                    n += 2;
                }
                word = 0;
                if tok == Tok::End {
                    break i;
                }
                have_word = true;
                next = match next & COLONS {
                    COLON2 => {
                        gap = Some(n);
                        have_word = n < buf.len();
                        HEX | END
                    }
                    c if c == COLON | COLON_ANY => HEX | COLON2,
                    COLON => HEX,
                    COLON_ANY => COLON2,
                    _ => 0,
                };
                word_start = Some(i + 1);
            }
            Tok::Dot => {
                if next & DOT == 0 {
                    return None;
                }
                let start = word_start?;
                let (v4, len) = parse_in4(s.get(start..)?, delim)?;
                buf.get_mut(n..n + 4)?.copy_from_slice(&v4);
                n += 4;
                break start + len;
            }
            Tok::Hex(d) => {
                if next & HEX == 0 {
                    return None;
                }
                word = (word << 4) | u32::from(d);
                have_word = true;
                next = COLON | END;
                if word & 0xf000 == 0 {
                    next |= HEX;
                }
                if gap.is_none() && n + 2 < buf.len() {
                    next = (next | COLON_ANY) & !END;
                }
                if n + 2 >= buf.len() {
                    next &= !(COLON | COLON_ANY);
                }
            }
        }
        if (gap.is_some() && n + 4 < buf.len()) || n + 4 == buf.len() {
            next |= DOT;
        }
        if n >= buf.len() {
            next &= !(HEX | COLONS);
        }
        i += 1;
    };
    // Move what followed "::" to the end; zeros fill the gap.
    let mut addr = [0u8; 16];
    let gap = gap.unwrap_or(n);
    let tail = n.checked_sub(gap)?;
    addr.get_mut(..gap)?.copy_from_slice(buf.get(..gap)?);
    addr.get_mut(16 - tail..)?.copy_from_slice(buf.get(gap..n)?);
    Some((addr, end))
}

/// `ipv6_addr_type() & IPV6_ADDR_LINKLOCAL`: fe80::/10 unicast or
/// link-local scoped multicast (ffx2::/16).
fn is_link_local(a: &[u8; 16]) -> bool {
    match a {
        [0xfe, b, ..] => b & 0xc0 == 0x80,
        [0xff, b, ..] => b & 0x0f == 0x02,
        _ => false,
    }
}

/// `inet_pton_with_scope(AF_UNSPEC)` on the text after `ip:`: IPv4 first,
/// then IPv6 with an optional `%scope`. Every failure is [`Error::Inval`].
fn parse_ip(s: &[u8], ifindex: &mut impl FnMut(&[u8]) -> Option<u32>) -> Result<Addr, Error> {
    // inet4_pton(): at most 16 characters, ended by '\n' (or a colon).
    if s.len() <= INET_ADDRSTRLEN {
        if let Some((a, _)) = parse_in4(s, b'\n') {
            return Ok(Addr::Ipv4(a));
        }
    }
    // inet6_pton()
    if s.len() > INET6_ADDRSTRLEN {
        return Err(Error::Inval);
    }
    let (addr, end) = parse_in6(s, b'%').ok_or(Error::Inval)?;
    let mut scope_id = 0;
    if is_link_local(&addr) && s.get(end) == Some(&b'%') {
        let scope = s.get(end + 1..).unwrap_or_default();
        let scope = scope.get(..MAX_SCOPE_LEN).unwrap_or(scope);
        scope_id = match ifindex(scope) {
            Some(index) => index,
            None => kstrtouint(scope, 0).map_err(|_| Error::Inval)?,
        };
    }
    Ok(Addr::Ipv6 { addr, scope_id })
}

/// Parses one address (`rtrs_str_to_sockaddr()`): `gid:<gid>` or
/// `ip:<ipv4|ipv6>`, the string ending at the first NUL or the end of `s`.
///
/// An IPv6 link-local address may carry `%scope`: `ifindex` is asked for
/// the interface of that name first (the C code calls `dev_get_by_name()`
/// in `init_net`), else the scope must be a number (`kstrtouint(s, 0)`).
/// A scope on other addresses is ignored, as in C.
///
/// Errors: [`Error::ProtoNoSupport`] without a known prefix,
/// [`Error::Inval`] for a bad address.
pub fn parse_addr(
    s: &[u8],
    port: u16,
    mut ifindex: impl FnMut(&[u8]) -> Option<u32>,
) -> Result<SockAddr, Error> {
    let s = c_str(s);
    let addr = if let Some(gid) = s.strip_prefix(b"gid:") {
        let (gid, _) = parse_in6(gid, 0).ok_or(Error::Inval)?;
        Addr::Gid(gid)
    } else if let Some(ip) = s.strip_prefix(b"ip:") {
        parse_ip(ip, &mut ifindex)?
    } else {
        return Err(Error::ProtoNoSupport);
    };
    Ok(SockAddr { addr, port })
}

/// Parses a path (`rtrs_addr_to_sockaddr()`): `src,dst`, `src@dst` or
/// just `dst`, the string ending at the first NUL or the end of `s`. The
/// first `,` separates if there is one, else the first `@`. The
/// destination gets `port`, the source port 0.
///
/// Errors: any source error is [`Error::Inval`]; a destination error is
/// that of [`parse_addr`] ([`Error::ProtoNoSupport`] or [`Error::Inval`]),
/// which the RNBD `map_device` store returns as is.
pub fn parse_path(
    s: &[u8],
    port: u16,
    mut ifindex: impl FnMut(&[u8]) -> Option<u32>,
) -> Result<PathAddr, Error> {
    let s = c_str(s);
    let sep = s
        .iter()
        .position(|&c| c == b',')
        .or_else(|| s.iter().position(|&c| c == b'@'));
    let Some(sep) = sep else {
        return Ok(PathAddr {
            src: None,
            dst: parse_addr(s, port, ifindex)?,
        });
    };
    let (src, dst) = (
        s.get(..sep).unwrap_or_default(),
        s.get(sep + 1..).unwrap_or_default(),
    );
    let src = parse_addr(src, 0, &mut ifindex).map_err(|_| Error::Inval)?;
    Ok(PathAddr {
        src: Some(src),
        dst: parse_addr(dst, port, ifindex)?,
    })
}

/// Parses a write to sysfs `add_path` (`add_path_store()`): the path
/// before the first newline, every error being [`Error::Inval`].
///
/// (The C code limits the length to the newline but searches the
/// separator in the whole buffer, so a `,` after the newline would split
/// there; we only look before the newline.)
pub fn parse_add_path(
    buf: &[u8],
    port: u16,
    ifindex: impl FnMut(&[u8]) -> Option<u32>,
) -> Result<PathAddr, Error> {
    let line = buf.split(|&c| c == b'\n').next().unwrap_or_default();
    parse_path(line, port, ifindex).map_err(|_| Error::Inval)
}

/// `%pI4`: dotted decimal.
fn fmt_ipv4(f: &mut dyn fmt::Write, a: &[u8; 4]) -> fmt::Result {
    write!(f, "{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// `%pI6`: eight groups of four lower-case hex digits, no compression.
fn fmt_ipv6_full(f: &mut dyn fmt::Write, a: &[u8; 16]) -> fmt::Result {
    for (i, b) in a.iter().enumerate() {
        if i > 0 && i % 2 == 0 {
            f.write_str(":")?;
        }
        write!(f, "{b:02x}")?;
    }
    Ok(())
}

/// `%pI6c` (`ip6_compressed_string()`): the longest run of two or more
/// zero groups (the first of equal runs) becomes `::`, groups lose leading
/// zeros, and v4-mapped and ISATAP addresses end in dotted IPv4.
fn fmt_ipv6_compressed(f: &mut dyn fmt::Write, a: &[u8; 16]) -> fmt::Result {
    // Index arithmetic, not `chunks_exact`: its runtime divisor leaves a
    // division-by-zero panic path that 6.12's objtool does not know.
    let words: [u16; 8] = core::array::from_fn(|i| u16::from_be_bytes([a[2 * i], a[2 * i + 1]]));
    let v4_mapped = words[..5] == [0; 5] && words[5] == 0xffff;
    let isatap = (a[8] | 0x02) == 0x02 && a[9] == 0 && a[10] == 0x5e && a[11] == 0xfe;
    let use_v4 = v4_mapped || isatap;
    let range = if use_v4 { 6 } else { 8 };
    let words = &words[..range];

    // Longest zero run of length > 1.
    let mut gap: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < range {
        let run = words[i..].iter().take_while(|&&w| w == 0).count();
        let longest = match gap {
            Some((_, len)) => run > len,
            None => run > 1,
        };
        if longest {
            gap = Some((i, run));
        }
        i += run.max(1);
    }

    let mut need_colon = false;
    let mut i = 0;
    while i < range {
        if let Some((_, len)) = gap.filter(|&(start, _)| start == i) {
            // A run never follows a zero group, so this is always "::".
            f.write_str("::")?;
            need_colon = false;
            i += len;
            continue;
        }
        if need_colon {
            f.write_str(":")?;
        }
        write!(f, "{:x}", words[i])?;
        need_colon = true;
        i += 1;
    }
    if use_v4 {
        if need_colon {
            f.write_str(":")?;
        }
        fmt_ipv4(f, &[a[12], a[13], a[14], a[15]])?;
    }
    Ok(())
}

impl fmt::Display for Addr {
    /// As `sockaddr_to_str()`: `ip:1.2.3.4`, `ip:fe80::1` (compressed, no
    /// scope) or `gid:fe80:0000:0000:0000:0002:c903:0010:c0f5` (full).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Addr::Ipv4(a) => {
                f.write_str("ip:")?;
                fmt_ipv4(f, a)
            }
            Addr::Ipv6 { addr, .. } => {
                f.write_str("ip:")?;
                fmt_ipv6_compressed(f, addr)
            }
            Addr::Gid(gid) => {
                f.write_str("gid:")?;
                fmt_ipv6_full(f, gid)
            }
        }
    }
}

impl fmt::Display for SockAddr {
    /// The address as [`Addr`] prints it; the port is not shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.addr, f)
    }
}

/// `sockaddr_to_str()`: writes `addr`, or [`INVALID_FAMILY`] for an unset
/// one.
pub fn write_sockaddr(w: &mut dyn fmt::Write, addr: Option<&Addr>) -> fmt::Result {
    match addr {
        Some(a) => write!(w, "{a}"),
        None => w.write_str(INVALID_FAMILY),
    }
}

/// `rtrs_addr_to_str()`: `src@dst`, the name of a path in dmesg and of its
/// sysfs directory (`paths/<src@dst>`); an unset end prints as
/// [`INVALID_FAMILY`].
pub fn write_path(w: &mut dyn fmt::Write, src: Option<&Addr>, dst: Option<&Addr>) -> fmt::Result {
    write_sockaddr(w, src)?;
    w.write_str("@")?;
    write_sockaddr(w, dst)
}

impl fmt::Display for PathAddr {
    /// As [`write_path`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_path(f, self.src.as_ref().map(|s| &s.addr), Some(&self.dst.addr))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Buf {
        data: [u8; 128],
        len: usize,
    }

    impl Buf {
        fn new() -> Self {
            Buf {
                data: [0; 128],
                len: 0,
            }
        }

        fn as_str(&self) -> &str {
            core::str::from_utf8(&self.data[..self.len]).unwrap()
        }
    }

    impl fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let end = self.len + s.len();
            self.data
                .get_mut(self.len..end)
                .ok_or(fmt::Error)?
                .copy_from_slice(s.as_bytes());
            self.len = end;
            Ok(())
        }
    }

    fn show(d: &dyn fmt::Display) -> Buf {
        let mut b = Buf::new();
        fmt::write(&mut b, format_args!("{d}")).unwrap();
        b
    }

    fn no_if(_: &[u8]) -> Option<u32> {
        None
    }

    fn v4(s: &[u8]) -> Option<[u8; 4]> {
        match parse_addr(s, 0, no_if) {
            Ok(SockAddr {
                addr: Addr::Ipv4(a),
                ..
            }) => Some(a),
            _ => None,
        }
    }

    fn v6(s: &[u8]) -> Option<([u8; 16], u32)> {
        match parse_addr(s, 0, no_if) {
            Ok(SockAddr {
                addr: Addr::Ipv6 { addr, scope_id },
                ..
            }) => Some((addr, scope_id)),
            _ => None,
        }
    }

    fn gid(s: &[u8]) -> Option<[u8; 16]> {
        match parse_addr(s, 0, no_if) {
            Ok(SockAddr {
                addr: Addr::Gid(g), ..
            }) => Some(g),
            _ => None,
        }
    }

    fn ip6(words: [u16; 8]) -> [u8; 16] {
        let mut a = [0u8; 16];
        for (i, w) in words.iter().enumerate() {
            a[2 * i..2 * i + 2].copy_from_slice(&w.to_be_bytes());
        }
        a
    }

    #[test]
    fn ipv4_accepted_like_in4_pton() {
        assert_eq!(v4(b"ip:192.168.1.1"), Some([192, 168, 1, 1]));
        assert_eq!(v4(b"ip:0.0.0.0"), Some([0, 0, 0, 0]));
        assert_eq!(v4(b"ip:255.255.255.255"), Some([255; 4]));
        assert_eq!(v4(b"ip:010.0001.000.7"), Some([10, 1, 0, 7]));
        // Ended by '\n', a colon or a NUL; the rest is ignored.
        assert_eq!(v4(b"ip:1.2.3.4\n"), Some([1, 2, 3, 4]));
        assert_eq!(v4(b"ip:1.2.3.4:80"), Some([1, 2, 3, 4]));
        assert_eq!(v4(b"ip:1.2.3.4\nxyz"), Some([1, 2, 3, 4]));
        assert_eq!(v4(b"ip:1.2.3.4\0xyz"), Some([1, 2, 3, 4]));
        // 16 characters is the limit.
        assert_eq!(v4(b"ip:0001.002.003.004"), Some([1, 2, 3, 4]));
        assert_eq!(v4(b"ip:00001.002.003.004"), None);
    }

    #[test]
    fn ipv4_rejected_like_in4_pton() {
        for s in [
            &b"ip:1.2.3"[..],
            b"ip:1.2.3.4.5",
            b"ip:1.2.3.256",
            b"ip:1..2.3",
            b"ip:.1.2.3",
            b"ip:1.2.3.",
            b"ip:1.2.3.4a",
            b"ip:1.2.3.4 ",
            b"ip:1.2.3.a",
            b"ip: 1.2.3.4",
            b"ip:",
            b"ip:1.2.3.4%1",
        ] {
            assert_eq!(parse_addr(s, 1, no_if), Err(Error::Inval), "{s:?}");
        }
    }

    #[test]
    fn ipv6_accepted_like_in6_pton() {
        let cases: &[(&[u8], [u16; 8])] = &[
            (b"ip:::1", [0, 0, 0, 0, 0, 0, 0, 1]),
            (b"ip:::", [0; 8]),
            (
                b"ip:fe80::200:5aee:feaa:20a2",
                [0xfe80, 0, 0, 0, 0x200, 0x5aee, 0xfeaa, 0x20a2],
            ),
            (b"ip:1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]),
            (b"ip:1::", [1, 0, 0, 0, 0, 0, 0, 0]),
            (b"ip:1:2:3:4:5:6:7::", [1, 2, 3, 4, 5, 6, 7, 0]),
            (b"ip:::2:3:4:5:6:7:8", [0, 2, 3, 4, 5, 6, 7, 8]),
            (b"ip:1::8", [1, 0, 0, 0, 0, 0, 0, 8]),
            (b"ip:1:2::7:8", [1, 2, 0, 0, 0, 0, 7, 8]),
            (b"ip:ABCD::eF01", [0xabcd, 0, 0, 0, 0, 0, 0, 0xef01]),
            (b"ip:0000000000001::", [1, 0, 0, 0, 0, 0, 0, 0]),
            (
                b"ip:::ffff:1.2.3.4",
                [0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304],
            ),
            (
                b"ip:1:2:3:4:5:6:1.2.3.4",
                [1, 2, 3, 4, 5, 6, 0x0102, 0x0304],
            ),
            (b"ip:::1.2.3.4", [0, 0, 0, 0, 0, 0, 0x0102, 0x0304]),
            // A dotted tail may be ended by a colon, like in4_pton().
            (b"ip:::1.2.3.4:9", [0, 0, 0, 0, 0, 0, 0x0102, 0x0304]),
            // A scope on a non-link-local address is ignored.
            (
                b"ip:2001:db8::1%whatever",
                [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1],
            ),
        ];
        for (s, words) in cases {
            assert_eq!(
                v6(s),
                Some((ip6(*words), 0)),
                "{:?}",
                core::str::from_utf8(s)
            );
        }
    }

    #[test]
    fn ipv6_rejected_like_in6_pton() {
        for s in [
            &b"ip:1:2:3:4:5:6:7"[..],
            b"ip:1:2:3:4:5:6:7:8:9",
            b"ip:1::2::3",
            b"ip:1:::2",
            b"ip::1",
            b"ip:1:",
            b"ip:12345::",
            b"ip:1::2:3:4:5:6:7:8",
            b"ip:::g",
            b"ip:1:2:3:4:5:1.2.3.4",
            b"ip:1:2:3:4:5:6:7:1.2.3.4",
            b"ip:::a.2.3.4",
            b"ip:::1.2.3",
            b"ip:fe80::1\n",
            b"ip:fe80::1 ",
            b"ip:[::1]",
            // Longer than INET6_ADDRSTRLEN (49 characters).
            b"ip:::00000000000000000000000000000000000000000000001",
        ] {
            assert_eq!(
                parse_addr(s, 1, no_if),
                Err(Error::Inval),
                "{:?}",
                core::str::from_utf8(s)
            );
        }
        // 48 characters is fine.
        assert_eq!(
            v6(b"ip:::0000000000000000000000000000000000000000000001"),
            Some((ip6([0, 0, 0, 0, 0, 0, 0, 1]), 0))
        );
    }

    #[test]
    fn ipv6_scope_like_inet6_pton() {
        let ll = ip6([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(v6(b"ip:fe80::1%3"), Some((ll, 3)));
        assert_eq!(v6(b"ip:fe80::1%0x10"), Some((ll, 16)));
        assert_eq!(v6(b"ip:fe80::1%010"), Some((ll, 8)));
        assert_eq!(v6(b"ip:fe80::1"), Some((ll, 0)));
        // Name lookup first, then a number.
        let eth = |name: &[u8]| (name == b"eth0").then_some(7);
        let got = parse_addr(b"ip:fe80::1%eth0", 5, eth).unwrap();
        assert_eq!(
            got,
            SockAddr {
                addr: Addr::Ipv6 {
                    addr: ll,
                    scope_id: 7
                },
                port: 5
            }
        );
        assert_eq!(parse_addr(b"ip:fe80::1%eth1", 5, eth), Err(Error::Inval));
        assert_eq!(parse_addr(b"ip:fe80::1%", 5, no_if), Err(Error::Inval));
        assert_eq!(
            parse_addr(b"ip:fe80::1%4294967296", 5, no_if),
            Err(Error::Inval)
        );
        // Only 15 characters of scope are looked at.
        let mut seen = [0u8; 32];
        let mut seen_len = 0;
        let rec = |name: &[u8]| {
            seen[..name.len()].copy_from_slice(name);
            seen_len = name.len();
            None
        };
        assert_eq!(
            parse_addr(b"ip:fe80::1%0000000000000012345", 0, rec).map(|a| a.addr),
            Ok(Addr::Ipv6 {
                addr: ll,
                scope_id: 0o1
            })
        );
        assert_eq!(&seen[..seen_len], b"000000000000001");
        // Link-local multicast takes a scope, global multicast ignores it.
        let mc = ip6([0xff02, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(v6(b"ip:ff02::1%2"), Some((mc, 2)));
        assert_eq!(
            v6(b"ip:ff0e::1%x"),
            Some((ip6([0xff0e, 0, 0, 0, 0, 0, 0, 1]), 0))
        );
        assert_eq!(parse_addr(b"ip:ff02::1%x", 0, no_if), Err(Error::Inval));
        // fe80::/10 includes febf::, not fec0::.
        assert_eq!(parse_addr(b"ip:febf::1%x", 0, no_if), Err(Error::Inval));
        assert!(v6(b"ip:fec0::1%x").is_some());
    }

    #[test]
    fn gid_like_in6_pton_without_scope() {
        assert_eq!(
            gid(b"gid:fe80::200:5aee:feaa:20a2"),
            Some(ip6([0xfe80, 0, 0, 0, 0x200, 0x5aee, 0xfeaa, 0x20a2]))
        );
        assert_eq!(gid(b"gid:::"), Some([0; 16]));
        assert_eq!(
            gid(b"gid:::ffff:10.0.0.1"),
            Some(ip6([0, 0, 0, 0, 0, 0xffff, 0x0a00, 0x0001]))
        );
        for s in [
            &b"gid:fe80::1%1"[..],
            b"gid:",
            b"gid:1.2.3.4",
            b"gid:fe80::1\n",
            b"gid:g::",
        ] {
            assert_eq!(parse_addr(s, 0, no_if), Err(Error::Inval), "{s:?}");
        }
        let a = parse_addr(b"gid:::1", 0x1234, no_if).unwrap();
        assert_eq!(a.port, 0x1234);
        assert_eq!(a.ib_service_id(), 0x013f_1234);
    }

    #[test]
    fn prefixes() {
        for s in [
            &b"1.2.3.4"[..],
            b"",
            b"IP:1.2.3.4",
            b"Gid:::1",
            b"ip",
            b"gid",
            b"ib:::1",
            b"\0ip:1.2.3.4",
        ] {
            assert_eq!(parse_addr(s, 0, no_if), Err(Error::ProtoNoSupport), "{s:?}");
        }
    }

    #[test]
    fn paths_like_rtrs_addr_to_sockaddr() {
        let p = parse_path(b"ip:1.1.1.1@ip:1.1.1.2", 1234, no_if).unwrap();
        assert_eq!(
            p,
            PathAddr {
                src: Some(SockAddr {
                    addr: Addr::Ipv4([1, 1, 1, 1]),
                    port: 0
                }),
                dst: SockAddr {
                    addr: Addr::Ipv4([1, 1, 1, 2]),
                    port: 1234
                },
            }
        );
        assert_eq!(parse_path(b"ip:1.1.1.1,ip:1.1.1.2", 1234, no_if), Ok(p));
        let d = parse_path(b"gid:::1", 7, no_if).unwrap();
        assert_eq!(d.src, None);
        assert_eq!(d.dst.addr, Addr::Gid(ip6([0, 0, 0, 0, 0, 0, 0, 1])));
        assert_eq!(d.dst.port, 7);
        // ',' wins over an earlier '@'.
        assert_eq!(
            parse_path(b"ip:1.1.1.1@x,ip:1.1.1.2", 1, no_if),
            Err(Error::Inval)
        );
        // Source errors are EINVAL, destination errors their own.
        assert_eq!(
            parse_path(b"1.1.1.1@ip:1.1.1.2", 1, no_if),
            Err(Error::Inval)
        );
        assert_eq!(
            parse_path(b"ip:1.1.1.1@1.1.1.2", 1, no_if),
            Err(Error::ProtoNoSupport)
        );
        assert_eq!(parse_path(b"1.1.1.2", 1, no_if), Err(Error::ProtoNoSupport));
        assert_eq!(
            parse_path(b"ip:1.1.1.1@ip:1.1.1.300", 1, no_if),
            Err(Error::Inval)
        );
        assert_eq!(parse_path(b"@ip:1.1.1.2", 1, no_if), Err(Error::Inval));
        assert_eq!(
            parse_path(b"ip:1.1.1.1@", 1, no_if),
            Err(Error::ProtoNoSupport)
        );
        // The ifindex lookup serves both ends.
        let idx = |n: &[u8]| (n == b"ib0").then_some(4);
        let p = parse_path(b"ip:fe80::1%ib0@ip:fe80::2%ib0", 9, idx).unwrap();
        assert!(matches!(
            p.src,
            Some(SockAddr {
                addr: Addr::Ipv6 { scope_id: 4, .. },
                port: 0
            })
        ));
        assert!(matches!(
            p.dst,
            SockAddr {
                addr: Addr::Ipv6 { scope_id: 4, .. },
                port: 9
            }
        ));
    }

    #[test]
    fn add_path_store_input() {
        let p = parse_add_path(b"ip:1.1.1.1@ip:1.1.1.2\n", 1234, no_if).unwrap();
        assert_eq!(p.dst.addr, Addr::Ipv4([1, 1, 1, 2]));
        let p = parse_add_path(b"gid:fe80::1\n", 1234, no_if).unwrap();
        assert_eq!(p.dst.addr, Addr::Gid(ip6([0xfe80, 0, 0, 0, 0, 0, 0, 1])));
        // Every error is EINVAL here.
        assert_eq!(parse_add_path(b"1.1.1.2\n", 1, no_if), Err(Error::Inval));
        assert_eq!(parse_add_path(b"\nip:1.1.1.2", 1, no_if), Err(Error::Inval));
    }

    #[test]
    fn format_like_sockaddr_to_str() {
        let cases: &[(Addr, &str)] = &[
            (Addr::Ipv4([192, 168, 122, 1]), "ip:192.168.122.1"),
            (Addr::Ipv4([0, 0, 0, 0]), "ip:0.0.0.0"),
            (
                Addr::Ipv6 {
                    addr: ip6([0xfe80, 0, 0, 0, 0x200, 0x5aee, 0xfeaa, 0x20a2]),
                    scope_id: 3,
                },
                "ip:fe80::200:5aee:feaa:20a2",
            ),
            (
                Addr::Ipv6 {
                    addr: [0; 16],
                    scope_id: 0,
                },
                "ip:::",
            ),
            (
                Addr::Ipv6 {
                    addr: ip6([0, 0, 0, 0, 0, 0, 0, 1]),
                    scope_id: 0,
                },
                "ip:::1",
            ),
            (
                Addr::Ipv6 {
                    addr: ip6([1, 0, 0, 0, 0, 0, 0, 0]),
                    scope_id: 0,
                },
                "ip:1::",
            ),
            // A single zero group is not compressed.
            (
                Addr::Ipv6 {
                    addr: ip6([1, 0, 2, 3, 4, 5, 6, 7]),
                    scope_id: 0,
                },
                "ip:1:0:2:3:4:5:6:7",
            ),
            // The first of two equal runs.
            (
                Addr::Ipv6 {
                    addr: ip6([1, 0, 0, 2, 0, 0, 3, 4]),
                    scope_id: 0,
                },
                "ip:1::2:0:0:3:4",
            ),
            // The longest run.
            (
                Addr::Ipv6 {
                    addr: ip6([1, 0, 0, 2, 0, 0, 0, 4]),
                    scope_id: 0,
                },
                "ip:1:0:0:2::4",
            ),
            (
                Addr::Ipv6 {
                    addr: ip6([0xabcd, 0x0f, 0xf0, 0x100, 0x1000, 0xffff, 0, 0]),
                    scope_id: 0,
                },
                "ip:abcd:f:f0:100:1000:ffff::",
            ),
            // v4-mapped and ISATAP end in dotted IPv4.
            (
                Addr::Ipv6 {
                    addr: ip6([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]),
                    scope_id: 0,
                },
                "ip:::ffff:1.2.3.4",
            ),
            (
                Addr::Ipv6 {
                    addr: ip6([0xfe80, 0, 0, 0, 0x0200, 0x5efe, 0x0a00, 0x0001]),
                    scope_id: 0,
                },
                "ip:fe80::200:5efe:10.0.0.1",
            ),
            (
                Addr::Ipv6 {
                    addr: ip6([0x2001, 0xdb8, 0, 0, 0, 0x5efe, 0xc000, 0x0201]),
                    scope_id: 0,
                },
                "ip:2001:db8::5efe:192.0.2.1",
            ),
            (
                Addr::Gid(ip6([0xfe80, 0, 0, 0, 0x0002, 0xc903, 0x0010, 0xc0f5])),
                "gid:fe80:0000:0000:0000:0002:c903:0010:c0f5",
            ),
            (
                Addr::Gid([0; 16]),
                "gid:0000:0000:0000:0000:0000:0000:0000:0000",
            ),
        ];
        for (addr, want) in cases {
            assert_eq!(show(addr).as_str(), *want);
            let mut b = Buf::new();
            write_sockaddr(&mut b, Some(addr)).unwrap();
            assert_eq!(b.as_str(), *want);
        }
        let mut b = Buf::new();
        write_sockaddr(&mut b, None).unwrap();
        assert_eq!(b.as_str(), "<invalid address family>");
    }

    #[test]
    fn format_like_rtrs_addr_to_str() {
        let p = parse_path(b"ip:1.1.1.1@ip:1.1.1.2", 1234, no_if).unwrap();
        assert_eq!(show(&p).as_str(), "ip:1.1.1.1@ip:1.1.1.2");
        let p = parse_path(b"ip:192.0.2.2", 1234, no_if).unwrap();
        assert_eq!(show(&p).as_str(), "<invalid address family>@ip:192.0.2.2");
        assert_eq!(show(&p.dst).as_str(), "ip:192.0.2.2");
        let mut b = Buf::new();
        write_path(
            &mut b,
            Some(&Addr::Gid(ip6([0xfe80, 0, 0, 0, 0, 0, 0, 1]))),
            Some(&Addr::Ipv6 {
                addr: ip6([0xfe80, 0, 0, 0, 0, 0, 0, 2]),
                scope_id: 1,
            }),
        )
        .unwrap();
        assert_eq!(
            b.as_str(),
            "gid:fe80:0000:0000:0000:0000:0000:0000:0001@ip:fe80::2"
        );
    }

    #[test]
    fn printed_addresses_parse_back() {
        for s in [
            &b"ip:10.0.0.1"[..],
            b"ip:fe80::1",
            b"ip:::ffff:1.2.3.4",
            b"gid:fe80::2:c903:10:c0f5",
            b"ip:1:0:2:3:4:5:6:7",
        ] {
            let a = parse_addr(s, 0, no_if).unwrap().addr;
            let shown = show(&a);
            let again = parse_addr(shown.as_str().as_bytes(), 0, no_if)
                .unwrap()
                .addr;
            assert_eq!(again, a);
        }
    }

    #[test]
    fn parsers_never_panic() {
        // Every string of up to 4 characters over an alphabet that reaches
        // all branches, behind both prefixes.
        const ALPHA: &[u8] = b"0:.1f%g\n";
        let mut s = [0u8; 32];
        for prefix in [&b"ip:"[..], b"gid:", b"ip:fe80::", b"ip:1:2:3:4:5:6:"] {
            s[..prefix.len()].copy_from_slice(prefix);
            let mut idx = [0usize; 4];
            for total in 0..=4usize {
                let mut n = 0u32;
                loop {
                    for k in 0..total {
                        s[prefix.len() + k] = ALPHA[idx[k]];
                    }
                    let text = &s[..prefix.len() + total];
                    let _ = parse_path(text, 1, no_if);
                    if let Ok(a) = parse_addr(text, 1, |_| Some(1)) {
                        let _ = show(&a);
                    }
                    n += 1;
                    // Next combination.
                    let mut k = 0;
                    while k < total {
                        idx[k] += 1;
                        if idx[k] < ALPHA.len() {
                            break;
                        }
                        idx[k] = 0;
                        k += 1;
                    }
                    if k == total {
                        break;
                    }
                }
                assert!(n >= 1);
            }
        }
    }
}
