#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# rnbd_srv.sh with the whole flow on the C server first, the control and
# the reference, our rnbd-server on C's rtrs-server as well as on ours, and
# rnbd_fio_matrix's runs of 4 MiB (make check runs ours on ours, with runs
# of 2 MiB): about 4 minutes.
export STACKS=${STACKS:-c rnbd rnbd-c} MATRIX_MIB=${MATRIX_MIB:-4}
exec "$(dirname "$0")/../rnbd_srv.sh"
