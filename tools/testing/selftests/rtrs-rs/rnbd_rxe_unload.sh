#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# The RDMA device goes away under live sessions, and modules are unloaded
# while devices are mapped. For our stack (our rnbd on our rtrs, both
# sides), then (soak/) the C stack as the control, with two paths and
# verified IO running:
#   - the client's rxe1 is deleted: path 1 goes down, the IO fails over to
#     path 0 (the failed-over count of stats/rdma moves) and verifies
#     (C's failover race can give a mismatch: it fails C's control, as a
#     mismatch fails any stack); the path is closed, as C closes a path
#     whose device goes away, and reconnects through sysfs once rxe1 is
#     back;
#   - the server's rxe1 is deleted: the same, but the path keeps trying to
#     reconnect: once the server's rxe1 is back, it reconnects through
#     sysfs (make check) or by itself, after the reconnect delay of 30 s
#     (RECONNECT=delay, soak/);
#   - ours only: the server's device is away when the session comes back,
#     so the remap fails; our client tries again until the device is back
#     (C tries once per reconnect event and would leave it disconnected);
#   - while fio holds the device open, rmmod of rnbd_client, rtrs_client and
#     rtrs_core is refused with EBUSY and nothing changes;
#   - once it is closed, rmmod rnbd_client unmaps the device (the C module
#     does the same: a mapped device does not pin the module), and the
#     server's rnbd_server and rtrs_server unload with no session left.
. "$(dirname "$0")/lib.sh"

