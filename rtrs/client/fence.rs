// SPDX-License-Identifier: GPL-2.0-or-later

//! Fences (RTRS 2.1, [`rtrs_proto::ext`]): before IO fails over from a
//! path whose close the server has not confirmed, the client asks the
//! server, on another path, to close that path and answer its IO first.
//! Once it has, nothing of the old path lands any more, not even a copy
//! of a failed-over write still running on the server: the IO fails over
//! on its own chunks, and no chunk is fenced.

use super::conn::Con;
use super::path::Path;
use core::sync::atomic::{AtomicU16, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::sync::{new_waitable, SpinLockIrqBackend, Waitable};
use rtrs_common::now_ns;
use rtrs_proto::imm::{Imm, FENCE_SEQ_MASK};
use rtrs_proto::state::CltState;

/// How long a failover waits for the server's answer to a fence before it
/// goes on with the chunks fenced. The server answers once the path's IO
/// is answered: within milliseconds, unless its disk is slow.
const FENCE_ACK_MS: u32 = 5000;

/// Fences answered, not yet seen by their waiters: a few at once at most
/// (one per path failing at the same time).
const ACKED: usize = 8;

/// A session's fences: their numbers, and the answers that came.
///
/// # Locking
///
/// `acked` is a leaf (irq-safe: answers come in completions); waiters for
/// an answer sleep on it.
#[pin_data]
pub(crate) struct Fences {
    next: AtomicU16,
    #[pin]
    acked: Waitable<[Option<u16>; ACKED], SpinLockIrqBackend>,
}

impl Fences {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Fences {
            next: AtomicU16::new(0),
            acked <- new_waitable!([None; ACKED], "rtrs_clt_fences_acked"),
        })
    }

    /// Fence `seq` was answered (FENCE_ACK). Any context.
    pub(crate) fn acked(&self, seq: u16) {
        self.acked.update(|a| {
            // The oldest answer makes room: its waiter gave up long ago.
            a.rotate_right(1);
            a[0] = Some(seq);
        });
    }

    /// Waits up to `ms` for the answer to fence `seq`; true if it came.
    fn wait(&self, seq: u16, ms: u32) -> bool {
        self.acked
            .wait_for(ms, |a| match a.iter_mut().find(|s| **s == Some(seq)) {
                Some(s) => {
                    *s = None;
                    true
                }
                None => false,
            })
    }

    /// Asks the server, on a connected path of `paths` other than `from`
    /// that runs RTRS 2.1, to close `from` and answer its IO: the fence's
    /// number and the path it went on. `None` if `from` or every other
    /// path runs 2.0. Any context (the caller reads `paths` under RCU).
    pub(crate) fn send(&self, from: &Path, paths: &[Arc<Path>]) -> Option<(u16, Arc<Path>)> {
        let srv = from.srv();
        if !srv.ext.fence || srv.path_id == 0 {
            return None;
        }
        let seq = self.next.fetch_add(1, Ordering::Relaxed) & FENCE_SEQ_MASK as u16;
        let imm = Imm::Fence {
            path_id: srv.path_id,
            seq,
        };
        let on = paths.iter().find(|p| {
            !core::ptr::eq(&***p, from)
                && p.state() == CltState::Connected
                && p.srv().ext.fence
                && p.cons.with(0, |id| Con::post_imm_empty(id, imm)).is_ok()
        })?;
        Some((seq, on.clone()))
    }

    /// Waits up to `FENCE_ACK_MS` for the answer to fence `seq` of path
    /// `from`, sent on `on`; true if it came. Process context.
    pub(crate) fn wait_answer(&self, from: &Path, seq: u16, on: &Path) -> bool {
        let start = now_ns();
        let acked = self.wait(seq, FENCE_ACK_MS);
        let ms = (now_ns() - start) / 1_000_000;
        if acked {
            pr_info!(
                "{}: the server closed the path and answered its IO in {} ms (fence on {})\n",
                from.name(),
                ms,
                on.name()
            );
        } else {
            pr_warn!(
                "{}: no answer to the fence on {} in {} ms; failing the IO over anyway\n",
                from.name(),
                on.name(),
                ms
            );
        }
        acked
    }
}
