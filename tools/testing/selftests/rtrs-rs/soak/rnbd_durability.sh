#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1500
# rnbd_durability.sh with the server's machine killed in every pairing:
# C's stack where it can flush (512-byte blocks), ours, and ours with C's
# client and with C's server on 4096 (make check: ours alone): about 8
# minutes.
export CRASH_CASES=${CRASH_CASES:-c:c:512 rnbd:rnbd:4096 c:rnbd:4096 rnbd:c:4096}
exec "$(dirname "$0")/../rnbd_durability.sh"
