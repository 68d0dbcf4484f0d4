#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# rtrs_heartbeat.sh with path 1 left to reconnect by itself after the
# silence, the reconnect delay, 30 s (make check writes its reconnect
# file), and with the close a signalled writer waits for, another 30 s
# (LONG=Y; not in make check): about 4 minutes.
export RECONNECT=${RECONNECT:-delay} LONG=${LONG:-Y}
exec "$(dirname "$0")/../rtrs_heartbeat.sh"
