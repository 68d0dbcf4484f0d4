// SPDX-License-Identifier: GPL-2.0-or-later

//! The RTRS kernel API of `rtrs.h` seen from its user, RNBD: safe wrappers
//! over the functions that `rtrs-server` and `rtrs-client` export (ours or
//! the C ones: the symbols are the same), and trait-based callbacks for the
//! events they deliver. (`rtrs_api/` is the other side: what our RTRS
//! modules export.)

pub mod clt;
pub mod srv;
