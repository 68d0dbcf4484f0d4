#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# rtrs_heartbeat.sh with path 1 left to reconnect by itself after the
# silence, the reconnect delay, 30 s (make check writes its reconnect
# file): about 4 minutes.
export RECONNECT=${RECONNECT:-delay}
exec "$(dirname "$0")/../rtrs_heartbeat.sh"
