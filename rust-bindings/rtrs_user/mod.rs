// SPDX-License-Identifier: GPL-2.0-or-later

//! The exported RTRS API as its users (RNBD) call it.

pub mod clt;
