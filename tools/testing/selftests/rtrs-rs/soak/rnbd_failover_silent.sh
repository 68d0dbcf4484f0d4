#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# rnbd_failover_silent.sh with 24 MiB of writes in each silent run and
# path 1 left to reconnect by itself after the reconnect delay, 30 s (make
# check: 6 MiB, and its reconnect file): about 5 minutes.
export SILENT_MIB=${SILENT_MIB:-24} RECONNECT=${RECONNECT:-delay}
exec "$(dirname "$0")/../rnbd_failover_silent.sh"
