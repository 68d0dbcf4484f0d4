// SPDX-License-Identifier: GPL-2.0-or-later

//! Fences (RTRS 2.1, [`rtrs_proto::ext`]): a client failing IO over to a
//! path asks, on that path, that another path of the session be closed
//! and its IO answered before the failed-over IO comes.

use super::conn::Con;
use super::path::Path;
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::workqueue::{self, impl_has_work, new_work, Work, WorkItem};
use rtrs_common::now_ns;
use rtrs_proto::imm::Imm;

/// How long a fence waits for the closed path's IO before it gives up
/// without an answer (the client goes on at its own bound).
const FENCE_DRAIN_MS: u32 = 30_000;

/// One fence being answered, in process context: closing the path and
/// waiting for its IO sleep.
#[pin_data]
pub(crate) struct FenceJob {
    /// The path the fence came on, which answers.
    from: Arc<Path>,
    /// The path to close; gone already if `None`.
    target: Option<Arc<Path>>,
    seq: u16,
    #[pin]
    work: Work<FenceJob>,
}

impl_has_work! {
    impl HasWork<Self> for FenceJob { self.work }
}

impl FenceJob {
    /// Answers fence `seq` that came on `from` for the session's path
    /// `target_id`. Any context.
    pub(crate) fn start(from: &Arc<Path>, target_id: u16, seq: u16) {
        let target = from
            .sess
            .path_by_id(target_id)
            .filter(|t| !Arc::ptr_eq(t, from));
        let job = Arc::pin_init(
            pin_init!(FenceJob {
                from: from.clone(),
                target,
                seq,
                work <- new_work!("rtrs_srv_fence"),
            }),
            GFP_ATOMIC,
        );
        match job {
            Ok(job) => {
                // Not the server's queue: the job waits for a close work
                // that runs there.
                let _ = workqueue::system().enqueue(job);
            }
            Err(e) => {
                pr_err!(
                    "{}: fence {} for path {}: {}\n",
                    from.name(),
                    seq,
                    target_id,
                    e.to_errno()
                );
            }
        }
    }
}

impl WorkItem for FenceJob {
    type Pointer = Arc<FenceJob>;

    fn run(this: Arc<FenceJob>) {
        if let Some(t) = &this.target {
            let start = now_ns();
            pr_info!(
                "{}: closing path {} for IO that fails over from it\n",
                this.from.name(),
                t.name()
            );
            t.close();
            if !t.wait_quiet(FENCE_DRAIN_MS) {
                pr_err!(
                    "{}: path {} still has IO after {} ms; fence {} not answered\n",
                    this.from.name(),
                    t.name(),
                    FENCE_DRAIN_MS,
                    this.seq
                );
                return;
            }
            pr_info!(
                "{}: path {} closed and its IO answered in {} ms\n",
                this.from.name(),
                t.name(),
                (now_ns() - start) / 1_000_000
            );
        }
        let ack = Imm::FenceAck { seq: this.seq };
        if let Err(e) = this.from.cons.with(0, |id| Con::post_imm_empty(id, ack)) {
            pr_err!(
                "{}: fence {} answer failed: {}\n",
                this.from.name(),
                this.seq,
                e.to_errno()
            );
        }
    }
}
