#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# rnbd_rxe_unload.sh for our stack and C's, the control (make check runs
# ours only): about 7 minutes.
export STACKS=${STACKS:-rnbd c}
exec "$(dirname "$0")/../rnbd_rxe_unload.sh"
