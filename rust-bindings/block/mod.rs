// SPDX-License-Identifier: GPL-2.0-or-later

//! The block layer for RNBD.

pub mod gendisk;
pub mod mq;
pub mod request;
