#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=3600
# topology=servers=1 clients=3 links=2 smp=1
# rnbd_many_clients.sh at length: the server runs our stack, then C's, the
# IO runs 60 s after the faults, and each verified run writes 4 MiB.
export SERVER_STACKS=${SERVER_STACKS:-rnbd c} IO_SECONDS=${IO_SECONDS:-60} IO_MIB=${IO_MIB:-4}
exec "$(dirname "$0")/../rnbd_many_clients.sh"
