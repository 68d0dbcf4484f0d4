#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# rnbd_disk_errors.sh in every pairing of ours and C's (make check runs
# two): about 6 minutes.
export PAIRINGS=${PAIRINGS:-c:c rnbd:c c:rnbd rnbd:rnbd}
exec "$(dirname "$0")/../rnbd_disk_errors.sh"
