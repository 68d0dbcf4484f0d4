#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# topology=servers=1 clients=1 links=2 smp=1 client_smp=8
# rtrs_many_cpus.sh on a client of 8 vCPUs, with C's client too, the
# control (make check runs ours on the 4 vCPUs of rnbd_four_paths.sh's
# client): about 3 minutes, the boot of the 8-vCPU client included.
export CLIENTS=${CLIENTS:-rnbd c} CPUS=${CPUS:-8}
exec "$(dirname "$0")/../rtrs_many_cpus.sh"
