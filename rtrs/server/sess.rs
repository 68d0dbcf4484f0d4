// SPDX-License-Identifier: GPL-2.0-or-later

//! A client session on the server (`struct rtrs_srv_sess`): the paths of one
//! client session (same paths uuid), sharing one set of chunks.

use super::abi::{SrvLinkEv, UpperPriv, UpperPrivCell};
use super::ctx::Ctx;
use super::params::Params;
use super::path::{NameBuf, Path};
use super::sysfs::SessFiles;
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use rb_rdma::blocks::PageBlocks;
use rtrs_proto::msg::Uuid;
use rtrs_proto::state::SrvState;

/// A client session on the server.
///
/// # Locking
///
/// `paths` > `files`; `paths_up` is taken alone and held while the upper
/// layer hears of the session going up or down (C's `paths_ev_mutex`),
/// which may call back into `paths` (`rtrs_srv_get_path_name()`), so the
/// two are separate. All three are mutexes (process context: CM handlers,
/// the close work, sysfs). The IO path reads `pages` and `priv_` without a
/// lock.
#[pin_data]
pub(crate) struct Session {
    pub(crate) ctx: Arc<Ctx>,
    pub(crate) paths_uuid: Uuid,
    pub(crate) queue_depth: u32,
    /// The chunks, one per IO in flight, shared by all paths.
    pub(crate) pages: Arc<PageBlocks>,
    /// The paths of the session.
    #[pin]
    pub(crate) paths: Mutex<KVec<Arc<Path>>>,
    /// Paths up (`paths_up`).
    #[pin]
    pub(crate) paths_up: Mutex<u32>,
    /// The upper layer's pointer for this session.
    pub(crate) priv_: UpperPrivCell,
    /// The session's sysfs directory, while a path has files in it.
    #[pin]
    pub(crate) files: Mutex<Option<SessFiles>>,
}

impl Session {
    pub(crate) fn new(ctx: Arc<Ctx>, paths_uuid: Uuid, p: Params) -> Result<Arc<Self>> {
        let pages = Arc::new(
            PageBlocks::new(p.queue_depth, p.max_chunk_size as usize)?,
            GFP_KERNEL,
        )?;
        Arc::pin_init(
            pin_init!(Session {
                ctx,
                paths_uuid,
                queue_depth: p.queue_depth,
                pages,
                paths <- new_mutex!(KVec::new(), "rtrs_srv_paths"),
                paths_up <- new_mutex!(0, "rtrs_srv_paths_up"),
                priv_: UpperPrivCell::new(),
                files <- new_mutex!(None, "rtrs_srv_sess_files"),
            }),
            GFP_KERNEL,
        )
    }

    /// The path with `id`, if the session has it.
    pub(crate) fn path_by_id(&self, id: u16) -> Option<Arc<Path>> {
        self.paths.lock().iter().find(|p| p.id == id).cloned()
    }

    /// The name of a connected path (`rtrs_srv_get_path_name()`).
    pub(crate) fn connected_path_name(&self) -> Option<NameBuf> {
        self.paths
            .lock()
            .iter()
            .find(|p| p.state() == SrvState::Connected)
            .map(|p| p.name())
    }

    /// A path came up: the first one tells the upper layer, which may refuse.
    pub(crate) fn path_up(self: &Arc<Self>) -> Result {
        let mut up = self.paths_up.lock();
        if *up == 0 {
            let ret = self
                .ctx
                .upper
                .link_ev(self, SrvLinkEv::Connected, UpperPriv::null());
            if ret != 0 {
                return Err(Error::from_errno(if ret < 0 { ret } else { -(ret) }));
            }
        }
        *up += 1;
        Ok(())
    }

    /// An established path went down: the last one tells the upper layer.
    pub(crate) fn path_down(self: &Arc<Self>) {
        let mut up = self.paths_up.lock();
        *up = up.saturating_sub(1);
        if *up == 0 {
            let priv_ = self.priv_.get();
            self.ctx.upper.link_ev(self, SrvLinkEv::Disconnected, priv_);
        }
    }

    /// Closes all paths (`close_paths()`).
    pub(crate) fn close_paths(&self) {
        let paths: KVec<Arc<Path>> = {
            let p = self.paths.lock();
            let mut v = KVec::new();
            for path in p.iter() {
                let _ = v.push(path.clone(), GFP_KERNEL);
            }
            v
        };
        for p in paths.iter() {
            p.close();
        }
    }
}
