// SPDX-License-Identifier: GPL-2.0-or-later

//! The generated FFI: bindgen over `bindings_helper.h` and `helpers.c`, with
//! the kernel's own flags (see `Kbuild`). Only the safe abstractions in
//! `rust-bindings/` use it.

#![allow(
    clippy::all,
    clippy::undocumented_unsafe_blocks,
    dead_code,
    improper_ctypes,
    missing_docs,
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    unnecessary_transmutes,
    unreachable_pub,
    unsafe_op_in_unsafe_fn
)]

// Blocklisted in bindgen_parameters, as the kernel does for its bindings.
type __kernel_size_t = usize;
type __kernel_ssize_t = isize;
type __kernel_ptrdiff_t = isize;

include!("generated/bindings.rs");
include!("generated/helpers.rs");
