// SPDX-License-Identifier: GPL-2.0-or-later

//! The trace event of C's rtrs-server (`rtrs_srv:send_io_resp_imm`),
//! defined in `rtrs_srv_trace.h` beside this file with the same fields and
//! format.

use kernel::str::CStr;

rb::declare_trace! {
    /// `trace_send_io_resp_imm()`.
    pub(crate) fn send_io_resp_imm(
        dir: u8,
        need_inval: bool,
        always_invalidate: bool,
        msg_id: u32,
        wr_cnt: i32,
        signal_interval: u32,
        state: i32,
        errno: i32,
        sessname: &CStr,
    );
}
