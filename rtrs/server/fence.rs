// SPDX-License-Identifier: GPL-2.0-or-later

//! Fences (RTRS 2.1, [`rtrs_proto::ext`]): a client failing IO over to a
//! path asks, on that path, that another path of the session be closed
//! and its IO answered before the failed-over IO comes.
//!
//! A fence is answered by the close work of the path it names, once that
//! path is quiet (its QPs in the error state, its IO answered), or at once
//! if the session has no such path or it is quiet already. Nothing waits
//! for it: the answer is a pending entry of the named path.

use super::conn::Con;
use super::path::{FenceWait, Path};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::workqueue::{impl_has_work, new_work, Work, WorkItem};
use rtrs_proto::imm::Imm;

/// Answers fence `seq` for path `target_id` on path `on` (FENCE_ACK).
pub(crate) fn answer(on: &Path, target_id: u16, seq: u16) {
    let ack = Imm::FenceAck {
        path_id: target_id,
        seq,
    };
    if let Err(e) = on.cons.with(0, |id| Con::post_imm_empty(id, ack)) {
        pr_err!(
            "{}: the answer to fence {} failed: {}\n",
            on.name(),
            seq,
            e.to_errno()
        );
    }
}

/// A fence that came on a path, to look up the path it names: the lookup
/// takes the session's path list, which a completion handler does not.
#[pin_data]
pub(crate) struct FenceJob {
    from: Arc<Path>,
    target_id: u16,
    seq: u16,
    #[pin]
    work: Work<FenceJob>,
}

impl_has_work! {
    impl HasWork<Self> for FenceJob { self.work }
}

impl FenceJob {
    /// Fence `seq` came on `from` for the session's path `target_id`.
    /// Any context.
    pub(crate) fn start(from: &Arc<Path>, target_id: u16, seq: u16) {
        let job = Arc::pin_init(
            pin_init!(FenceJob {
                from: from.clone(),
                target_id,
                seq,
                work <- new_work!("rtrs_srv_fence"),
            }),
            GFP_ATOMIC,
        );
        match job {
            // On the server's queue, which `close` flushes.
            Ok(job) => {
                let _ = from.sess.ctx.wq.queue().enqueue(job);
            }
            Err(e) => pr_err!("{}: fence {}: {}\n", from.name(), seq, e.to_errno()),
        }
    }
}

impl WorkItem for FenceJob {
    type Pointer = Arc<FenceJob>;

    fn run(this: Arc<FenceJob>) {
        let target = this
            .from
            .sess
            .path_by_id(this.target_id)
            .filter(|t| !Arc::ptr_eq(t, &this.from));
        match target {
            Some(t) => {
                pr_info!(
                    "{}: closing path {} for IO that fails over from it\n",
                    this.from.name(),
                    t.name()
                );
                // The close work answers once the path is quiet, or we do
                // now if it already is.
                match t.fence_on_quiet(&this.from, this.seq) {
                    FenceWait::Quiet => answer(&this.from, this.target_id, this.seq),
                    FenceWait::Queued => {}
                    FenceWait::Full => pr_warn!(
                        "{}: fence {} for {}: too many fences wait; not answered\n",
                        this.from.name(),
                        this.seq,
                        t.name()
                    ),
                }
                t.close();
            }
            None => answer(&this.from, this.target_id, this.seq),
        }
    }
}
