// SPDX-License-Identifier: GPL-2.0-or-later

//! The text RNBD sysfs attributes show (`rnbd-clt-sysfs.c`,
//! `rnbd-srv-sysfs.c`, `Documentation/ABI/testing/sysfs-*-rnbd*`): the
//! client device state, the usage lines of writable attributes, and the
//! server's `read_only`. Every `show` is the text followed by one newline.

use super::error::Error;

/// State of a client's mapped device (`enum rnbd_clt_dev_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevState {
    /// Being mapped.
    Init,
    /// Mapped and serving IO.
    Mapped,
    /// Mapped, but the session is disconnected: IO fails until a remap.
    MappedDisconnected,
    /// Unmapped, about to go away.
    Unmapped,
}

impl DevState {
    /// What `/sys/block/rnbd<N>/rnbd/state` shows, without the newline. The
    /// C names are kept for the tools that read them: `open` for mapped,
    /// `closed` for disconnected.
    pub const fn as_str(self) -> &'static str {
        match self {
            DevState::Init => "init",
            DevState::Mapped => "open",
            DevState::MappedDisconnected => "closed",
            DevState::Unmapped => "unmapped",
        }
    }
}

/// Shown by the client's `map_device` (`/sys/class/rnbd-client/ctl/map_device`).
pub const MAP_DEVICE_USAGE: &str = "Usage: echo \"[dest_port=server port number] \
sessname=<name of the rtrs session> path=<[srcaddr@]dstaddr> [path=<[srcaddr@]dstaddr>] \
device_path=<full path on remote side> [access_mode=<ro|rw|migration>] \
[nr_poll_queues=<number of queues>]\" > map_device\n\n\
addr ::= [ ip:<ipv4> | ip:<ipv6> | gid:<gid> ]\n";

/// Shown by a client device's `unmap_device`.
pub const UNMAP_DEVICE_USAGE: &str = "Usage: echo <normal|force> > unmap_device\n";

/// Shown by a client device's `resize`.
pub const RESIZE_USAGE: &str = "Usage: echo <new size in sectors> > resize\n";

/// Shown by a client device's `remap_device`.
pub const REMAP_DEVICE_USAGE: &str = "Usage: echo <1> > remap_device\n";

/// Shown by the server's per-session `force_close`.
pub const FORCE_CLOSE_USAGE: &str = "Usage: echo 1 > force_close\n";

/// What the server's `read_only` shows, without the newline: `1` for a
/// read-only mapping, else `0`.
pub const fn read_only_str(read_only: bool) -> &'static str {
    if read_only {
        "1"
    } else {
        "0"
    }
}

/// Checks a write to the server's per-session `force_close`: `1`, with or
/// without a trailing newline (`sysfs_streq(buf, "1")`); `EINVAL` otherwise.
pub fn parse_force_close(input: &[u8]) -> Result<(), Error> {
    if klib::kstr::sysfs_streq(input, b"1") {
        Ok(())
    } else {
        Err(Error::Inval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn force_close_input() {
        assert_eq!(parse_force_close(b"1"), Ok(()));
        assert_eq!(parse_force_close(b"1\n"), Ok(()));
        assert_eq!(parse_force_close(b"0"), Err(Error::Inval));
        assert_eq!(parse_force_close(b"1\n\n"), Err(Error::Inval));
        assert_eq!(parse_force_close(b""), Err(Error::Inval));
        assert_eq!(parse_force_close(b"11"), Err(Error::Inval));
    }

    #[test]
    fn states() {
        assert_eq!(DevState::Init.as_str(), "init");
        assert_eq!(DevState::Mapped.as_str(), "open");
        assert_eq!(DevState::MappedDisconnected.as_str(), "closed");
        assert_eq!(DevState::Unmapped.as_str(), "unmapped");
    }

    #[test]
    fn usage_lines() {
        assert_eq!(
            MAP_DEVICE_USAGE,
            "Usage: echo \"[dest_port=server port number] sessname=<name of the rtrs session> \
             path=<[srcaddr@]dstaddr> [path=<[srcaddr@]dstaddr>] device_path=<full path on \
             remote side> [access_mode=<ro|rw|migration>] [nr_poll_queues=<number of \
             queues>]\" > map_device\n\naddr ::= [ ip:<ipv4> | ip:<ipv6> | gid:<gid> ]\n"
        );
        assert!(MAP_DEVICE_USAGE.contains("dstaddr>] device_path=<full path on remote side>"));
        assert_eq!(
            UNMAP_DEVICE_USAGE,
            "Usage: echo <normal|force> > unmap_device\n"
        );
        assert_eq!(RESIZE_USAGE, "Usage: echo <new size in sectors> > resize\n");
        assert_eq!(REMAP_DEVICE_USAGE, "Usage: echo <1> > remap_device\n");
        assert_eq!(FORCE_CLOSE_USAGE, "Usage: echo 1 > force_close\n");
    }

    #[test]
    fn read_only() {
        assert_eq!(read_only_str(true), "1");
        assert_eq!(read_only_str(false), "0");
    }
}
