// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The trace events of rnbd-server (rnbd_srv_trace.h), and the shims by which
 * Rust fires them (rb::declare_trace!, server/trace.rs): one line each.
 */
#define CREATE_TRACE_POINTS
#include "rnbd_srv_trace.h"

void rb_trace_create_sess(int qdepth, const char *sessname) { trace_create_sess(qdepth, sessname); }
bool rb_trace_create_sess_enabled(void) { return trace_create_sess_enabled(); }
void rb_trace_destroy_sess(int qdepth, const char *sessname) { trace_destroy_sess(qdepth, sessname); }
bool rb_trace_destroy_sess_enabled(void) { return trace_destroy_sess_enabled(); }
void rb_trace_process_rdma(const char *sessname, u8 dir, u8 ver, u32 device_id, u64 sector, u32 flags, u32 bi_size, u16 ioprio, u32 datalen, size_t usrlen)
{ trace_process_rdma(sessname, dir, ver, device_id, sector, flags, bi_size, ioprio, datalen, usrlen); }
bool rb_trace_process_rdma_enabled(void) { return trace_process_rdma_enabled(); }
void rb_trace_process_msg_sess_info(u8 proto_ver, u8 clt_ver, u8 srv_ver, const char *sessname)
{ trace_process_msg_sess_info(proto_ver, clt_ver, srv_ver, sessname); }
bool rb_trace_process_msg_sess_info_enabled(void) { return trace_process_msg_sess_info_enabled(); }
void rb_trace_process_msg_open(u8 access_mode, const char *sessname, const char *dev_name)
{ trace_process_msg_open(access_mode, sessname, dev_name); }
bool rb_trace_process_msg_open_enabled(void) { return trace_process_msg_open_enabled(); }
void rb_trace_process_msg_close(u32 device_id, const char *sessname) { trace_process_msg_close(device_id, sessname); }
bool rb_trace_process_msg_close_enabled(void) { return trace_process_msg_close_enabled(); }
