// SPDX-License-Identifier: GPL-2.0-or-later

//! The block layer for RNBD (a crate on `rb`): the server's side (open a
//! block device by path, read its limits, submit bios over a kernel buffer
//! and get a typed completion) and the client's (blk-mq, gendisk).
//!
//! Ownership follows the rest of `rust-bindings/`: a type owns one C object
//! and releases it in `Drop` (a [`bdev::BdevFile`] its `struct file`, an
//! in-flight bio its completion context until `bi_end_io`).

pub mod bdev;
pub mod bio;
pub mod gendisk;
pub mod mq;
pub mod request;
