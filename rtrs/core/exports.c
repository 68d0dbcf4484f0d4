// SPDX-License-Identifier: GPL-2.0-or-later
/* The symbols rtrs-core exports, defined in Rust (abi.rs beside this file). */
#include <linux/export.h>
#include "rtrs.h"

EXPORT_SYMBOL(rtrs_addr_to_sockaddr);
EXPORT_SYMBOL(sockaddr_to_str);
EXPORT_SYMBOL(rtrs_addr_to_str);
