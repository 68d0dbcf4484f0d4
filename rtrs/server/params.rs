// SPDX-License-Identifier: GPL-2.0-or-later

//! The server's module parameters (`always_invalidate`, `max_chunk_size`,
//! `sess_queue_depth`), with the C defaults and checks.

use crate::common::kerr;
use crate::proto::imm;
use kernel::prelude::*;

/// Room for the user message and the RTRS message at the end of a chunk
/// (`MAX_HDR_SIZE`, a page in C).
pub(crate) const MAX_HDR_SIZE: u32 = kernel::page::PAGE_SIZE as u32;

/// The parameters in effect.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    /// Invalidate a chunk's registration before the server touches it and
    /// register a new key after (the C default: true).
    pub(crate) always_invalidate: bool,
    /// Size of a chunk: the largest IO plus `MAX_HDR_SIZE`.
    pub(crate) max_chunk_size: u32,
    /// Chunks per session.
    pub(crate) queue_depth: u32,
}

impl Params {
    /// The current values.
    pub(crate) fn get() -> Self {
        Self {
            always_invalidate: true,
            max_chunk_size: imm::DEFAULT_MAX_CHUNK_SIZE,
            queue_depth: imm::DEFAULT_SESS_QUEUE_DEPTH,
        }
    }

    /// `check_module_params()`: EINVAL, with the C's message, if unusable.
    pub(crate) fn check(&self) -> Result {
        imm::check_chunk_params(self.queue_depth as i32, self.max_chunk_size as i32).map_err(|e| {
            pr_err!(
                "Failed to load module, invalid module parameters (sess_queue_depth {}, max_chunk_size {}), err: {}\n",
                self.queue_depth,
                self.max_chunk_size,
                e.to_errno()
            );
            kerr(e)
        })
    }
}
