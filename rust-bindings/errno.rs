// SPDX-License-Identifier: GPL-2.0-or-later

//! Errno values that the 6.12 kernel crate does not declare
//! (`kernel::error::code` has the common ones), as `Error`s.

use crate::ffi;
use kernel::error::Error;

macro_rules! errnos {
    ($($name:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "` as an [`Error`].")]
        #[allow(non_snake_case)]
        pub fn $name() -> Error {
            Error::from_errno(-(ffi::$name as i32))
        }
    )*};
}

errnos!(
    ECONNABORTED,
    ECONNREFUSED,
    ECONNRESET,
    EHOSTUNREACH,
    ENAMETOOLONG,
    ENOTCONN,
    EOPNOTSUPP,
    EPROTONOSUPPORT,
    ETIMEDOUT,
    EMSGSIZE,
    EPROTO,
);

errnos!(EALREADY);
