#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# rnbd_zeroes_resize.sh on every pairing, with the C RNBD on the C RTRS,
# the control, on our RTRS on both sides, and our RNBD on C's RTRS on
# either side (make check runs the three of our RNBD on our RTRS): about 3
# minutes.
export PAIRS=${PAIRS:-c/c rtrs/rtrs rnbd/rnbd c/rnbd c/rnbd-c rnbd/c rnbd-c/c}
exec "$(dirname "$0")/../rnbd_zeroes_resize.sh"
