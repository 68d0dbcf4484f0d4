#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1800
# rnbd_late_writes.sh at length: link 1 delayed 25 s, past the retries of
# the client's QP (rxe gives up on a packet unacknowledged for about 15 s,
# and C's client fails the path over then) and short of the server's own
# close of a path that has heard nothing for 35 s; ours in both directions
# at RTRS 2.1 and 2.0, and C's stack as the control: about 6 minutes.
export DELAY_S=${DELAY_S:-25}
export CASES=${CASES:-rnbd:rnbd:both rnbd:rnbd:client rnbd:rnbd:both:2.0 rnbd:rnbd:client:2.0 c:c:both c:c:client}
exec "$(dirname "$0")/../rnbd_late_writes.sh"
