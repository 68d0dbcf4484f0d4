// SPDX-License-Identifier: GPL-2.0-or-later
/* The symbols rtrs-client exports, defined in Rust (abi.rs beside this file). */
#include <linux/export.h>
#include "rtrs.h"

EXPORT_SYMBOL(rtrs_clt_open);
EXPORT_SYMBOL(rtrs_clt_close);
EXPORT_SYMBOL(rtrs_clt_get_permit);
EXPORT_SYMBOL(rtrs_clt_put_permit);
EXPORT_SYMBOL(rtrs_clt_request);
EXPORT_SYMBOL(rtrs_clt_rdma_cq_direct);
EXPORT_SYMBOL(rtrs_clt_query);
