// SPDX-License-Identifier: GPL-2.0-or-later

//! The errors of the pure RTRS code, each one a kernel errno.
//!
//! Every variant names the errno the C RTRS modules return in the same
//! situation, so a module converts with `Error::from_errno(e.to_errno())`.

/// An RTRS protocol or input error; each variant is one kernel errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// `EINVAL` (22): malformed input (an address, a sysfs value, a message
    /// field that the C receiver refuses).
    Inval,
    /// `ERANGE` (34): a number does not fit its type (`kstrto*()` overflow).
    Range,
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

impl Error {
    /// The positive errno number, e.g. 22 for [`Error::Inval`].
    pub const fn errno(self) -> i32 {
        match self {
            Error::Inval => 22,
            Error::Range => 34,
            Error::MsgSize => 90,
            Error::ProtoNoSupport => 93,
            Error::ConnReset => 104,
        }
    }

    /// The negative errno the kernel returns, e.g. -22 for [`Error::Inval`].
    pub const fn to_errno(self) -> i32 {
        -self.errno()
    }
}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn errno_values_are_the_kernels() {
        // include/uapi/asm-generic/errno-base.h and errno.h
        assert_eq!(Error::Inval.errno(), 22);
        assert_eq!(Error::Range.errno(), 34);
        assert_eq!(Error::MsgSize.errno(), 90);
        assert_eq!(Error::ProtoNoSupport.errno(), 93);
        assert_eq!(Error::ConnReset.errno(), 104);
        assert_eq!(Error::Inval.to_errno(), -22);
        assert_eq!(Error::ConnReset.to_errno(), -104);
    }
}
