#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# rtrs_evil_client.sh against our server and C's, the control, with the
# zombie scenario, which waits out 30 s (make check runs ours only,
# without it): about 5 minutes.
export SERVERS=${SERVERS:-rs c} LONG=${LONG:-Y}
exec "$(dirname "$0")/../rtrs_evil_client.sh"
