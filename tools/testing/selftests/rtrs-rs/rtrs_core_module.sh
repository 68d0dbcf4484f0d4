#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=300
# Our rtrs-core.ko: the same modinfo as the C module it replaces, it loads
# and unloads cleanly, and its exported address functions
# (rtrs_addr_to_sockaddr, sockaddr_to_str, rtrs_addr_to_str) answer a table
# of good and bad path strings exactly as the C rtrs-core's do: the
# rb-test-rtrs-core module calls whichever is loaded, and both runs must log
# the same lines.
. "$(dirname "$0")/lib.sh"

ko=$MODDIR/rtrs-core.ko
ktap_plan 10

[ -f "$ko" ] || bail "$ko is missing"
modinfo "$ko" | sed 's/^/# ours| /'
for field in name license description depends; do
	ours=$(modinfo -F "$field" "$ko")
	theirs=$(modinfo -F "$field" "$(c_module rtrs-core)")
	check "modinfo $field: '$ours' as the C module's" [ "$ours" = "$theirs" ]
done
unload_rnbd_rtrs -w 10 || bail "cannot unload the rnbd/rtrs modules left loaded"
check "insmod succeeds" insmod "$ko"
check "/sys/module/rtrs_core is live" [ "$(cat /sys/module/rtrs_core/initstate 2>/dev/null)" = live ]
rmmod rtrs_core
check "rmmod unloads it" wait_for 10 eval '! mod_loaded rtrs_core'

# The exported API, on the C module and on ours.
api_cases() { # <how to load rtrs-core>
	kmsg_mark "api-$1"
	$2 || return 1
	insmod "$MODDIR/rb-test-rtrs-core.ko" || return 1
	rmmod rb_test_rtrs_core rtrs_core
	kmsg_since "api-$1" | sed -n 's/^.*rb_test_rtrs_core: //p'
}
c_out=$(api_cases c "modprobe rtrs-core")
rust_out=$(api_cases rust "insmod $ko")
echo "$rust_out" | sed 's/^/# rust| /'
check "the C rtrs-core answers all cases" eval 'echo "$c_out" | grep -q "^done, 26 cases"'
check "ours answers all cases" eval 'echo "$rust_out" | grep -q "^done, 26 cases"'
diff <(echo "$c_out") <(echo "$rust_out") | sed 's/^/# diff| /'
check "ours gives exactly the C results ($(echo "$c_out" | grep -c '^case') lines)" \
	[ "$c_out" = "$rust_out" ]
ktap_finish
