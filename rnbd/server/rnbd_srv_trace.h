/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trace events of rnbd-server: those of C's rnbd-srv-trace.h, with the
 * same system, names, fields and format, so that perf and trace-cmd read
 * them alike. They take plain values: Rust fires them (server/trace.rs).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rnbd_srv

#if !defined(_TRACE_RNBD_RS_SRV_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_RNBD_RS_SRV_H

#include <linux/tracepoint.h>
#include <linux/kernel.h>
#include "rnbd-proto.h"

DECLARE_EVENT_CLASS(rnbd_srv_link_class,
	TP_PROTO(int qdepth, const char *sessname),

	TP_ARGS(qdepth, sessname),

	TP_STRUCT__entry(
		__field(int, qdepth)
		__string(sessname, sessname)
	),

	TP_fast_assign(
		__entry->qdepth = qdepth;
		__assign_str(sessname);
	),

	TP_printk("sessname: %s qdepth: %d",
		   __get_str(sessname),
		   __entry->qdepth
	)
);

#define DEFINE_LINK_EVENT(name) \
DEFINE_EVENT(rnbd_srv_link_class, name, \
	TP_PROTO(int qdepth, const char *sessname), \
	TP_ARGS(qdepth, sessname))

DEFINE_LINK_EVENT(create_sess);
DEFINE_LINK_EVENT(destroy_sess);

TRACE_DEFINE_ENUM(RNBD_OP_READ);
TRACE_DEFINE_ENUM(RNBD_OP_WRITE);
TRACE_DEFINE_ENUM(RNBD_OP_FLUSH);
TRACE_DEFINE_ENUM(RNBD_OP_DISCARD);
TRACE_DEFINE_ENUM(RNBD_OP_SECURE_ERASE);
TRACE_DEFINE_ENUM(RNBD_F_SYNC);
TRACE_DEFINE_ENUM(RNBD_F_FUA);

#define show_rnbd_rw_flags(x) \
	__print_flags(x, "|", \
		{ RNBD_OP_READ,		"READ" }, \
		{ RNBD_OP_WRITE,	"WRITE" }, \
		{ RNBD_OP_FLUSH,	"FLUSH" }, \
		{ RNBD_OP_DISCARD,	"DISCARD" }, \
		{ RNBD_OP_SECURE_ERASE,	"SECURE_ERASE" }, \
		{ RNBD_F_SYNC,		"SYNC" }, \
		{ RNBD_F_FUA,		"FUA" })

TRACE_EVENT(process_rdma,
	TP_PROTO(const char *sessname, u8 dir, u8 ver, u32 device_id,
		 u64 sector, u32 flags, u32 bi_size, u16 ioprio, u32 datalen,
		 size_t usrlen),

	TP_ARGS(sessname, dir, ver, device_id, sector, flags, bi_size, ioprio,
		datalen, usrlen),

	TP_STRUCT__entry(
		__string(sessname, sessname)
		__field(u8, dir)
		__field(u8, ver)
		__field(u32, device_id)
		__field(u64, sector)
		__field(u32, flags)
		__field(u32, bi_size)
		__field(u16, ioprio)
		__field(u32, datalen)
		__field(size_t, usrlen)
	),

	TP_fast_assign(
		__assign_str(sessname);
		__entry->dir = dir;
		__entry->ver = ver;
		__entry->device_id = device_id;
		__entry->sector = sector;
		__entry->bi_size = bi_size;
		__entry->flags = flags;
		__entry->ioprio = ioprio;
		__entry->datalen = datalen;
		__entry->usrlen = usrlen;
	),

	TP_printk("I/O req: sess: %s, type: %s, ver: %d, devid: %u, sector: %llu, bsize: %u, flags: %s, ioprio: %d, datalen: %u, usrlen: %zu",
		   __get_str(sessname),
		   __print_symbolic(__entry->dir,
			 { READ,  "READ" },
			 { WRITE, "WRITE" }),
		   __entry->ver,
		   __entry->device_id,
		   __entry->sector,
		   __entry->bi_size,
		   show_rnbd_rw_flags(__entry->flags),
		   __entry->ioprio,
		   __entry->datalen,
		   __entry->usrlen
	)
);

TRACE_EVENT(process_msg_sess_info,
	TP_PROTO(u8 proto_ver, u8 clt_ver, u8 srv_ver, const char *sessname),

	TP_ARGS(proto_ver, clt_ver, srv_ver, sessname),

	TP_STRUCT__entry(
		__field(u8, proto_ver)
		__field(u8, clt_ver)
		__field(u8, srv_ver)
		__string(sessname, sessname)
	),

	TP_fast_assign(
		__entry->proto_ver = proto_ver;
		__entry->clt_ver = clt_ver;
		__entry->srv_ver = srv_ver;
		__assign_str(sessname);
	),

	TP_printk("Session %s using proto-ver %d (clt-ver: %d, srv-ver: %d)",
		   __get_str(sessname),
		   __entry->proto_ver,
		   __entry->clt_ver,
		   __entry->srv_ver
	)
);

TRACE_DEFINE_ENUM(RNBD_ACCESS_RO);
TRACE_DEFINE_ENUM(RNBD_ACCESS_RW);
TRACE_DEFINE_ENUM(RNBD_ACCESS_MIGRATION);

#define show_rnbd_access_mode(x) \
	__print_symbolic(x, \
		{ RNBD_ACCESS_RO,		"RO" }, \
		{ RNBD_ACCESS_RW,		"RW" }, \
		{ RNBD_ACCESS_MIGRATION,	"MIGRATION" })

TRACE_EVENT(process_msg_open,
	TP_PROTO(u8 access_mode, const char *sessname, const char *dev_name),

	TP_ARGS(access_mode, sessname, dev_name),

	TP_STRUCT__entry(
		__field(u8, access_mode)
		__string(sessname, sessname)
		__string(dev_name, dev_name)
	),

	TP_fast_assign(
		__entry->access_mode = access_mode;
		__assign_str(sessname);
		__assign_str(dev_name);
	),

	TP_printk("Open message received: session='%s' path='%s' access_mode=%s",
		   __get_str(sessname),
		   __get_str(dev_name),
		   show_rnbd_access_mode(__entry->access_mode)
	)
);

TRACE_EVENT(process_msg_close,
	TP_PROTO(u32 device_id, const char *sessname),

	TP_ARGS(device_id, sessname),

	TP_STRUCT__entry(
		__field(u32, device_id)
		__string(sessname, sessname)
	),

	TP_fast_assign(
		__entry->device_id = device_id;
		__assign_str(sessname);
	),

	TP_printk("Close message received: session='%s' device id='%d'",
		   __get_str(sessname),
		   __entry->device_id
	)
);

#endif /* _TRACE_RNBD_RS_SRV_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE rnbd_srv_trace
#include <trace/define_trace.h>
