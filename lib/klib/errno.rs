// SPDX-License-Identifier: GPL-2.0-or-later

//! The errors of the pure crates, each one a kernel errno.
//!
//! Every variant names the errno the C RTRS and RNBD modules return in the
//! same situation, so a module converts with
//! `Error::from_errno(e.to_errno())`.

/// A protocol or input error; each variant is one kernel errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    /// `EPERM` (1): the device is already open for writing by as many
    /// clients as the access mode allows (`rnbd_srv_check_update_open_perm`).
    Perm,
    /// `ENOMEM` (12): more `path=` options than RNBD's `map_device` takes;
    /// the C parser reports this with `ENOMEM`, so we do too.
    NoMem,
    /// `EINVAL` (22): malformed input (an address, a sysfs value, a message
    /// field or an option that the C code refuses).
    Inval,
    /// `ERANGE` (34): a number does not fit its type (`kstrto*()` overflow).
    Range,
    /// `ENAMETOOLONG` (36): a name does not fit its field or buffer.
    NameTooLong,
    /// `EMSGSIZE` (90): a buffer is shorter than the message to encode into
    /// it or to decode from it.
    MsgSize,
    /// `EPROTONOSUPPORT` (93): an address with neither the `ip:` nor the
    /// `gid:` prefix (`rtrs_str_to_sockaddr()`).
    ProtoNoSupport,
    /// `ECONNRESET` (104): a connection request or response that the C peer
    /// refuses (bad length, magic, version, connection id); the C code
    /// rejects or fails the connection with exactly this errno.
    ConnReset,
}

impl Errno {
    /// The positive errno number, e.g. 22 for [`Errno::Inval`].
    pub const fn errno(self) -> i32 {
        match self {
            Errno::Perm => 1,
            Errno::NoMem => 12,
            Errno::Inval => 22,
            Errno::Range => 34,
            Errno::NameTooLong => 36,
            Errno::MsgSize => 90,
            Errno::ProtoNoSupport => 93,
            Errno::ConnReset => 104,
        }
    }

    /// The negative errno the kernel returns, e.g. -22 for [`Errno::Inval`].
    pub const fn to_errno(self) -> i32 {
        -self.errno()
    }
}

#[cfg(test)]
mod tests {
    use super::Errno;

    #[test]
    fn errno_values_are_the_kernels() {
        // include/uapi/asm-generic/errno-base.h and errno.h
        assert_eq!(Errno::Perm.errno(), 1);
        assert_eq!(Errno::NoMem.errno(), 12);
        assert_eq!(Errno::Inval.errno(), 22);
        assert_eq!(Errno::Range.errno(), 34);
        assert_eq!(Errno::NameTooLong.errno(), 36);
        assert_eq!(Errno::MsgSize.errno(), 90);
        assert_eq!(Errno::ProtoNoSupport.errno(), 93);
        assert_eq!(Errno::ConnReset.errno(), 104);
        assert_eq!(Errno::Inval.to_errno(), -22);
        assert_eq!(Errno::ConnReset.to_errno(), -104);
    }
}
