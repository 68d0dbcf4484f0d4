#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# trace_events.sh with the client's reconnect after the server's
# disconnect left to the reconnect delay, 30 s (make check writes the
# path's reconnect file): about 2 minutes.
export RECONNECT=${RECONNECT:-delay}
exec "$(dirname "$0")/../trace_events.sh"
