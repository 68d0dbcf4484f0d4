// SPDX-License-Identifier: GPL-2.0-or-later

//! Parsers for what is written to the writable RNBD sysfs attributes: the
//! client's `map_device`, `unmap_device`, `remap_device` and `resize`, and
//! the server's `force_close`.
//!
//! They take the raw bytes of the `store` and accept and reject exactly what
//! the C code (`rnbd-clt-sysfs.c`, `rnbd-srv-sysfs.c`) does, with the same
//! errno, down to the quirks of the kernel's `match_token()`.

use super::error::Error;
use super::msg::{AccessMode, NAME_MAX, RTRS_PORT};
use klib::kstr::{c_str, kstrtoull, match_int, matches_int, strim, sysfs_streq};

/// Most `path=` options one `map_device` takes (the C `paths[6]`).
pub const MAX_PATHS: usize = 6;

/// One `path=` of `map_device`: the address text, which the RTRS address
/// parser reads, and the destination port in effect where it was given.
///
/// The text is bytes, not `str`: C hands them to `rtrs_addr_to_sockaddr()`
/// as they are, and its `in4_pton()` stops at a `:` or newline after the
/// address, so `ip:1.2.3.4:\x8c` is a valid path although it is not UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapPath<'a> {
    /// `[srcaddr,]dstaddr` or `[srcaddr@]dstaddr`, e.g. `ip:10.0.0.1`.
    pub addr: &'a [u8],
    /// `dest_port=` as it was when this path came: C converts each path to a
    /// socket address as soon as it reads it, so a later `dest_port=` does
    /// not apply to it.
    pub port: u16,
}

impl MapPath<'_> {
    const EMPTY: MapPath<'static> = MapPath { addr: b"", port: 0 };
}

/// The options of a `map_device` write (`rnbd_clt_parse_map_options`),
/// borrowing from the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapOptions<'a> {
    /// `sessname=`: the RTRS session name, at most `NAME_MAX - 1` bytes.
    pub sessname: &'a [u8],
    /// `device_path=`: the device on the server, at most `NAME_MAX - 1`
    /// bytes.
    pub device_path: &'a [u8],
    /// `access_mode=`, [`AccessMode::Rw`] if not given.
    pub access_mode: AccessMode,
    /// `dest_port=` (the last one), [`RTRS_PORT`] if not given.
    pub dest_port: u16,
    /// `nr_poll_queues=`, 0 if not given; -1 was turned into `nr_cpu_ids`.
    pub nr_poll_queues: u32,
    paths: [MapPath<'a>; MAX_PATHS],
    path_cnt: usize,
}

