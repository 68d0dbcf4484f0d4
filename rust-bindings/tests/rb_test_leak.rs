// SPDX-License-Identifier: GPL-2.0-or-later

//! rb-test-leak: allocates a few objects when it loads and keeps no pointer
//! to any of them, so that a kmemleak scan reports them as unreferenced.
//! Only the runner's own test `harness/fail-kmemleak.sh` loads it: it
//! proves that a leak fails the test it happened in (`scripts/run-tests`
//! scans with kmemleak after every test). Unloading it frees nothing.

#![deny(unsafe_code)]

use kernel::prelude::*;

module! {
    type: Leak,
    name: "rb_test_leak",
    author: "rtrs-rs developers",
    description: "rust-bindings test: leaks memory on purpose, for kmemleak",
    license: "GPL",
}

/// More than one object: a stale copy of a pointer (in a stack slot of a
/// task that ran the init) may hide one from the scan, not all.
const OBJECTS: usize = 8;
const SIZE: usize = 256;

struct Leak;

impl kernel::Module for Leak {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        for _ in 0..OBJECTS {
            let _ = KBox::leak(KBox::new([0x6b_u8; SIZE], GFP_KERNEL)?);
        }
        pr_info!("leaked {} objects of {} bytes on purpose\n", OBJECTS, SIZE);
        Ok(Leak)
    }
}
