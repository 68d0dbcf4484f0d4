// SPDX-License-Identifier: GPL-2.0-or-later

//! The server's device path resolution: its `dev_search_path` parameter, the
//! `%SESSNAME%` namespace substitution, and the join with the device path a
//! client asks to open (`rnbd_srv_get_full_path` and the checks of
//! `process_msg_open` in `rnbd-srv.c`).
//!
//! # Confinement
//!
//! C 6.12 refuses (`EINVAL`) any client device path that contains `..`
//! anywhere, even inside a name like `a..b`; we do the same. C does not
//! check the session name it substitutes for `%SESSNAME%`, although it comes
//! from the client: a session named `..` escapes the search path, and one
//! named `x/y` or an empty one reaches into another session's namespace or the
//! shared parent. We are stricter and refuse (`EINVAL`) a session name that
//! is not exactly one ordinary path component: empty, `.`, `..`, or
//! containing `/`. The search path itself is the administrator's and is
//! taken as it is.
//!
//! One more difference: C looks for `%SESSNAME%` with `strnstr()` over the
//! whole `PATH_MAX` buffer, past the string's NUL, so a pattern left over
//! from an earlier, longer value (the parameter given twice at load) still
//! applies. We only look in the current value.

use super::error::Error;

/// Longest path, NUL included (`PATH_MAX`).
pub const PATH_MAX: usize = 4096;
/// The search path until the parameter is set (`DEFAULT_DEV_SEARCH_PATH`).
pub const DEFAULT_DEV_SEARCH_PATH: &[u8] = b"/";
/// Replaced by the session name in the search path.
pub const SESSNAME_PATTERN: &[u8] = b"%SESSNAME%";

/// The `dev_search_path` module parameter: the directory client device paths
/// are relative to.
///
/// # Invariants
///
/// `len < PATH_MAX` and `buf[..len]` holds no NUL.
#[derive(Clone)]
pub struct DevSearchPath {
    buf: [u8; PATH_MAX],
    len: usize,
}

impl DevSearchPath {
    /// The default search path, `/`.
    pub const fn new() -> Self {
        let mut buf = [0u8; PATH_MAX];
        buf[0] = b'/';
        // INVARIANT: 1 < PATH_MAX, and '/' is not NUL.
        Self { buf, len: 1 }
    }

    /// Sets the parameter as `dev_search_path_set` does: the value (up to a
    /// NUL) must be shorter than `PATH_MAX` (`EINVAL` otherwise, and the old
    /// value stays); it is cut at its last newline.
    pub fn set(&mut self, val: &[u8]) -> Result<(), Error> {
        let val = param_value(val)?;
        let dst = self.buf.get_mut(..val.len()).ok_or(Error::Inval)?;
        dst.copy_from_slice(val);
        // INVARIANT: val.len() < PATH_MAX and val holds no NUL.
        self.len = val.len();
        Ok(())
    }

    /// The current search path.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// [`full_path`] with this search path.
    pub fn full_path(
        &self,
        sessname: &[u8],
        dev_name: &[u8],
        out: &mut [u8],
    ) -> Result<usize, Error> {
        full_path(self.as_bytes(), sessname, dev_name, out)
    }
}

impl Default for DevSearchPath {
    fn default() -> Self {
        Self::new()
    }
}

/// The value `dev_search_path_set` stores for a write of `val`: `val` up
/// to a NUL, which must be shorter than `PATH_MAX` (`EINVAL` otherwise),
/// cut at its last newline.
pub fn param_value(val: &[u8]) -> Result<&[u8], Error> {
    let val = val.split(|&b| b == 0).next().unwrap_or_default();
    if val.len() >= PATH_MAX {
        return Err(Error::Inval);
    }
    Ok(match val.iter().rposition(|&b| b == b'\n') {
        Some(nl) => val.get(..nl).unwrap_or_default(),
        None => val,
    })
}

/// Whether `name` is one ordinary path component.
fn is_plain_component(name: &[u8]) -> bool {
    !matches!(name, b"" | b"." | b"..") && !name.contains(&b'/')
}

