/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trace events of rtrs-client: those of C's rtrs-clt-trace.h, with the
 * same system, names, fields and format, so that perf and trace-cmd read
 * them alike. They take plain values: Rust fires them (client/trace.rs).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rtrs_clt

#if !defined(_TRACE_RTRS_RS_CLT_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_RTRS_RS_CLT_H

#include <linux/tracepoint.h>
#include <linux/limits.h>
#include <linux/string.h>

/* C's enum rtrs_clt_state; rtrs_proto::state::CltState has the same values. */
#ifndef RTRS_RS_CLT_STATE
#define RTRS_RS_CLT_STATE
enum rtrs_clt_state {
	RTRS_CLT_CONNECTING,
	RTRS_CLT_CONNECTING_ERR,
	RTRS_CLT_RECONNECTING,
	RTRS_CLT_CONNECTED,
	RTRS_CLT_CLOSING,
	RTRS_CLT_CLOSED,
	RTRS_CLT_DEAD,
};
#endif

TRACE_DEFINE_ENUM(RTRS_CLT_CONNECTING);
TRACE_DEFINE_ENUM(RTRS_CLT_CONNECTING_ERR);
TRACE_DEFINE_ENUM(RTRS_CLT_RECONNECTING);
TRACE_DEFINE_ENUM(RTRS_CLT_CONNECTED);
TRACE_DEFINE_ENUM(RTRS_CLT_CLOSING);
TRACE_DEFINE_ENUM(RTRS_CLT_CLOSED);
TRACE_DEFINE_ENUM(RTRS_CLT_DEAD);

#define show_rtrs_clt_state(x) \
	__print_symbolic(x, \
		{ RTRS_CLT_CONNECTING,		"CONNECTING" }, \
		{ RTRS_CLT_CONNECTING_ERR,	"CONNECTING_ERR" }, \
		{ RTRS_CLT_RECONNECTING,	"RECONNECTING" }, \
		{ RTRS_CLT_CONNECTED,		"CONNECTED" }, \
		{ RTRS_CLT_CLOSING,		"CLOSING" }, \
		{ RTRS_CLT_CLOSED,		"CLOSED" }, \
		{ RTRS_CLT_DEAD,		"DEAD" })

DECLARE_EVENT_CLASS(rtrs_clt_conn_class,
	TP_PROTO(int state, int reconnect_attempts, int max_reconnect_attempts,
		 int fail_cnt, int success_cnt, const char *sessname),

	TP_ARGS(state, reconnect_attempts, max_reconnect_attempts, fail_cnt,
		success_cnt, sessname),

	TP_STRUCT__entry(
		__field(int, state)
		__field(int, reconnect_attempts)
		__field(int, max_reconnect_attempts)
		__field(int, fail_cnt)
		__field(int, success_cnt)
		__array(char, sessname, NAME_MAX)
	),

	TP_fast_assign(
		__entry->state = state;
		__entry->reconnect_attempts = reconnect_attempts;
		__entry->max_reconnect_attempts = max_reconnect_attempts;
		__entry->fail_cnt = fail_cnt;
		__entry->success_cnt = success_cnt;
		strscpy_pad(__entry->sessname, sessname, NAME_MAX);
	),

	TP_printk("RTRS-CLT: sess='%s' state=%s attempts='%d' max-attempts='%d' fail='%d' success='%d'",
		   __entry->sessname,
		   show_rtrs_clt_state(__entry->state),
		   __entry->reconnect_attempts,
		   __entry->max_reconnect_attempts,
		   __entry->fail_cnt,
		   __entry->success_cnt
	)
);

#define DEFINE_CLT_CONN_EVENT(name) \
DEFINE_EVENT(rtrs_clt_conn_class, rtrs_##name, \
	TP_PROTO(int state, int reconnect_attempts, int max_reconnect_attempts, \
		 int fail_cnt, int success_cnt, const char *sessname), \
	TP_ARGS(state, reconnect_attempts, max_reconnect_attempts, fail_cnt, \
		success_cnt, sessname))

DEFINE_CLT_CONN_EVENT(clt_reconnect_work);
DEFINE_CLT_CONN_EVENT(clt_close_conns);
DEFINE_CLT_CONN_EVENT(rdma_error_recovery);

#endif /* _TRACE_RTRS_RS_CLT_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE rtrs_clt_trace
#include <trace/define_trace.h>
