#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# rnbd_clt.sh with C's client's own cases, the control, and our
# rnbd-client on C's RTRS as well as on ours (make check runs ours on our
# RTRS): about 4.5 minutes.
export STACKS=${STACKS:-c rnbd rnbd-c}
exec "$(dirname "$0")/../rnbd_clt.sh"
