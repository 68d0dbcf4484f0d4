#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=3600
# topology=servers=2 clients=1 links=2 smp=1
# rnbd_raid1_servers.sh at length: the array over the servers' whole disks
# (the pattern, the resync and the read back of 256 MiB each), 120 s of
# verified IO around the kill, and the session to server2 back by itself
# after the reconnect delay (make check writes its paths' reconnect files).
export ARRAY_MIB=${ARRAY_MIB:-0} IO_SECONDS=${IO_SECONDS:-120} RECONNECT=${RECONNECT:-delay}
exec "$(dirname "$0")/../rnbd_raid1_servers.sh"
