// SPDX-License-Identifier: GPL-2.0-or-later

//! The server's module parameters (`always_invalidate`, `max_chunk_size`,
//! `sess_queue_depth`), with the C defaults and checks, and ours
//! (`proto_ext`).

use kernel::prelude::*;
use rb::param::{module_param, BoolParam, IntParam};
use rtrs_common::kerr;
use rtrs_proto::imm::{self, BadChunkParams};
use rtrs_proto::msg::{MAX_SESS_QUEUE_DEPTH, MIN_CHUNK_SIZE};

module_param! {
    /// `always_invalidate`.
    static ALWAYS_INVALIDATE: BoolParam = BoolParam::new(true);
    name: always_invalidate, perm: 0o444,
    desc: "Invalidate memory registration for contiguous memory regions before accessing.";
}

module_param! {
    /// `max_chunk_size`.
    static MAX_CHUNK_SIZE: IntParam = IntParam::new(imm::DEFAULT_MAX_CHUNK_SIZE as i32);
    name: max_chunk_size, perm: 0o444,
    desc: "Max size for each IO request, when change the unit is in byte (default: (128 << 10)KB)";
}

module_param! {
    /// `sess_queue_depth`.
    static SESS_QUEUE_DEPTH: IntParam = IntParam::new(imm::DEFAULT_SESS_QUEUE_DEPTH as i32);
    name: sess_queue_depth, perm: 0o444,
    desc: "Number of buffers for pending I/O requests to allocate per session. Maximum: 65535 (default: 512)";
}

module_param! {
    /// `proto_ext`: ours.
    static PROTO_EXT: BoolParam = BoolParam::new(true);
    name: proto_ext, perm: 0o644,
    desc: "Speak RTRS 2.1, rtrs-rs's extensions (failover fences, one-message read responses), with clients that offer it; N pins 2.0 (default: Y)";
}

/// Whether new paths may run RTRS 2.1 (`proto_ext`, read when a path
/// comes).
pub(crate) fn proto_ext() -> bool {
    PROTO_EXT.value()
}

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
            always_invalidate: ALWAYS_INVALIDATE.value(),
            // Checked at load (`check`); a negative value reads as huge and
            // fails there too.
            max_chunk_size: MAX_CHUNK_SIZE.value() as u32,
            queue_depth: SESS_QUEUE_DEPTH.value() as u32,
        }
    }

    /// `check_module_params()`: EINVAL, with C's two messages (which check
    /// failed, then that the load failed), if unusable.
    pub(crate) fn check(&self) -> Result {
        // As the user gave them (C prints them signed): `get` keeps the
        // parameters' bits.
        let (depth, chunk) = (self.queue_depth as i32, self.max_chunk_size as i32);
        imm::check_chunk_params(depth, chunk).map_err(|bad| {
            match bad {
                BadChunkParams::QueueDepth => pr_err!(
                    "Invalid sess_queue_depth value {}, has to be >= {}, <= {}.\n",
                    depth,
                    1,
                    MAX_SESS_QUEUE_DEPTH
                ),
                BadChunkParams::ChunkSize => pr_err!(
                    "Invalid max_chunk_size value {}, has to be >= {} and should be power of two.\n",
                    chunk,
                    MIN_CHUNK_SIZE
                ),
                BadChunkParams::ImmBits => pr_err!(
                    "RDMA immediate size ({}b) not enough to encode {} buffers of size {}B. Reduce 'sess_queue_depth' or 'max_chunk_size' parameters.\n",
                    imm::MAX_IMM_PAYL_BITS,
                    depth,
                    chunk
                ),
            }
            let e = bad.errno();
            pr_err!(
                "Failed to load module, invalid module parameters, err: {}\n",
                e.to_errno()
            );
            kerr(e)
        })
    }
}
