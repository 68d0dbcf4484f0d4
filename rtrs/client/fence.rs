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

/// Fences a session waits for at once, at most (one per path failing at
/// the same time): a close that finds no room fences its chunks instead.
const PENDING: usize = 8;

/// A fence waited for: the path it names, its number, and whether the
/// answer came.
#[derive(Clone, Copy)]
struct Pending {
    path_id: u16,
    seq: u16,
    acked: bool,
}

/// A session's fences: their numbers, and those waited for.
///
/// # Locking
///
/// `pending` is a leaf (irq-safe: answers come in completions); waiters
/// for an answer sleep on it. Only a fence registered there before it was
/// sent is answered, so a late answer to one given up never counts.
#[pin_data]
pub(crate) struct Fences {
    next: AtomicU16,
    #[pin]
    pending: Waitable<[Option<Pending>; PENDING], SpinLockIrqBackend>,
}

impl Fences {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Fences {
            next: AtomicU16::new(0),
            pending <- new_waitable!([None; PENDING], "rtrs_clt_fences"),
        })
    }

    /// The fence for `path_id` numbered `seq` was answered (FENCE_ACK);
    /// ignored unless it is waited for. Any context.
    pub(crate) fn acked(&self, path_id: u16, seq: u16) {
        self.pending.update(|p| {
            for f in p.iter_mut().flatten() {
                if f.path_id == path_id && f.seq == seq {
                    f.acked = true;
                }
            }
        });
    }

    /// Registers a fence for `path_id`: its number, or `None` if as many
    /// as `PENDING` are waited for.
    fn register(&self, path_id: u16) -> Option<u16> {
        let seq = self.next.fetch_add(1, Ordering::Relaxed) & FENCE_SEQ_MASK as u16;
        let mut p = self.pending.lock();
        let slot = p.iter_mut().find(|f| f.is_none())?;
        *slot = Some(Pending {
            path_id,
            seq,
            acked: false,
        });
        Some(seq)
    }

    /// Waits up to `ms` for the answer to fence `seq` of `path_id`; true
    /// if it came. The fence stays registered: see [`Fences::forget`].
    fn wait(&self, path_id: u16, seq: u16, ms: u32) -> bool {
        let mine = |f: &Option<Pending>| f.is_some_and(|f| f.path_id == path_id && f.seq == seq);
        self.pending.wait_for(ms, |p| {
            p.iter()
                .find(|f| mine(f))
                .is_some_and(|f| f.is_some_and(|f| f.acked))
        })
    }

    /// Forgets fence `seq` of `path_id`; true if it was answered. Does not
    /// sleep: any context.
    pub(crate) fn forget(&self, path_id: u16, seq: u16) -> bool {
        self.pending.update(|p| {
            let mut acked = false;
            for f in p.iter_mut() {
                if f.is_some_and(|f| f.path_id == path_id && f.seq == seq) {
                    acked = f.is_some_and(|f| f.acked);
                    *f = None;
                }
            }
            acked
        })
    }

    /// Asks the server, on a connected path of `paths` other than `from`
    /// that runs RTRS 2.1, to close `from` and answer its IO: the fence's
    /// path id, number and the path it went on. `None` if `from` or every other
    /// path runs 2.0. Any context (the caller reads `paths` under RCU).
    pub(crate) fn send(&self, from: &Path, paths: &[Arc<Path>]) -> Option<(u16, u16, Arc<Path>)> {
        let srv = from.srv();
        if !srv.ext.fence || srv.path_id == 0 {
            return None;
        }
        let seq = self.register(srv.path_id)?;
        let imm = Imm::Fence {
            path_id: srv.path_id,
            seq,
        };
        let on = paths.iter().find(|p| {
            !core::ptr::eq(&***p, from)
                && p.state() == CltState::Connected
                && p.srv().ext.fence
                && p.cons.with(0, |id| Con::post_imm_empty(id, imm)).is_ok()
        });
        match on {
            Some(on) => Some((srv.path_id, seq, on.clone())),
            None => {
                // Sent nowhere: forget it at once (the caller holds the
                // RCU read lock: no sleeping).
                self.forget(srv.path_id, seq);
                None
            }
        }
    }

    /// Waits up to `FENCE_ACK_MS` for the answer to fence `seq` of path
    /// `from` (the server's `path_id`), sent on `on`; true if it came.
    /// The fence stays registered either way, so that an answer that comes
    /// later is still seen: the caller forgets it. Process context.
    pub(crate) fn wait_answer(&self, from: &Path, path_id: u16, seq: u16, on: &Path) -> bool {
        let start = now_ns();
        let acked = self.wait(path_id, seq, FENCE_ACK_MS);
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
                "{}: no answer to the fence on {} in {} ms; failing the IO over on fenced chunks\n",
                from.name(),
                on.name(),
                ms
            );
        }
        acked
    }
}
