// SPDX-License-Identifier: GPL-2.0-or-later

//! The errors of the pure RNBD code, each one a kernel errno.
//!
//! Every variant names the errno the C RNBD modules return in the same
//! situation, so a module converts with `Error::from_errno(e.to_errno())`.

/// An RNBD protocol or input error; each variant is one kernel errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// `EPERM` (1): the device is already open for writing by as many
    /// clients as the access mode allows (`rnbd_srv_check_update_open_perm`).
    Perm,
    /// `ENOMEM` (12): more `path=` options than
    /// [`MAX_PATHS`](super::options::MAX_PATHS); the C parser reports this
    /// with `ENOMEM`, so we do too.
    NoMem,
    /// `EINVAL` (22): malformed input, message or option.
    Inval,
    /// `ERANGE` (34): a number does not fit its type (`kstrtoul` overflow).
    Range,
    /// `ENAMETOOLONG` (36): a name does not fit its field or buffer.
    NameTooLong,
    /// `EMSGSIZE` (90): the buffer given to an `encode` is smaller than the
    /// message.
    MsgSize,
}

impl Error {
    /// The positive errno number, e.g. 22 for [`Error::Inval`].
    pub const fn errno(self) -> i32 {
        match self {
            Error::Perm => 1,
            Error::NoMem => 12,
            Error::Inval => 22,
            Error::Range => 34,
            Error::NameTooLong => 36,
            Error::MsgSize => 90,
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
        assert_eq!(Error::Perm.errno(), 1);
        assert_eq!(Error::NoMem.errno(), 12);
        assert_eq!(Error::Inval.errno(), 22);
        assert_eq!(Error::Range.errno(), 34);
        assert_eq!(Error::NameTooLong.errno(), 36);
        assert_eq!(Error::MsgSize.errno(), 90);
        assert_eq!(Error::Inval.to_errno(), -22);
    }
}
