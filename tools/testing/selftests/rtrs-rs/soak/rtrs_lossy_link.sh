#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# rtrs_lossy_link.sh for the C stack, the reference, our RTRS under the C
# RNBD, and ours throughout (make check runs ours throughout): about 2
# minutes.
export STACKS=${STACKS:-c rtrs rnbd}
exec "$(dirname "$0")/../rtrs_lossy_link.sh"
