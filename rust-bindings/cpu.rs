// SPDX-License-Identifier: GPL-2.0-or-later

//! CPU numbers, as RTRS spreads connections over them.

use crate::ffi;
use core::num::NonZeroU32;

/// The number of possible CPU ids (`nr_cpu_ids`): at least one, the CPU
/// that runs this.
pub fn nr_cpu_ids() -> NonZeroU32 {
    // SAFETY: `nr_cpu_ids` is set at boot and never changes afterwards.
    let n = unsafe { core::ptr::read_volatile(core::ptr::addr_of!(ffi::nr_cpu_ids)) };
    NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN)
}

/// The CPU this runs on now; only a hint, as the task may move
/// (`raw_smp_processor_id`).
pub fn current_cpu() -> u32 {
    // SAFETY: always safe to call.
    unsafe { ffi::raw_smp_processor_id() }
}
