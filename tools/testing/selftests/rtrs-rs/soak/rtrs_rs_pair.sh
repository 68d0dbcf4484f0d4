#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# rtrs_rs_pair.sh with the path the server disconnected coming back by
# itself, after the reconnect delay, 30 s, and the backoff (make check
# writes its reconnect file): about 2.5 minutes.
export RECONNECT=${RECONNECT:-delay}
exec "$(dirname "$0")/../rtrs_rs_pair.sh"
