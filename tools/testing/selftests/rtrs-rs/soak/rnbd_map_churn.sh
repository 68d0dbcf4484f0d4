#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=3600
# Map and unmap, ROUNDS times (1000), on our stack (our rnbd on our rtrs,
# both sides): each round maps the server's null_blk, which opens a new RTRS
# session, reads 4 KiB through it, and unmaps it, which closes the session
# on both sides. Nothing may be left behind: every round ends with no
# device and no session in either guest's sysfs; kmemleak (the soak suite
# boots with kmemleak=on) finds no unreferenced object in either guest; and
# the kernel memory of each guest (unreclaimable slab; vmalloc and per-CPU
# memory) grows by less than 1 KiB a round over the second half of the
# rounds (a leaked session or connection costs far more than that; the
# first half may still fill caches).
. "$(dirname "$0")/../lib.sh"

ROUNDS=${ROUNDS:-1000}
WARM=20
sess=churn
ktap_plan 8

cleanup() {
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	unload_rnbd_rtrs
	on_server 'unload_rnbd_rtrs; rmmod null_blk 2>/dev/null; true'
}
trap cleanup EXIT

round() {
	echo "sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0" \
		>/sys/class/rnbd-client/ctl/map_device || { diag "round $1: map_device failed"; return 1; }
	wait_for 60 test -b /dev/rnbd0 || { diag "round $1: no /dev/rnbd0"; return 1; }
	dd if=/dev/rnbd0 of=/dev/null bs=4k count=1 iflag=direct status=none ||
		{ diag "round $1: the read failed"; return 1; }
	echo normal >/sys/block/rnbd0/rnbd/unmap_device || { diag "round $1: unmap failed"; return 1; }
	wait_for 60 eval '! test -e /sys/block/rnbd0 && ! test -e /sys/class/rtrs-client/$sess' ||
		{ diag "round $1: device or session left"; return 1; }
}

rounds() { # <from> <to>
	local k
	for ((k = $1; k < $2; k++)); do round "$k" || return 1; done
}

rxe_up && on_server "srv_stack_load rnbd" && clt_stack_load rnbd || bail "cannot load our stacks"
check "$WARM rounds of map, read, unmap" rounds 0 $WARM
# The server closes its side after the client: wait for it before measuring.
srv_idle() { on_server -t 60 'wait_for 60 eval "! ls /sys/class/rtrs-server/ | grep -q ."'; }
half=$((ROUNDS / 2))
t0=$SECONDS
check "rounds $WARM to $half" rounds $WARM $half
srv_idle
c0=$(kmem)
s0=$(on_server kmem)
check "rounds $half to $ROUNDS" rounds $half "$ROUNDS"
diag "$((ROUNDS - WARM)) rounds in $((SECONDS - t0)) s"
check "the server has no session left" srv_idle
c1=$(kmem)
s1=$(on_server kmem)
diag "unreclaimable slab and vmalloc + per-CPU KiB at round $half -> $ROUNDS: client $c0 -> $c1, server $s0 -> $s1"
limit=$((ROUNDS - half))
grew() { # <before> <after> <field>: growth in KiB
	echo $(($(echo "$2" | cut -d' ' -f"$3") - $(echo "$1" | cut -d' ' -f"$3")))
}
check "client: kernel memory grew by less than $limit KiB over the last $limit rounds" \
	eval '[ $(grew "$c0" "$c1" 1) -lt $limit ] && [ $(grew "$c0" "$c1" 2) -lt $limit ]'
check "server: kernel memory grew by less than $limit KiB over the last $limit rounds" \
	eval '[ $(grew "$s0" "$s1" 1) -lt $limit ] && [ $(grew "$s0" "$s1" 2) -lt $limit ]'
check "kmemleak is on and finds nothing in either guest" \
	eval 'kmemleak_clean && on_server kmemleak_clean'
check "our modules unload on both sides" \
	eval 'unload_rnbd_rtrs && ! mod_loaded rtrs_core && on_server "unload_rnbd_rtrs; ! mod_loaded rtrs_core"'
ktap_finish
