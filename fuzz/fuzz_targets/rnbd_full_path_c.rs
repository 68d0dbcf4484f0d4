// SPDX-License-Identifier: GPL-2.0-or-later
//! `DevSearchPath::set` and `full_path` against the kernel's own server
//! code (`dev_search_path_set()`, the checks of `process_msg_open()` and
//! `rnbd_srv_get_full_path()` of Linux 6.12, extracted by fuzz/build.rs):
//! the same parameter, the same path or `EINVAL`, except where we are
//! stricter on purpose (a session name that is not one path component
//! when the search path holds `%SESSNAME%`, see devpath.rs).
//!
//! Input: `dev_search_path\xffsessname\xffdev_name`, each cut at a NUL as
//! the C strings are.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::devpath::{DevSearchPath, PATH_MAX, SESSNAME_PATTERN};
use rtrs_fuzz::{c_str, fields, oracle};

fuzz_target!(|data: &[u8]| {
    let [param, sess, dev] = fields::<3>(data);
    let (sess, dev) = (c_str(sess), c_str(dev));
    let mut search = DevSearchPath::new();
    let set = search.set(param);
    let (c_set, c_path) = oracle::full_path(param, sess, dev);
    assert_eq!(
        set.map_err(|e| e.to_errno()),
        if c_set == 0 { Ok(()) } else { Err(c_set) }
    );

    let with_pattern = search
        .as_bytes()
        .windows(SESSNAME_PATTERN.len())
        .any(|w| w == SESSNAME_PATTERN);
    let plain = !matches!(sess, b"" | b"." | b"..") && !sess.contains(&b'/');
    let mut out = vec![0u8; PATH_MAX];
    let got = search.full_path(sess, dev, &mut out);
    if with_pattern && !plain {
        // Ours refuses what C would resolve outside the namespace.
        assert_eq!(got, Err(rnbd_proto::error::Error::Inval));
        return;
    }
    let got = got.map(|n| out[..n].to_vec()).map_err(|e| e.to_errno());
    assert_eq!(got, c_path, "{data:?}");
});
