#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Our rtrs-core.ko: the same modinfo as the C module it replaces, and it
# loads and unloads cleanly.
. "$(dirname "$0")/lib.sh"

ko=$MODDIR/rtrs-core.ko
ktap_plan 7

[ -f "$ko" ] || bail "$ko is missing"
modinfo "$ko" | sed 's/^/# ours| /'
for field in name license description depends; do
	ours=$(modinfo -F "$field" "$ko")
	theirs=$(modinfo -F "$field" "$(c_module rtrs-core)")
	check "modinfo $field: '$ours' as the C module's" [ "$ours" = "$theirs" ]
done
unload_rnbd_rtrs
check "insmod succeeds" insmod "$ko"
check "/sys/module/rtrs_core is live" [ "$(cat /sys/module/rtrs_core/initstate 2>/dev/null)" = live ]
rmmod rtrs_core
check "rmmod unloads it" wait_for 10 eval '! mod_loaded rtrs_core'
ktap_finish
