#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# rtrs_api.sh in every pairing of C's RTRS and ours, C's with C's as the
# control, with 3 rounds of the sizes and 2 of the 8 streams (make check
# runs the three pairings with ours, one round of each): about 2.5 minutes.
export PAIRINGS=${PAIRINGS:-c:c rs:c c:rs rs:rs}
export SIZE_ROUNDS=${SIZE_ROUNDS:-3} STREAM_ROUNDS=${STREAM_ROUNDS:-2}
exec "$(dirname "$0")/../rtrs_api.sh"
