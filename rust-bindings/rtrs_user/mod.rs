// SPDX-License-Identifier: GPL-2.0-or-later

//! The RTRS kernel API of `rtrs.h` seen from its users (RNBD, the RTRS test
//! modules, and for the address helpers of `rtrs-core` the RTRS modules
//! themselves): safe wrappers over the functions that `rtrs-core`,
//! `rtrs-server` and `rtrs-client` export (ours or the C ones: the symbols
//! are the same), and trait-based callbacks for the events they deliver.
//! What our RTRS modules export is in each one's `abi` module.

pub mod addr;
pub mod clt;
pub mod srv;
