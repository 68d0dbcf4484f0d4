// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The IMM helpers of rtrs-pri.h are static inlines: these one-line shims let
 * rb_test_wire.rs compare our encoding with them.
 */
#include "rtrs-pri.h"

u32 rb_test_wire_to_imm(u32 type, u32 payload) { return rtrs_to_imm(type, payload); }
u32 rb_test_wire_to_io_req_imm(u32 addr) { return rtrs_to_io_req_imm(addr); }
u32 rb_test_wire_to_io_rsp_imm(u32 msg_id, int errno, bool w_inval) { return rtrs_to_io_rsp_imm(msg_id, errno, w_inval); }
void rb_test_wire_from_io_rsp_imm(u32 payload, u32 *msg_id, int *errno) { rtrs_from_io_rsp_imm(payload, msg_id, errno); }
