// SPDX-License-Identifier: GPL-2.0-or-later

//! Network devices, as far as RTRS needs them: an interface index by name,
//! for IPv6 link-local scopes (`fe80::1%eth0`).

use crate::rb::ffi;

/// The index of the network interface `name` in the initial namespace.
pub fn ifindex_by_name(name: &[u8]) -> Option<u32> {
    let mut buf = [0u8; ffi::IFNAMSIZ as usize];
    if name.is_empty() || name.len() >= buf.len() || name.contains(&0) {
        return None;
    }
    buf[..name.len()].copy_from_slice(name);
    // SAFETY: `buf` is NUL-terminated; `init_net` is static; a non-null
    // result holds a reference we drop right after reading the index.
    unsafe {
        let dev = ffi::dev_get_by_name(core::ptr::addr_of_mut!(ffi::init_net), buf.as_ptr());
        if dev.is_null() {
            return None;
        }
        let idx = (*dev).ifindex;
        ffi::dev_put(dev);
        u32::try_from(idx).ok()
    }
}
