#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=300
# Our RTRS and RNBD wire formats against the C headers of the running
# kernel: rb-test-wire checks, at build time, every message size against
# the C struct's and, at load, every field both ways (ours encodes, C's
# struct reads; C's struct is filled, ours decodes), the enum values and
# the IMM encoding against rtrs-pri.h's static inlines. It refuses to load
# on any mismatch and logs each one.
. "$(dirname "$0")/lib.sh"

ktap_plan 3
kmsg_mark wire
check "rb-test-wire loads: every check matches the C headers" insmod "$MODDIR/rb-test-wire.ko"
log=$(kmsg_since wire | sed -n 's/^.*rb_test_wire: //p')
echo "$log" | sed 's/^/# /'
check "it ran its checks and reports no mismatch" \
	eval 'echo "$log" | grep -Eq "^all [0-9]{3,} checks match the C headers$" && ! echo "$log" | grep -q mismatch'
check "it unloads" rmmod rb_test_wire
ktap_finish
