#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# rnbd_rs_pair.sh with 100 rounds of map, read, unmap (make check: 5):
# about 4 minutes.
export ROUNDS=${ROUNDS:-100}
exec "$(dirname "$0")/../rnbd_rs_pair.sh"
