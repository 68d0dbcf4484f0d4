// SPDX-License-Identifier: GPL-2.0-or-later
//! Compiles the C oracle (oracle/kernel.c: the Linux 6.12 parsers that the
//! Rust code re-implements) for the differential targets.

fn main() {
    println!("cargo:rerun-if-changed=oracle/kernel.c");
    cc::Build::new()
        .file("oracle/kernel.c")
        // The kernel builds with -fno-strict-overflow: signed overflow wraps.
        .flag("-fwrapv")
        .flag_if_supported("-Wno-sign-compare")
        .warnings(false)
        .compile("rtrs_fuzz_oracle");
}
