#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Everything fine: the runner must report ok, and on_server must work.
. "$(dirname "$0")/../lib.sh"
ktap_plan 2
check "true is true" true
check "the server answers" [ "$(on_server hostname)" = server ]
ktap_finish
