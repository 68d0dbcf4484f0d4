// SPDX-License-Identifier: GPL-2.0-or-later

//! The errors of the pure RTRS code: kernel errnos (`klib::Errno`).

pub use klib::Errno as Error;
