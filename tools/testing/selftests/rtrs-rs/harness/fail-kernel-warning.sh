#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Passes by itself, but the server kernel logs a warning meanwhile.
. "$(dirname "$0")/../lib.sh"
ktap_plan 1
on_server 'echo "WARNING: CPU: 0 PID: 1 at harness/fail-kernel-warning.sh" >/dev/kmsg'
ok "fine"
ktap_finish
