#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=7200
# rtrs_fault_alloc.sh at length: 40 rounds per module and kind of fault,
# each with 2 MiB of verified IO, and the fail-nth maps at 320 points,
# with kmemleak on (make soak boots with it) to find what a failed
# allocation leaked.
export ROUNDS=${ROUNDS:-40} IO_MIB=${IO_MIB:-2}
exec "$(dirname "$0")/../rtrs_fault_alloc.sh"
