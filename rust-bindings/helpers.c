// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * C shims for what bindgen cannot bind: static inline functions and
 * function-like macros. One line each, no logic. Bound to Rust by a bindgen
 * run over this file (see ../Kbuild), with the rb_helper_ prefix removed.
 * Every module links a private copy (helpers-<module>.o).
 */
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

int rb_helper_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad_wr)
{
	return ib_post_send(qp, wr, bad_wr);
}

void rb_helper_dev_set_uevent_suppress(struct device *dev, int val)
{
	dev_set_uevent_suppress(dev, val);
}
