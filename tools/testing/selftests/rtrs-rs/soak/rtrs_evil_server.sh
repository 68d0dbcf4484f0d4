#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# rtrs_evil_server.sh against our client and C's, the control, with the
# client's default IO deadline, 50 s, and with the scenarios that wait out
# the connection's 30 s and the heartbeats' 35 s (make check runs ours
# only, with 5 s, without those three): about 8 minutes.
export CLIENTS=${CLIENTS:-rs c} LONG=${LONG:-Y}
export IO_DEADLINE_S=${IO_DEADLINE_S:-50}
exec "$(dirname "$0")/../rtrs_evil_server.sh"
