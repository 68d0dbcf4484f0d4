#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=7200
# rtrs_fault_alloc.sh at length: 40 rounds per module and kind of fault,
# and the fail-nth maps at 320 points, with kmemleak on (make soak boots
# with it) to find what a failed allocation leaked.
export ROUNDS=${ROUNDS:-40}
exec "$(dirname "$0")/../rtrs_fault_alloc.sh"
