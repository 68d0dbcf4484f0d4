#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# rtrs_api.sh in every pairing of C's RTRS and ours, C's with C's as the
# control (make check runs the three with ours): about 2.5 minutes.
export PAIRINGS=${PAIRINGS:-c:c rs:c c:rs rs:rs}
exec "$(dirname "$0")/../rtrs_api.sh"
