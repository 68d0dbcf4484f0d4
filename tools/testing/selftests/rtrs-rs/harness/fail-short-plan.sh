#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Plans 3 cases, reports 1, exits 0.
. "$(dirname "$0")/../lib.sh"
ktap_plan 3
ok "fine"
exit 0