/// Writes to `out` the path of the device `dev_name` that session `sessname`
/// asks to open, NUL-terminated, and returns its length without the NUL.
///
/// The path is `search_path/dev_name`, or, if the search path contains
/// `%SESSNAME%`, the part before it followed by `/sessname/dev_name` (as in
/// C, whatever follows `%SESSNAME%` is dropped). Runs of `/` are then
/// collapsed into one. `EINVAL`, as in C, if `search_path` and `dev_name`
/// together reach `PATH_MAX`, if `dev_name` contains `..`, or if the path
/// does not fit `PATH_MAX`; also `EINVAL` for a session name that is not a
/// plain component (see the module docs: C does not check this), for a NUL in
/// any input, and if the path and its NUL do not fit `out` (never with a
/// `PATH_MAX` buffer).
pub fn full_path(
    search_path: &[u8],
    sessname: &[u8],
    dev_name: &[u8],
    out: &mut [u8],
) -> Result<usize, Error> {
    if [search_path, sessname, dev_name]
        .iter()
        .any(|s| s.contains(&0))
    {
        return Err(Error::Inval);
    }
    match search_path.len().checked_add(dev_name.len()) {
        Some(n) if n < PATH_MAX => {}
        _ => return Err(Error::Inval),
    }
    if dev_name.windows(2).any(|w| w == b"..") {
        return Err(Error::Inval);
    }
    let pattern_at = search_path
        .windows(SESSNAME_PATTERN.len())
        .position(|w| w == SESSNAME_PATTERN);
    let parts: [&[u8]; 5] = match pattern_at {
        Some(at) => {
            if !is_plain_component(sessname) {
                return Err(Error::Inval);
            }
            let prefix = search_path.get(..at).unwrap_or_default();
            [prefix, b"/", sessname, b"/", dev_name]
        }
        None => [search_path, b"/", dev_name, b"", b""],
    };
    let len = parts
        .iter()
        .try_fold(0usize, |acc, p| acc.checked_add(p.len()))
        .ok_or(Error::Inval)?;
    if len >= PATH_MAX || len >= out.len() {
        return Err(Error::Inval);
    }

    let mut n = 0;
    for &b in parts.iter().flat_map(|p| p.iter()) {
        if b == b'/' && n > 0 && out.get(n - 1) == Some(&b'/') {
            continue;
        }
        let slot = out.get_mut(n).ok_or(Error::Inval)?;
        *slot = b;
        n += 1;
    }
    *out.get_mut(n).ok_or(Error::Inval)? = 0;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_value_cuts_at_last_newline() {
        assert_eq!(param_value(b"/dev\n"), Ok(&b"/dev"[..]));
        assert_eq!(param_value(b"/a\nb\nc"), Ok(&b"/a\nb"[..]));
        assert_eq!(param_value(b"/x\0/y"), Ok(&b"/x"[..]));
        assert_eq!(param_value(&[b'a'; PATH_MAX]), Err(Error::Inval));
        assert_eq!(
            param_value(&[b'a'; PATH_MAX - 1]).map(|v| v.len()),
            Ok(PATH_MAX - 1)
        );
    }

    fn resolve<'a>(
        search: &[u8],
        sess: &[u8],
        dev: &[u8],
        out: &'a mut [u8; PATH_MAX],
    ) -> Result<&'a [u8], Error> {
        let n = full_path(search, sess, dev, out)?;
        assert_eq!(out[n], 0);
        Ok(&out[..n])
    }

    #[test]
    fn joins_and_collapses_slashes() {
        let mut out = [0xffu8; PATH_MAX];
        assert_eq!(
            resolve(b"/", b"s", b"/dev/ram0", &mut out),
            Ok(&b"/dev/ram0"[..])
        );
        assert_eq!(resolve(b"/", b"s", b"ram0", &mut out), Ok(&b"/ram0"[..]));
        assert_eq!(
            resolve(b"/dev//block/", b"s", b"//x///y/", &mut out),
            Ok(&b"/dev/block/x/y/"[..])
        );
        // Nothing before the first slash is touched.
        assert_eq!(resolve(b"rel", b"s", b"x", &mut out), Ok(&b"rel/x"[..]));
        assert_eq!(resolve(b"", b"s", b"x", &mut out), Ok(&b"/x"[..]));
        // An empty device name gives the directory itself; opening it fails.
        assert_eq!(resolve(b"/dev", b"s", b"", &mut out), Ok(&b"/dev/"[..]));
    }

    #[test]
    fn sessname_substitution() {
        let mut out = [0u8; PATH_MAX];
        assert_eq!(
            resolve(b"/run/rnbd/%SESSNAME%", b"client1", b"/disk0", &mut out),
            Ok(&b"/run/rnbd/client1/disk0"[..])
        );
        // As in C, what follows %SESSNAME% is dropped.
        assert_eq!(
            resolve(b"/run/%SESSNAME%/devs", b"c", b"d", &mut out),
            Ok(&b"/run/c/d"[..])
        );
        // Only the first one is replaced.
        assert_eq!(
            resolve(b"%SESSNAME%/%SESSNAME%", b"c", b"d", &mut out),
            Ok(&b"/c/d"[..])
        );
        // Without the pattern, the session name does not matter.
        assert_eq!(resolve(b"/dev", b"..", b"d", &mut out), Ok(&b"/dev/d"[..]));
    }

    #[test]
    fn dotdot_is_refused() {
        let mut out = [0u8; PATH_MAX];
        for dev in [&b".."[..], b"../etc/x", b"a/../../b", b"a..b", b"x/.."] {
            assert_eq!(resolve(b"/dev", b"s", dev, &mut out), Err(Error::Inval));
        }
        // Single dots are harmless.
        assert_eq!(
            resolve(b"/dev", b"s", b"./a/.b", &mut out),
            Ok(&b"/dev/./a/.b"[..])
        );
    }

    #[test]
    fn sessname_must_be_one_component() {
        let mut out = [0u8; PATH_MAX];
        for sess in [&b".."[..], b".", b"", b"a/b", b"/", b"../x"] {
            assert_eq!(
                resolve(b"/srv/%SESSNAME%", sess, b"d", &mut out),
                Err(Error::Inval),
                "{sess:?}"
            );
        }
        assert_eq!(
            resolve(b"/srv/%SESSNAME%", b"a..b", b"d", &mut out),
            Ok(&b"/srv/a..b/d"[..])
        );
    }

    #[test]
    fn length_limits() {
        let mut out = [0u8; PATH_MAX];
        let search = [b'a'; PATH_MAX - 255];
        let dev = [b'b'; 254];
        // 3841 + 254 = 4095 < PATH_MAX, but with the '/' the path is 4096.
        assert_eq!(resolve(&search, b"s", &dev, &mut out), Err(Error::Inval));
        // 3841 + 253 + '/' = 4095 fits with its NUL.
        let n = full_path(&search, b"s", &dev[..253], &mut out).unwrap();
        assert_eq!(n, PATH_MAX - 1);
        assert_eq!(out[PATH_MAX - 1], 0);
        // search + dev reaching PATH_MAX is refused before anything else.
        let search = [b'a'; PATH_MAX - 10];
        assert_eq!(
            resolve(&search, b"s", &[b'b'; 10], &mut out),
            Err(Error::Inval)
        );
        // The session name counts too.
        let search = b"/%SESSNAME%";
        let sess = [b's'; PATH_MAX - 4];
        assert_eq!(resolve(search, &sess, b"d", &mut out), Err(Error::Inval));
        // A small output buffer is refused, not overrun.
        let mut small = [0u8; 6];
        assert_eq!(
            full_path(b"/dev", b"s", b"x", &mut small),
            Err(Error::Inval)
        );
        let mut fits = [0u8; 7];
        assert_eq!(full_path(b"/dev", b"s", b"x", &mut fits), Ok(6));
        assert_eq!(&fits, b"/dev/x\0");
    }

    #[test]
    fn nul_is_refused() {
        let mut out = [0u8; PATH_MAX];
        assert_eq!(resolve(b"/dev", b"s", b"a\0b", &mut out), Err(Error::Inval));
        assert_eq!(
            resolve(b"/%SESSNAME%", b"s\0", b"a", &mut out),
            Err(Error::Inval)
        );
    }

    #[test]
    fn search_path_parameter() {
        let mut p = DevSearchPath::new();
        assert_eq!(p.as_bytes(), DEFAULT_DEV_SEARCH_PATH);
        assert_eq!(p.set(b"/dev/rnbd\n"), Ok(()));
        assert_eq!(p.as_bytes(), b"/dev/rnbd");
        // Cut at the last newline, whatever follows it.
        assert_eq!(p.set(b"/a\n/b\nc"), Ok(()));
        assert_eq!(p.as_bytes(), b"/a\n/b");
        assert_eq!(p.set(b""), Ok(()));
        assert_eq!(p.as_bytes(), b"");
        assert_eq!(p.set(b"/x\0/y"), Ok(()));
        assert_eq!(p.as_bytes(), b"/x");

        let longest = [b'a'; PATH_MAX - 1];
        assert_eq!(p.set(&longest), Ok(()));
        assert_eq!(p.as_bytes().len(), PATH_MAX - 1);
        // Too long (newline included in the count): refused, old value kept.
        let mut too_long = [b'b'; PATH_MAX];
        too_long[PATH_MAX - 1] = b'\n';
        assert_eq!(p.set(&too_long), Err(Error::Inval));
        assert_eq!(p.as_bytes(), &longest[..]);

        assert_eq!(p.set(b"/srv/%SESSNAME%/"), Ok(()));
        let mut out = [0u8; PATH_MAX];
        let n = p.full_path(b"c1", b"vol", &mut out).unwrap();
        assert_eq!(&out[..n], b"/srv/c1/vol");
        assert_eq!(DevSearchPath::default().as_bytes(), b"/");
    }
}
