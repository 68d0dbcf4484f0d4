#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# rtrs_poll_queues.sh on the C rtrs-client, the reference, and on ours
# (make check runs ours): about a minute.
export STACKS=${STACKS:-c rtrs}
exec "$(dirname "$0")/../rtrs_poll_queues.sh"