ccls=/sys/class/rtrs-client
# STACKS: make check runs ours, "rnbd"; soak/ "rnbd c", C's as the control.
read -ra stacks <<<"${STACKS:-rnbd}"
ktap_plan $((${#stacks[@]} * 14 + 2))

cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null
	wait
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	unload_rnbd_rtrs
	on_server 'unload_rnbd_rtrs; [ -e /dev/nullb0.away ] && mv /dev/nullb0.away /dev/nullb0
		rmmod null_blk 2>/dev/null; rxe_up_local; true'
	rxe_up_local
}
trap cleanup EXIT

pdir() { echo "$ccls/$sess/paths/${paths[$1]}"; }
state_is() { [ "$(cat "$(pdir "$1")/state" 2>/dev/null)" = "$2" ]; }
both_connected() { state_is 0 connected && state_is 1 connected; }
ios_of() { awk '{print $1 + $3}' "$(pdir "$1")/stats/rdma"; }
# rmmod_refused <module>: rmmod fails with "in use" and the module stays.
rmmod_refused() {
	local err
	err=$(rmmod "$1" 2>&1) && return 1
	diag "rmmod $1: $err"
	echo "$err" | grep -q 'in use' && mod_loaded "$1"
}
# rmmod rnbd_client, and the device and its RTRS session are gone.
rmmod_unmaps() {
	local err
	if ! err=$(rmmod rnbd_client 2>&1); then
		diag "rmmod rnbd_client: $err; refcnt $(cat /sys/module/rnbd_client/refcnt)"
		return 1
	fi
	! test -e /dev/rnbd0 || { diag "/dev/rnbd0 is still there"; return 1; }
	! test -d "$ccls/$sess" || { diag "$ccls/$sess is still there"; return 1; }
}
check_on_fail='diag "paths: $(cat $ccls/$sess/paths/*/state 2>/dev/null | xargs)"'

for stack in "${stacks[@]}"; do
	sess=rxe-$stack
	diag "stack $stack"
	rxe_up && on_server "srv_stack_load $stack" && clt_stack_load "$stack" ||
		bail "$stack: cannot load the stacks"
	echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0" \
		>/sys/class/rnbd-client/ctl/map_device || bail "$stack: map_device failed"
	paths=()
	for p in "$ccls/$sess"/paths/*; do paths+=("$(basename "$p")"); done
	wait_for 60 test -b /dev/rnbd0 && wait_for 60 both_connected ||
		bail "$stack: the two paths did not come up"
	echo round-robin >"$ccls/$sess/mpath_policy"
	stack_files | sed 's/^/# /'

	for side in client server; do
		# Half a minute of IO or more: deleting an rxe device waits for
		# its users to let go of it, and C's client waits 30 s for
		# disconnect events that a removed device cannot deliver (ours
		# does not), which took longer than 16 MiB of IO.
		fio_verify /dev/rnbd0 --rw=randwrite --bs=4k --iodepth=16 \
			--size=$([ "$stack" = c ] && echo 24 || echo 16)M >/tmp/fio-rxe 2>&1 &
		fio_pid=$!
		n=$(ios_of 1)
		wait_for 60 eval '[ "$(ios_of 1)" -gt $((n + 100)) ]'
		fo=$(failed_over $sess)
		if [ $side = client ]; then
			during_io $fio_pid "$stack: the client's rxe1 deleted during IO" rdma link delete rxe1
		else
			during_io $fio_pid "$stack: the server's rxe1 deleted during IO" \
				on_server -t 60 'rdma link delete rxe1'
		fi
		check "$stack: path 1 goes down, path 0 stays" \
			eval 'wait_for 120 eval "! state_is 1 connected" && state_is 0 connected'
		# C fails the IO over at once, while the server may still take the
		# old path's requests into chunks the failed-over ones reuse, and a
		# verify mismatch (fio's EILSEQ, err=84) can follow (rtrs.md,
		# "Failover and the shared chunks"): C's control fails then, as
		# any stack does on a mismatch.
		fio_rc=0
		wait $fio_pid || fio_rc=$?
		sed 's/^/# /' /tmp/fio-rxe
		[ "$stack" = c ] && [ $fio_rc = 2 ] && diag "c: verify mismatch after the failover: C's failover race"
		check "$stack: the IO fails over and verifies" test $fio_rc = 0
		diag "$stack: requests failed over: $(($(failed_over $sess) - fo))"
		check "$stack: path 1's requests in flight failed over (stats/rdma)" \
			eval '[ "$(failed_over $sess)" -gt "$fo" ]'
		# A path whose device went away is closed (C's DEVICE_REMOVAL case
		# of rtrs_clt_rdma_cm_handler()): the user reconnects it, once
		# its close is done (its reconnect file refuses the write until
		# then). A path that lost the server's device reconnects by
		# itself, or at once through its reconnect file.
		if [ $side = client ]; then rxe_up_local; else on_server rxe_up_local; fi
		if [ $side = server ] && [ "${RECONNECT:-sysfs}" = delay ]; then
			check "$stack: rxe1 back on the server, path 1 reconnects by itself" \
				wait_for 300 both_connected
		else
			check "$stack: rxe1 back on the $side, path 1 reconnects through sysfs" \
				wait_for 120 eval 'reconnect_path "$(pdir 1)" && both_connected'
		fi
	done

	if [ $stack = rnbd ]; then
		# Our client tries a failed remap again (C tries once per
		# reconnect event): the server's device is away when the session
		# comes back, and back a little later.
		echo 1 >"$(pdir 1)/disconnect"
		on_server 'mv /dev/nullb0 /dev/nullb0.away'
		echo 1 >"$(pdir 0)/disconnect"
		wait_for 60 eval '! state_is 0 connected && ! state_is 1 connected'
		kmsg_mark remap
		echo 1 >"$(pdir 0)/reconnect"
		check "$stack: the session is back while the server's device is away: the remap fails" \
			wait_for 120 eval 'kmsg_since remap | grep -q "@$sess> send_msg_open(): -"'
		on_server 'mv /dev/nullb0.away /dev/nullb0'
		check "$stack: the device is back: remapped without a reconnect, a read succeeds" \
			wait_for 90 dd if=/dev/rnbd0 of=/dev/null bs=4k count=1 iflag=direct status=none
		kmsg_since remap | grep rnbd_client | sed 's/^/# /' | head -5
		echo 1 >"$(pdir 1)/reconnect"
		wait_for 120 both_connected || bail "$stack: path 1 did not come back"
	fi

	# Held open, as a mounted filesystem would hold it, by a process of its
	# own: a descriptor of this shell would be inherited by what it runs.
	sleep 100000 <>/dev/rnbd0 &
	holder=$!
	wait_for 10 eval '[ "$(cat /sys/module/rnbd_client/refcnt)" -gt 0 ]'

	check "$stack: while the device is open, rnbd_client, rtrs_client, rtrs_core refuse to unload" \
		eval 'rmmod_refused rnbd_client && rmmod_refused rtrs_client && rmmod_refused rtrs_core'
	check "$stack: the device still verifies" \
		fio_verify /dev/rnbd0 --rw=randwrite --bs=4k --iodepth=16 --size=4M --offset=64M
	kill $holder
	wait $holder 2>/dev/null
	check "$stack: closed, rmmod rnbd_client unmaps it" rmmod_unmaps
	check "$stack: the server's modules unload, no session left" \
		on_server 'wait_for 60 eval "! ls /sys/class/rtrs-server/ 2>/dev/null | grep -q ."; rmmod rnbd_server && rmmod rtrs_server'
	unload_rnbd_rtrs
	on_server 'unload_rnbd_rtrs; true'
done
ktap_finish
