#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# rnbd_clt.sh with C's client's own cases, the control, our rnbd-client on
# C's RTRS as well as on ours, the map to a silent server left to fail
# after the connection's 30 s, and rnbd_fio_matrix's runs of 4 MiB (make
# check runs ours on our RTRS, signals that map's writer and runs the
# matrix with 2 MiB): about 5 minutes.
export STACKS=${STACKS:-c rnbd rnbd-c} SILENT_MAP=${SILENT_MAP:-timeout} MATRIX_MIB=${MATRIX_MIB:-4}
exec "$(dirname "$0")/../rnbd_clt.sh"
