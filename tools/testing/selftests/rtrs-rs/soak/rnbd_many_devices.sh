#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=3600
# rnbd_many_devices.sh with C's stacks as the control and every chunk size
# (8 KiB, 64 KiB, 512 KiB) with always_invalidate Y and N, 512 KiB of
# verified IO on each device (make check runs our stacks and two of the
# configurations, each device's depth of IOs).
export PAIRINGS=${PAIRINGS:-c:c rnbd:c c:rnbd rnbd:rnbd}
export CONFIGS=${CONFIGS:-16:8192:Y 16:8192:N 1:65536:Y 1:65536:N 128:524288:Y 128:524288:N}
export DEV_KIB=${DEV_KIB:-512}
exec "$(dirname "$0")/../rnbd_many_devices.sh"
