#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Passes by itself, but the server kernel logs what the hung task detector
# logs of a task blocked too long.
. "$(dirname "$0")/../lib.sh"
ktap_plan 1
on_server 'echo "INFO: task harness:1 blocked for more than 60 seconds." >/dev/kmsg'
ok "fine"
ktap_finish
