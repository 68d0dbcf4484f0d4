#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# rtrs_evil_client.sh against our server and C's, the control (make check
# runs ours only): about 4 minutes.
export SERVERS=${SERVERS:-rs c}
exec "$(dirname "$0")/../rtrs_evil_client.sh"
