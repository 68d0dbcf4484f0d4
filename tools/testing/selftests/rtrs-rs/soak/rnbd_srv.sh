#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# rnbd_srv.sh with the whole flow on the C server first, the control and
# the reference, and our rnbd-server on C's rtrs-server as well as on ours
# (make check runs ours on ours): about 4 minutes.
export STACKS=${STACKS:-c rnbd rnbd-c}
exec "$(dirname "$0")/../rnbd_srv.sh"
