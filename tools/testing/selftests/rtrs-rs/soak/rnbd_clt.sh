#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# rnbd_clt.sh with C's client's own cases, the control, our rnbd-client on
# C's RTRS as well as on ours, and the map to a silent server left to fail
# after the connection's 30 s (make check runs ours on our RTRS, and
# signals that map's writer): about 5 minutes.
export STACKS=${STACKS:-c rnbd rnbd-c} SILENT_MAP=${SILENT_MAP:-timeout}
exec "$(dirname "$0")/../rnbd_clt.sh"
