// SPDX-License-Identifier: GPL-2.0-or-later
/* The symbols rtrs-server exports, defined in Rust (abi.rs beside this file). */
#include <linux/export.h>
#include "rtrs.h"

EXPORT_SYMBOL(rtrs_srv_open);
EXPORT_SYMBOL(rtrs_srv_close);
EXPORT_SYMBOL(rtrs_srv_resp_rdma);
EXPORT_SYMBOL(rtrs_srv_set_sess_priv);
EXPORT_SYMBOL(rtrs_srv_get_path_name);
EXPORT_SYMBOL(rtrs_srv_get_queue_depth);
