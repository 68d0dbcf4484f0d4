#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# rnbd_disk_errors.sh in make soak: every pairing of ours and C's over a
# disk with a bad MiB takes about 6 minutes, more than make check has room
# for.
exec "$(dirname "$0")/../rnbd_disk_errors.sh"
