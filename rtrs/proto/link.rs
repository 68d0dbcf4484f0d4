// SPDX-License-Identifier: GPL-2.0-or-later

//! The count of established paths of a session and the link events it
//! fires (`rtrs_clt_path_up()`/`_down()`, `rtrs_srv_path_up()`/`_down()`).
//!
//! The user hears of the session, not of paths: connected (server) or
//! reconnected (client) when the first path comes up, disconnected when
//! the last one goes down. The client starts its count at
//! [`MAX_PATHS_NUM`] while `rtrs_clt_open()` brings its paths up, so that
//! opening fires nothing; when the count reaches `MAX_PATHS_NUM +
//! paths_num` it drops to `paths_num`.

use super::msg::MAX_PATHS_NUM;

/// Number of established paths (`paths_up`), with the client's offset
/// while opening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathsUp {
    up: usize,
}

impl PathsUp {
    /// A client session being opened (`alloc_clt()`: `MAX_PATHS_NUM`).
    pub const fn client() -> Self {
        PathsUp { up: MAX_PATHS_NUM }
    }

    /// A server session (starts at 0).
    pub const fn server() -> Self {
        PathsUp { up: 0 }
    }

    /// The raw count.
    pub const fn count(&self) -> usize {
        self.up
    }

    /// A path of a session of `paths_num` paths became established.
    /// Returns whether the link event fires (client: `RECONNECTED`,
    /// server: `CONNECTED`), i.e. whether this is the only path up.
    pub fn path_up(&mut self, paths_num: usize) -> bool {
        self.up = self.up.saturating_add(1);
        if self.up > MAX_PATHS_NUM && Some(self.up) == MAX_PATHS_NUM.checked_add(paths_num) {
            // rtrs_clt_open() brought up its last path.
            self.up = paths_num;
            return false;
        }
        self.up == 1
    }

    /// An established path went down. Returns whether the
    /// `DISCONNECTED` event fires: the count dropped to 0. A count that is
    /// already 0 (a C `WARN_ON`) stays 0 and fires nothing.
    pub fn path_down(&mut self) -> bool {
        match self.up.checked_sub(1) {
            Some(up) => {
                self.up = up;
                up == 0
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_open_fires_nothing_then_counts() {
        let mut p = PathsUp::client();
        assert_eq!(p.count(), 128);
        // rtrs_clt_open() with 2 paths.
        assert!(!p.path_up(2));
        assert_eq!(p.count(), 129);
        assert!(!p.path_up(2));
        assert_eq!(p.count(), 2);
        // Both paths fail, the last one fires DISCONNECTED.
        assert!(!p.path_down());
        assert!(p.path_down());
        assert_eq!(p.count(), 0);
        // The first path back fires RECONNECTED, the second nothing.
        assert!(p.path_up(2));
        assert!(!p.path_up(2));
        assert_eq!(p.count(), 2);
    }

    #[test]
    fn client_path_lost_while_opening() {
        // One path comes up, goes down during open: count 128, no event.
        let mut p = PathsUp::client();
        assert!(!p.path_up(2));
        assert!(!p.path_down());
        assert_eq!(p.count(), 128);
    }

    #[test]
    fn server_counts_from_zero() {
        let mut p = PathsUp::server();
        assert!(p.path_up(1));
        assert!(!p.path_up(2));
        assert!(!p.path_down());
        assert!(p.path_down());
        assert!(!p.path_down());
        assert_eq!(p.count(), 0);
    }
}
