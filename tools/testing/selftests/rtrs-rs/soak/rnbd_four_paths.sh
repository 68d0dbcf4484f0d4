#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# topology=servers=1 clients=1 links=4
# rnbd_four_paths.sh with C's client's policies measured too, the control,
# and 60 switches of the policy under runs of 4 MiB (make check measures
# ours only, and switches 30 times under runs of 2 MiB): about 4 minutes.
export CLIENTS=${CLIENTS:-rnbd c} SWITCH_ROUNDS=${SWITCH_ROUNDS:-20} IO_MIB=${IO_MIB:-4}
exec "$(dirname "$0")/../rnbd_four_paths.sh"
