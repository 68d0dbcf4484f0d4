#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# topology=servers=1 clients=1 links=4
# rnbd_four_paths.sh with C's client's policies measured too, the control
# (make check measures ours only): about 4 minutes.
export CLIENTS=${CLIENTS:-rnbd c}
exec "$(dirname "$0")/../rnbd_four_paths.sh"
