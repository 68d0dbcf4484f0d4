// SPDX-License-Identifier: GPL-2.0-or-later
//! `symlink_name` (the `<path>@<session>` link of a mapped device) and
//! `DiskName`/`first_minor`: the link name has no `/`, is the device path
//! cut to `NAME_MAX - 1` bytes, `@` and the session name, NUL-terminated,
//! and never written past `out`.
//!
//! Input: `pathname\xffsessname\xffout_len` (2 bytes LE; 2 * NAME_MAX
//! when absent). The first 4 bytes also give a disk index.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::devname::{
    first_minor, symlink_name, DiskName, DISK_NAME_LEN, MAX_DISK_INDEX, MINORS,
};
use rnbd_proto::error::Error;
use rnbd_proto::msg::NAME_MAX;
use rtrs_fuzz::{fields, le};

fuzz_target!(|data: &[u8]| {
    let index = le(data, 4) as u32;
    let disk = DiskName::new(index);
    assert_eq!(disk.as_str(), format!("rnbd{index}"));
    assert!(disk.as_bytes().len() < DISK_NAME_LEN);
    assert_eq!(disk.as_bytes_with_nul().last(), Some(&0));
    match first_minor(index) {
        Some(m) => {
            assert!(index <= MAX_DISK_INDEX);
            assert_eq!(m, index * MINORS);
            assert!(m + MINORS - 1 < 1 << 20);
        }
        None => assert!(index > MAX_DISK_INDEX),
    }

    let [path, sess, out_len] = fields::<3>(data);
    let out_len = if out_len.is_empty() {
        2 * NAME_MAX
    } else {
        le(out_len, 2) as usize % (3 * NAME_MAX)
    };
    let mut out = vec![0xa5u8; out_len + 1];
    let cut = &path[..path.len().min(NAME_MAX - 1)];
    let want: Vec<u8> = cut
        .iter()
        .map(|&c| if c == b'/' { b'!' } else { c })
        .chain([b'@'])
        .chain(sess.iter().copied())
        .collect();
    let got = symlink_name(path, sess, &mut out[..out_len]);
    assert_eq!(out[out_len], 0xa5, "wrote past out");
    match got {
        Ok(n) => {
            assert_eq!(n, want.len());
            assert_eq!(out[..n], want[..]);
            assert_eq!(out[n], 0);
            assert!(!out[..cut.len()].contains(&b'/'));
        }
        Err(e) => {
            assert_eq!(e, Error::NameTooLong);
            assert!(want.len() + 1 > out_len);
        }
    }
});
