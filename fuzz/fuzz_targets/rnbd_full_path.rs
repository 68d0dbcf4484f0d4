// SPDX-License-Identifier: GPL-2.0-or-later
//! `full_path` and `DevSearchPath` (the server resolving the device a
//! client opens): the result is NUL-terminated inside `out`, shorter than
//! `PATH_MAX`, has no `//`, no NUL, no `..` component the search path did
//! not have, and is the search path, session and device joined.
//!
//! Input: `search\xffsessname\xffdev_name\xffout_len` (out_len: 2 bytes
//! LE, the output buffer size; `PATH_MAX` when absent).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnbd_proto::devpath::{full_path, DevSearchPath, PATH_MAX, SESSNAME_PATTERN};
use rnbd_proto::error::Error;
use rtrs_fuzz::{fields, le};

fn has_dotdot_component(p: &[u8]) -> bool {
    p.split(|&c| c == b'/').any(|c| c == b"..")
}

/// The expected result: the parts joined and runs of `/` collapsed.
fn model(search: &[u8], sess: &[u8], dev: &[u8]) -> Vec<u8> {
    let at = search
        .windows(SESSNAME_PATTERN.len())
        .position(|w| w == SESSNAME_PATTERN);
    let joined: Vec<u8> = match at {
        Some(at) => [&search[..at], b"/", sess, b"/", dev].concat(),
        None => [search, b"/", dev].concat(),
    };
    let mut out = Vec::with_capacity(joined.len());
    for &c in &joined {
        if !(c == b'/' && out.last() == Some(&b'/')) {
            out.push(c);
        }
    }
    out
}

fn check(
    search: &[u8],
    sess: &[u8],
    dev: &[u8],
    out_len: usize,
    got: Result<usize, Error>,
    out: &[u8],
) {
    let n = match got {
        Ok(n) => n,
        Err(e) => {
            assert_eq!(e, Error::Inval);
            return;
        }
    };
    assert!(n < out.len() && n < PATH_MAX && n < out_len);
    assert_eq!(out[n], 0);
    let p = &out[..n];
    assert!(!p.contains(&0));
    assert!(!p.windows(2).any(|w| w == b"//"), "{p:?}");
    assert!(!dev.windows(2).any(|w| w == b".."));
    assert!(!dev.contains(&0) && !sess.contains(&0) && !search.contains(&0));
    assert!(search.len() + dev.len() < PATH_MAX);
    // What the search path keeps (all of it, or what precedes the
    // pattern) is the administrator's; no `..` comes from elsewhere.
    let kept = match search
        .windows(SESSNAME_PATTERN.len())
        .position(|w| w == SESSNAME_PATTERN)
    {
        Some(at) => &search[..at],
        None => search,
    };
    if !has_dotdot_component(kept) {
        assert!(!has_dotdot_component(p), "{p:?} escapes");
    }
    assert_eq!(p, &model(search, sess, dev)[..]);
    if search
        .windows(SESSNAME_PATTERN.len())
        .any(|w| w == SESSNAME_PATTERN)
    {
        assert!(!sess.is_empty() && sess != b"." && sess != b".." && !sess.contains(&b'/'));
    }
}

fuzz_target!(|data: &[u8]| {
    let [search, sess, dev, out_len] = fields::<4>(data);
    let out_len = if out_len.is_empty() {
        PATH_MAX
    } else {
        le(out_len, 2) as usize % (PATH_MAX + 64)
    };
    let mut out = vec![0xa5u8; out_len];
    let got = full_path(search, sess, dev, &mut out);
    check(search, sess, dev, out_len, got, &out);

    // The module parameter: set, then resolve with it.
    let mut param = DevSearchPath::new();
    assert_eq!(param.as_bytes(), b"/");
    let before = param.as_bytes().to_vec();
    match param.set(search) {
        Ok(()) => {
            let v = rtrs_fuzz::c_str(search);
            let v = match v.iter().rposition(|&c| c == b'\n') {
                Some(nl) => &v[..nl],
                None => v,
            };
            assert_eq!(param.as_bytes(), v);
            assert!(param.as_bytes().len() < PATH_MAX);
        }
        Err(e) => {
            assert_eq!(e, Error::Inval);
            assert!(rtrs_fuzz::c_str(search).len() >= PATH_MAX);
            assert_eq!(param.as_bytes(), &before[..]);
        }
    }
    let mut out2 = vec![0x5au8; out_len];
    let got2 = param.full_path(sess, dev, &mut out2);
    check(param.as_bytes(), sess, dev, out_len, got2, &out2);
    let mut out3 = vec![0u8; out_len];
    assert_eq!(full_path(param.as_bytes(), sess, dev, &mut out3), got2);
});
