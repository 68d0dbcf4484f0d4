// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The trace events of rtrs-client (rtrs_clt_trace.h), and the shims by which Rust
 * fires them (rb::declare_trace!, client/trace.rs): one line each.
 */
#define CREATE_TRACE_POINTS
#include "rtrs_clt_trace.h"

#define RB_TRACE_CLT_CONN(name)						\
void rb_trace_rtrs_##name(int state, int attempts, int max, int fail,	\
			  int success, const char *sessname)		\
{ trace_rtrs_##name(state, attempts, max, fail, success, sessname); }	\
bool rb_trace_rtrs_##name##_enabled(void)				\
{ return trace_rtrs_##name##_enabled(); }

RB_TRACE_CLT_CONN(clt_reconnect_work)
RB_TRACE_CLT_CONN(clt_close_conns)
RB_TRACE_CLT_CONN(rdma_error_recovery)
