#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Passes by itself, but leaves behind a process that makes the client kernel
# log a warning as soon as the runner has written this test's end marker:
# what a test's cleanup sets off after its end is the test's.
. "$(dirname "$0")/../lib.sh"
ktap_plan 1
# A read of /dev/kmsg waits for the next record: the warning follows the
# marker at once, long before the runner writes the next test's begin.
setsid bash -c 'timeout 120 grep -q "rtrs-rs: selftest fail-warning-after-end.sh: end$" /dev/kmsg &&
	echo "WARNING: CPU: 0 PID: 1 at harness/fail-warning-after-end.sh, after its end" >/dev/kmsg' \
	</dev/null >/dev/null 2>&1 &
ok "fine"
ktap_finish
