#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# All cases ok, but the script exits 1.
. "$(dirname "$0")/../lib.sh"
ktap_plan 1
ok "fine"
exit 1
