#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# rnbd_rxe_unload.sh for our stack and C's, the control (make check runs
# ours only), the path that lost the server's device reconnecting by
# itself after the reconnect delay: about 8 minutes.
export STACKS=${STACKS:-rnbd c}
export RECONNECT=${RECONNECT:-delay}
exec "$(dirname "$0")/../rnbd_rxe_unload.sh"
