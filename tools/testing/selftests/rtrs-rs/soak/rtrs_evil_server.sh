#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# rtrs_evil_server.sh against our client and C's, the control (make check
# runs ours only): about 8 minutes.
export CLIENTS=${CLIENTS:-rs c}
exec "$(dirname "$0")/../rtrs_evil_server.sh"
