#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=5
# Sleeps past its time bound.
. "$(dirname "$0")/../lib.sh"
ktap_plan 1
sleep 60
ok "too late"
ktap_finish
