#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# topology=servers=1 clients=1 links=2 smp=1 client_smp=8
# rtrs_many_cpus.sh with C's client too, the control (make check runs
# ours): about 3 minutes, the boot of the 8-vCPU client included.
export CLIENTS=${CLIENTS:-rnbd c}
exec "$(dirname "$0")/../rtrs_many_cpus.sh"
