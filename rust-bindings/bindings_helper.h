/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel headers rtrs-rs binds with bindgen (see ../Kbuild). Besides the
 * kernel APIs, the C RTRS and RNBD headers of the kernel tree are bound too:
 * the exported API keeps their layouts (rtrs.h), and the wire-format tests
 * compare our encodings with their structs (rtrs-pri.h, rnbd-proto.h).
 */
#include <linux/bio.h>
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/device.h>
#include <linux/inet.h>
#include <linux/kobject.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/sysfs.h>
#include <linux/uuid.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "rtrs.h"
#include "rtrs-pri.h"
#include "rnbd-proto.h"
#include <linux/completion.h>
#include <linux/hdreg.h>