/// The `match_token()` table of the C parser (`rnbd_opt_tokens`), in its
/// order; each variant holds the argument.
enum Token<'a> {
    Path(&'a [u8]),
    DevPath(&'a [u8]),
    DestPort(&'a [u8]),
    AccessMode(&'a [u8]),
    SessName(&'a [u8]),
    NrPollQueues(&'a [u8]),
}

impl<'a> Token<'a> {
    /// The first pattern `opt` matches: `name=%s` needs a nonempty argument,
    /// `name=%d` one that `simple_strtol()` reads entirely. `None` is
    /// `RNBD_OPT_ERR`.
    fn parse(opt: &'a [u8]) -> Option<Self> {
        let string = |name: &[u8]| opt.strip_prefix(name).filter(|arg| !arg.is_empty());
        let int = |name: &[u8]| opt.strip_prefix(name).filter(|arg| matches_int(arg));
        if let Some(arg) = string(b"path=") {
            Some(Token::Path(arg))
        } else if let Some(arg) = string(b"device_path=") {
            Some(Token::DevPath(arg))
        } else if let Some(arg) = int(b"dest_port=") {
            Some(Token::DestPort(arg))
        } else if let Some(arg) = string(b"access_mode=") {
            Some(Token::AccessMode(arg))
        } else if let Some(arg) = string(b"sessname=") {
            Some(Token::SessName(arg))
        } else {
            int(b"nr_poll_queues=").map(Token::NrPollQueues)
        }
    }
}

/// A session name or device path: longer than `NAME_MAX` is `EINVAL`;
/// exactly `NAME_MAX` is cut to `NAME_MAX - 1` bytes, as the C `strscpy()`
/// into a `NAME_MAX` buffer does.
fn name_arg(arg: &[u8]) -> Result<&[u8], Error> {
    if arg.len() > NAME_MAX {
        return Err(Error::Inval);
    }
    Ok(arg.get(..NAME_MAX - 1).unwrap_or(arg))
}

impl<'a> MapOptions<'a> {
    /// Parses a `map_device` write. `nr_cpu_ids` bounds `nr_poll_queues`.
    ///
    /// The input is cut at its first NUL and stripped of surrounding
    /// whitespace; options are separated by spaces only (like C's
    /// `strsep(" ")`: a tab is part of the option). `sessname=` and
    /// `device_path=` are mandatory; a repeated option overrides the earlier
    /// one, except `path=`, which adds a path. Errors, each as in C:
    /// `EINVAL` for an unknown option, a missing or malformed value, a name
    /// longer than `NAME_MAX` or a missing mandatory option, and `ENOMEM` for
    /// more than [`MAX_PATHS`] paths. The paths are not parsed here: see
    /// [`MapOptions::parse_with`].
    pub fn parse(input: &'a [u8], nr_cpu_ids: u32) -> Result<Self, Error> {
        Self::parse_with(input, nr_cpu_ids, |_| Ok(()))
    }

    /// [`MapOptions::parse`], giving each `path=` to `path` as it is read,
    /// as C gives it to the RTRS address parser: an error of `path` ends
    /// the parse with that error, before the options that follow and the
    /// check for the mandatory ones (C's `path=foo` alone is
    /// `EPROTONOSUPPORT`, not `EINVAL`).
    pub fn parse_with<E: From<Error>>(
        input: &'a [u8],
        nr_cpu_ids: u32,
        mut path: impl FnMut(&MapPath<'a>) -> Result<(), E>,
    ) -> Result<Self, E> {
        let mut opts = Self {
            sessname: b"",
            device_path: b"",
            access_mode: AccessMode::Rw,
            dest_port: RTRS_PORT,
            nr_poll_queues: 0,
            paths: [MapPath::EMPTY; MAX_PATHS],
            path_cnt: 0,
        };
        let mut have_sessname = false;
        let mut have_device_path = false;

        for opt in strim(c_str(input)).split(|&b| b == b' ') {
            if opt.is_empty() {
                continue;
            }
            match Token::parse(opt).ok_or(Error::Inval)? {
                Token::SessName(arg) => {
                    opts.sessname = name_arg(arg)?;
                    have_sessname = true;
                }
                Token::Path(arg) => {
                    let slot = opts.paths.get_mut(opts.path_cnt).ok_or(Error::NoMem)?;
                    *slot = MapPath {
                        addr: arg,
                        port: opts.dest_port,
                    };
                    path(slot)?;
                    opts.path_cnt += 1;
                }
                Token::DevPath(arg) => {
                    opts.device_path = name_arg(arg)?;
                    have_device_path = true;
                }
                Token::DestPort(arg) => {
                    let port = match_int(arg).map_err(|_| Error::Inval)?;
                    opts.dest_port = u16::try_from(port).map_err(|_| Error::Inval)?;
                }
                Token::AccessMode(arg) => opts.access_mode = AccessMode::from_name(arg)?,
                Token::NrPollQueues(arg) => {
                    let n = match_int(arg).map_err(|_| Error::Inval)?;
                    opts.nr_poll_queues = match n {
                        -1 => nr_cpu_ids,
                        n => u32::try_from(n)
                            .ok()
                            .filter(|&n| n <= nr_cpu_ids)
                            .ok_or(Error::Inval)?,
                    };
                }
            }
        }
        if !have_sessname || !have_device_path {
            return Err(Error::Inval.into());
        }
        Ok(opts)
    }

    /// The `path=` options, in the order given (possibly none: C then only
    /// finds an existing session).
    pub fn paths(&self) -> &[MapPath<'a>] {
        self.paths.get(..self.path_cnt).unwrap_or_default()
    }
}

/// How `unmap_device` unmaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnmapMode {
    /// `normal`: fail with `EBUSY` while the device is open.
    Normal,
    /// `force`: unmap even when open; inflight IO fails.
    Force,
}

impl UnmapMode {
    /// Parses an `unmap_device` write: `normal` or `force`, surrounding
    /// whitespace ignored; `EINVAL` otherwise.
    pub fn parse(input: &[u8]) -> Result<Self, Error> {
        let arg = strim(c_str(input));
        if sysfs_streq(arg, b"normal") {
            Ok(UnmapMode::Normal)
        } else if sysfs_streq(arg, b"force") {
            Ok(UnmapMode::Force)
        } else {
            Err(Error::Inval)
        }
    }

    /// Whether this is [`UnmapMode::Force`].
    pub const fn is_force(self) -> bool {
        matches!(self, UnmapMode::Force)
    }

    /// The name, as the C client logs it.
    pub const fn as_str(self) -> &'static str {
        match self {
            UnmapMode::Normal => "normal",
            UnmapMode::Force => "force",
        }
    }
}

/// Parses a `remap_device` write: `1`, surrounding whitespace ignored;
/// `EINVAL` otherwise.
pub fn parse_remap(input: &[u8]) -> Result<(), Error> {
    if sysfs_streq(strim(c_str(input)), b"1") {
        Ok(())
    } else {
        Err(Error::Inval)
    }
}

/// Parses a `resize` write: the new size in 512-byte sectors, as `kstrtoul(buf,
/// 0)` reads it (optional `+`, decimal, `0x` hex or `0` octal, one optional
/// trailing newline). `EINVAL` if malformed, `ERANGE` if over `u64::MAX`.
pub fn parse_resize(input: &[u8]) -> Result<u64, Error> {
    kstrtoull(input, 0)
}

/// Parses a server `force_close` write: `1`, optionally followed by one
/// newline and nothing else (C does not strip it); `EINVAL` otherwise.
pub fn parse_force_close(input: &[u8]) -> Result<(), Error> {
    if sysfs_streq(c_str(input), b"1") {
        Ok(())
    } else {
        Err(Error::Inval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUS: u32 = 8;

    fn parse(s: &[u8]) -> Result<MapOptions<'_>, Error> {
        MapOptions::parse(s, CPUS)
    }

    /// A path parser that refuses what does not start with `ip:`, as the
    /// RTRS one does with `EPROTONOSUPPORT`.
    fn parse_paths(s: &[u8]) -> Result<MapOptions<'_>, i32> {
        MapOptions::parse_with(s, CPUS, |p| {
            if p.addr.starts_with(b"ip:") {
                Ok(())
            } else {
                Err(Errno(-93))
            }
        })
        .map_err(|e| e.0)
    }

    /// An errno, as a caller's path parser reports it.
    #[derive(Debug)]
    struct Errno(i32);

    impl From<Error> for Errno {
        fn from(e: Error) -> Errno {
            Errno(e.to_errno())
        }
    }

    #[test]
    fn a_bad_path_fails_where_it_is_read() {
        // Alone, and before a bad option or a missing mandatory one: the
        // path's error, as C's parser reports it on reading the path.
        assert_eq!(parse_paths(b"path=foo"), Err(-93));
        assert_eq!(parse_paths(b"path=foo bogus=1"), Err(-93));
        assert_eq!(
            parse_paths(b"sessname=s path=foo device_path=x access_mode=zz"),
            Err(-93)
        );
        // After a bad option, that one's error.
        assert_eq!(
            parse_paths(b"bogus=1 path=foo"),
            Err(Error::Inval.to_errno())
        );
        // Good paths: the rules of `parse`.
        assert_eq!(
            parse_paths(b"path=ip:1.2.3.4"),
            Err(Error::Inval.to_errno())
        );
        let o = parse_paths(b"sessname=s path=ip:1.2.3.4 device_path=x").unwrap();
        assert_eq!(o.paths().len(), 1);
    }

    #[test]
    fn readme_example() {
        let o = parse(b"sessname=blya path=ip:10.50.100.66 device_path=/dev/ram0\n").unwrap();
        assert_eq!(o.sessname, b"blya");
        assert_eq!(o.device_path, b"/dev/ram0");
        assert_eq!(o.access_mode, AccessMode::Rw);
        assert_eq!(o.dest_port, 1234);
        assert_eq!(o.nr_poll_queues, 0);
        assert_eq!(
            o.paths(),
            &[MapPath {
                addr: b"ip:10.50.100.66",
                port: 1234
            }]
        );
    }

    #[test]
    fn all_options() {
        let o = parse(
            b"  dest_port=4321 sessname=s1 path=ip:1.1.1.1,ip:2.2.2.2 \
              path=gid:fe80::1@gid:fe80::2 device_path=a/b access_mode=migration \
              nr_poll_queues=3\t\n",
        )
        .unwrap();
        assert_eq!(o.sessname, b"s1");
        assert_eq!(o.device_path, b"a/b");
        assert_eq!(o.access_mode, AccessMode::Migration);
        assert_eq!(o.dest_port, 4321);
        assert_eq!(o.nr_poll_queues, 3);
        assert_eq!(
            o.paths(),
            &[
                MapPath {
                    addr: b"ip:1.1.1.1,ip:2.2.2.2",
                    port: 4321
                },
                MapPath {
                    addr: b"gid:fe80::1@gid:fe80::2",
                    port: 4321
                },
            ]
        );
    }

    #[test]
    fn dest_port_applies_to_later_paths_only() {
        let o = parse(b"sessname=s path=ip:a dest_port=7 path=ip:b device_path=d").unwrap();
        assert_eq!(o.dest_port, 7);
        assert_eq!(o.paths()[0].port, 1234);
        assert_eq!(o.paths()[1].port, 7);
    }

    #[test]
    fn spaces_only_separate() {
        // Runs of spaces are fine.
        let o = parse(b"sessname=s    device_path=d").unwrap();
        assert_eq!(o.device_path, b"d");
        // A tab does not separate: it is part of the session name.
        let o = parse(b"device_path=d sessname=s\tx").unwrap();
        assert_eq!(o.sessname, b"s\tx");
        // ... and so makes an unknown option here.
        assert_eq!(parse(b"sessname=s\tdevice_path=d"), Err(Error::Inval));
        // Input ends at the first NUL.
        let o = parse(b"sessname=s device_path=d\0 access_mode=bad").unwrap();
        assert_eq!(o.access_mode, AccessMode::Rw);
    }

    #[test]
    fn access_modes() {
        for (s, m) in [
            (&b"ro"[..], AccessMode::Ro),
            (b"rw", AccessMode::Rw),
            (b"migration", AccessMode::Migration),
        ] {
            let mut buf = [0u8; 64];
            let text = b"sessname=s device_path=d access_mode=";
            buf[..text.len()].copy_from_slice(text);
            buf[text.len()..text.len() + s.len()].copy_from_slice(s);
            assert_eq!(parse(&buf).unwrap().access_mode, m);
        }
        assert_eq!(
            parse(b"sessname=s device_path=d access_mode=RO"),
            Err(Error::Inval)
        );
        assert_eq!(
            parse(b"sessname=s device_path=d access_mode="),
            Err(Error::Inval)
        );
        // The last one wins.
        let o = parse(b"access_mode=ro sessname=s device_path=d access_mode=migration").unwrap();
        assert_eq!(o.access_mode, AccessMode::Migration);
    }

    #[test]
    fn mandatory_options() {
        assert_eq!(parse(b"device_path=d"), Err(Error::Inval));
        assert_eq!(parse(b"sessname=s"), Err(Error::Inval));
        assert_eq!(parse(b"sessname=s path=ip:x"), Err(Error::Inval));
        assert_eq!(parse(b""), Err(Error::Inval));
        assert_eq!(parse(b" \n"), Err(Error::Inval));
        // path= is not mandatory.
        assert_eq!(parse(b"sessname=s device_path=d").unwrap().paths(), &[]);
    }

    #[test]
    fn unknown_or_empty_options() {
        for bad in [
            &b"sessname=s device_path=d foo=1"[..],
            b"sessname=s device_path=d path=",
            b"sessname= device_path=d",
            b"sessname=s device_path=",
            b"sessname=s device_path=d Path=ip:x",
            b"sessname=s device_path=d sessname",
            b"sessname=s device_path=d =",
        ] {
            assert_eq!(parse(bad), Err(Error::Inval), "{bad:?}");
        }
    }

    #[test]
    fn repeated_names_override() {
        let o = parse(b"sessname=a device_path=x sessname=b device_path=y").unwrap();
        assert_eq!(o.sessname, b"b");
        assert_eq!(o.device_path, b"y");
    }

    #[test]
    fn path_limit_is_enomem() {
        let six = b"sessname=s device_path=d path=ip:1 path=ip:2 path=ip:3 path=ip:4 \
                    path=ip:5 path=ip:6";
        assert_eq!(parse(six).unwrap().paths().len(), 6);
        assert_eq!(parse(six).unwrap().paths()[5].addr, b"ip:6");
        let seven = b"sessname=s device_path=d path=ip:1 path=ip:2 path=ip:3 path=ip:4 \
                      path=ip:5 path=ip:6 path=ip:7";
        assert_eq!(parse(seven), Err(Error::NoMem));
        // Errors come in input order: a bad option before the 7th path wins.
        let bad_first = b"path=ip:1 path=ip:2 path=ip:3 path=ip:4 path=ip:5 path=ip:6 \
                          x=1 path=ip:7";
        assert_eq!(parse(bad_first), Err(Error::Inval));
    }

    #[test]
    fn non_utf8_path() {
        // C maps this path (in4_pton() stops at the ':'): the options
        // parser passes its bytes on as they are, UTF-8 or not
        // (fuzz/rnbd_map_options_c checks it against C's).
        let o = parse(b"sessname=s device_path=d path=ip:1.1.1.1,ip:2.2.2.8:0\x8c:2").unwrap();
        assert_eq!(o.paths()[0].addr, b"ip:1.1.1.1,ip:2.2.2.8:0\x8c:2");
        let o = parse(b"sessname=s device_path=d path=ip:\xff").unwrap();
        assert_eq!(o.paths()[0].addr, b"ip:\xff");
        // Names are bytes: not UTF-8 is fine there.
        let o = parse(b"sessname=\xff device_path=\xfe").unwrap();
        assert_eq!(o.sessname, b"\xff");
        assert_eq!(o.device_path, b"\xfe");
    }

    fn with_names(sess_len: usize, dev_len: usize, out: &mut [u8; 600]) -> usize {
        let part = b"sessname=";
        out[..part.len()].copy_from_slice(part);
        let mut n = part.len();
        out[n..n + sess_len].fill(b's');
        n += sess_len;
        let part = b" device_path=";
        out[n..n + part.len()].copy_from_slice(part);
        n += part.len();
        out[n..n + dev_len].fill(b'd');
        n + dev_len
    }

    #[test]
    fn name_lengths() {
        let mut buf = [0u8; 600];
        // Up to NAME_MAX - 1 bytes are kept as they are.
        let n = with_names(254, 254, &mut buf);
        let o = parse(&buf[..n]).unwrap();
        assert_eq!(o.sessname.len(), 254);
        assert_eq!(o.device_path.len(), 254);
        // NAME_MAX bytes pass the C length check but strscpy() keeps 254.
        let n = with_names(255, 255, &mut buf);
        let o = parse(&buf[..n]).unwrap();
        assert_eq!(o.sessname, &[b's'; 254][..]);
        assert_eq!(o.device_path, &[b'd'; 254][..]);
        // Longer is EINVAL.
        let n = with_names(256, 1, &mut buf);
        assert_eq!(parse(&buf[..n]), Err(Error::Inval));
        let n = with_names(1, 256, &mut buf);
        assert_eq!(parse(&buf[..n]), Err(Error::Inval));
    }

    #[test]
    fn dest_port_values() {
        let port = |s: &[u8]| {
            let mut buf = [0u8; 100];
            let text = b"sessname=s device_path=d dest_port=";
            buf[..text.len()].copy_from_slice(text);
            buf[text.len()..text.len() + s.len()].copy_from_slice(s);
            parse(&buf[..text.len() + s.len()]).map(|o| o.dest_port)
        };
        assert_eq!(port(b"0"), Ok(0));
        assert_eq!(port(b"65535"), Ok(65535));
        assert_eq!(port(b"0x10"), Ok(16));
        assert_eq!(port(b"010"), Ok(8));
        // match_int() reads a lone '-' as 0.
        assert_eq!(port(b"-"), Ok(0));
        assert_eq!(port(b"65536"), Err(Error::Inval));
        assert_eq!(port(b"-1"), Err(Error::Inval));
        assert_eq!(port(b""), Err(Error::Inval));
        assert_eq!(port(b"12ab"), Err(Error::Inval));
        assert_eq!(port(b"+1"), Err(Error::Inval));
        assert_eq!(port(b"000000000000000000000080"), Err(Error::Inval));
    }

    #[test]
    fn nr_poll_queues_values() {
        let queues = |s: &[u8], cpus: u32| {
            let mut buf = [0u8; 100];
            let text = b"sessname=s device_path=d nr_poll_queues=";
            buf[..text.len()].copy_from_slice(text);
            buf[text.len()..text.len() + s.len()].copy_from_slice(s);
            MapOptions::parse(&buf[..text.len() + s.len()], cpus).map(|o| o.nr_poll_queues)
        };
        assert_eq!(queues(b"0", 4), Ok(0));
        assert_eq!(queues(b"4", 4), Ok(4));
        assert_eq!(queues(b"5", 4), Err(Error::Inval));
        assert_eq!(queues(b"-1", 4), Ok(4));
        assert_eq!(queues(b"-2", 4), Err(Error::Inval));
        // ULLONG_MAX wraps to -1 in simple_strtol(), as in C.
        assert_eq!(queues(b"18446744073709551615", 4), Ok(4));
        assert_eq!(queues(b"4294967296", 4), Err(Error::Inval));
        assert_eq!(queues(b"x", 4), Err(Error::Inval));
    }

    #[test]
    fn unmap() {
        assert_eq!(UnmapMode::parse(b"normal"), Ok(UnmapMode::Normal));
        assert_eq!(UnmapMode::parse(b"normal\n"), Ok(UnmapMode::Normal));
        assert_eq!(UnmapMode::parse(b"  force \t\n"), Ok(UnmapMode::Force));
        assert_eq!(UnmapMode::parse(b"force\0junk"), Ok(UnmapMode::Force));
        assert_eq!(UnmapMode::parse(b"Force"), Err(Error::Inval));
        assert_eq!(UnmapMode::parse(b"forced"), Err(Error::Inval));
        assert_eq!(UnmapMode::parse(b""), Err(Error::Inval));
        assert!(UnmapMode::Force.is_force());
        assert!(!UnmapMode::Normal.is_force());
        assert_eq!(UnmapMode::Normal.as_str(), "normal");
        assert_eq!(UnmapMode::Force.as_str(), "force");
    }

    #[test]
    fn remap() {
        assert_eq!(parse_remap(b"1"), Ok(()));
        assert_eq!(parse_remap(b" 1 \n"), Ok(()));
        assert_eq!(parse_remap(b"0"), Err(Error::Inval));
        assert_eq!(parse_remap(b"11"), Err(Error::Inval));
        assert_eq!(parse_remap(b""), Err(Error::Inval));
    }

    #[test]
    fn force_close() {
        assert_eq!(parse_force_close(b"1"), Ok(()));
        assert_eq!(parse_force_close(b"1\n"), Ok(()));
        // The server does not strip its input.
        assert_eq!(parse_force_close(b" 1"), Err(Error::Inval));
        assert_eq!(parse_force_close(b"1 "), Err(Error::Inval));
        assert_eq!(parse_force_close(b"1\n\n"), Err(Error::Inval));
        assert_eq!(parse_force_close(b"0"), Err(Error::Inval));
    }

    #[test]
    fn resize() {
        assert_eq!(parse_resize(b"2097152\n"), Ok(2_097_152));
        assert_eq!(parse_resize(b"0x200000"), Ok(2_097_152));
        assert_eq!(parse_resize(b"+0"), Ok(0));
        assert_eq!(parse_resize(b" 1"), Err(Error::Inval));
        assert_eq!(parse_resize(b"1k"), Err(Error::Inval));
        assert_eq!(parse_resize(b"-1"), Err(Error::Inval));
        assert_eq!(parse_resize(b"99999999999999999999"), Err(Error::Range));
    }

    #[test]
    fn never_panics_on_odd_input() {
        let inputs: [&[u8]; 8] = [
            b"\xa0\xa0",
            b"sessname=\xa0 device_path=x",
            b"path=\xe2\x82",
            b"nr_poll_queues=-",
            b"dest_port=0x",
            b"=",
            b"\0",
            b"                                              ",
        ];
        for input in inputs {
            let _ = MapOptions::parse(input, 0);
            let _ = UnmapMode::parse(input);
            let _ = parse_resize(input);
        }
        // The kernel's isspace() includes 0xa0, so strim() removes it.
        let o = parse(b"sessname=s device_path=d\xa0").unwrap();
        assert_eq!(o.device_path, b"d");
    }
}
