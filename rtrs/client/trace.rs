// SPDX-License-Identifier: GPL-2.0-or-later

//! The trace events of C's rtrs-client (`rtrs_clt`), defined in `rtrs_clt_trace.h`
//! beside this file with the same fields and format.

use super::path::Path;
use core::sync::atomic::Ordering;
use kernel::str::CStr;
use rtrs_proto::reconnect::Attempts;

rb::declare_trace! {
    /// `trace_rtrs_clt_reconnect_work()`.
    fn rtrs_clt_reconnect_work(state: i32, attempts: i32, max: i32, fail: i32, success: i32, sessname: &CStr);
    /// `trace_rtrs_clt_close_conns()`.
    fn rtrs_clt_close_conns(state: i32, attempts: i32, max: i32, fail: i32, success: i32, sessname: &CStr);
    /// `trace_rtrs_rdma_error_recovery()`.
    fn rtrs_rdma_error_recovery(state: i32, attempts: i32, max: i32, fail: i32, success: i32, sessname: &CStr);
}

/// The events of a path (`rtrs_clt_conn_class`).
#[derive(Clone, Copy)]
pub(crate) enum PathEvent {
    ReconnectWork,
    CloseConns,
    ErrorRecovery,
}

impl PathEvent {
    fn enabled(self) -> bool {
        match self {
            Self::ReconnectWork => rtrs_clt_reconnect_work_enabled(),
            Self::CloseConns => rtrs_clt_close_conns_enabled(),
            Self::ErrorRecovery => rtrs_rdma_error_recovery_enabled(),
        }
    }
}

impl Path {
    /// Fires `ev` for this path, as C at the same places: its state, its
    /// reconnect attempts (-1 once they stopped) and counts, and the name of
    /// its sysfs directory.
    pub(crate) fn trace(&self, ev: PathEvent) {
        if !ev.enabled() {
            return;
        }
        let state = self.state() as i32;
        let attempts = match self.attempts() {
            Attempts::Tried(n) => n.min(i32::MAX as u32) as i32,
            Attempts::Stopped => -1,
        };
        let max = self.core.max_reconnect_attempts.load(Ordering::Relaxed);
        let fail = self.stats.reconnect_fail.load(Ordering::Relaxed);
        let success = self.stats.reconnect_ok.load(Ordering::Relaxed);
        let name = self.dir_name();
        let f = match ev {
            PathEvent::ReconnectWork => rtrs_clt_reconnect_work,
            PathEvent::CloseConns => rtrs_clt_close_conns,
            PathEvent::ErrorRecovery => rtrs_rdma_error_recovery,
        };
        f(state, attempts, max, fail, success, name.as_cstr());
    }
}
