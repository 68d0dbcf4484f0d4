#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One case not ok, exit status forced to 0.
. "$(dirname "$0")/../lib.sh"
ktap_plan 2
ok "fine"
fail "broken"
exit 0
