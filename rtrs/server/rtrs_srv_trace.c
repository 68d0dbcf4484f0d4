// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The trace event of rtrs-server (rtrs_srv_trace.h), and the shims by which
 * Rust fires it (rb::declare_trace!, server/trace.rs): one line each.
 */
#define CREATE_TRACE_POINTS
#include "rtrs_srv_trace.h"

void rb_trace_send_io_resp_imm(u8 dir, bool need_inval, bool always_invalidate, u32 msg_id, int wr_cnt, u32 signal_interval, int state, int errno, const char *sessname)
{ trace_send_io_resp_imm(dir, need_inval, always_invalidate, msg_id, wr_cnt, signal_interval, state, errno, sessname); }
bool rb_trace_send_io_resp_imm_enabled(void) { return trace_send_io_resp_imm_enabled(); }
