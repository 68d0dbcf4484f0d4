/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trace event of rtrs-server: that of C's rtrs-srv-trace.h, with the
 * same system, name, fields and format, so that perf and trace-cmd read it
 * alike. It takes plain values: Rust fires it (server/trace.rs).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rtrs_srv

#if !defined(_TRACE_RTRS_RS_SRV_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_RTRS_RS_SRV_H

#include <linux/tracepoint.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/string.h>

/* C's enum rtrs_srv_state; rtrs_proto::state::SrvState has the same values. */
#ifndef RTRS_RS_SRV_STATE
#define RTRS_RS_SRV_STATE
enum rtrs_srv_state {
	RTRS_SRV_CONNECTING,
	RTRS_SRV_CONNECTED,
	RTRS_SRV_CLOSING,
	RTRS_SRV_CLOSED,
};
#endif

TRACE_DEFINE_ENUM(RTRS_SRV_CONNECTING);
TRACE_DEFINE_ENUM(RTRS_SRV_CONNECTED);
TRACE_DEFINE_ENUM(RTRS_SRV_CLOSING);
TRACE_DEFINE_ENUM(RTRS_SRV_CLOSED);

#define show_rtrs_srv_state(x) \
	__print_symbolic(x, \
		{ RTRS_SRV_CONNECTING,	"CONNECTING" }, \
		{ RTRS_SRV_CONNECTED,	"CONNECTED" }, \
		{ RTRS_SRV_CLOSING,	"CLOSING" }, \
		{ RTRS_SRV_CLOSED,	"CLOSED" })

TRACE_EVENT(send_io_resp_imm,
	TP_PROTO(u8 dir, bool need_inval, bool always_invalidate, u32 msg_id,
		 int wr_cnt, u32 signal_interval, int state, int errno,
		 const char *sessname),

	TP_ARGS(dir, need_inval, always_invalidate, msg_id, wr_cnt,
		signal_interval, state, errno, sessname),

	TP_STRUCT__entry(
		__field(u8, dir)
		__field(bool, need_inval)
		__field(bool, always_invalidate)
		__field(u32, msg_id)
		__field(int, wr_cnt)
		__field(u32, signal_interval)
		__field(int, state)
		__field(int, errno)
		__array(char, sessname, NAME_MAX)
	),

	TP_fast_assign(
		__entry->dir = dir;
		__entry->state = state;
		__entry->errno = errno;
		__entry->need_inval = need_inval;
		__entry->always_invalidate = always_invalidate;
		__entry->msg_id = msg_id;
		__entry->wr_cnt = wr_cnt;
		__entry->signal_interval = signal_interval;
		strscpy_pad(__entry->sessname, sessname, NAME_MAX);
	),

	TP_printk("sess='%s' state='%s' dir=%s err='%d' inval='%d' glob-inval='%d' msgid='%u' wrcnt='%d' sig-interval='%u'",
		   __entry->sessname,
		   show_rtrs_srv_state(__entry->state),
		   __print_symbolic(__entry->dir,
			 { READ,  "READ" },
			 { WRITE, "WRITE" }),
		   __entry->errno,
		   __entry->need_inval,
		   __entry->always_invalidate,
		   __entry->msg_id,
		   __entry->wr_cnt,
		   __entry->signal_interval
	)
);

#endif /* _TRACE_RTRS_RS_SRV_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE rtrs_srv_trace
#include <trace/define_trace.h>
