#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1800
# The storage server dies: its QEMU is killed during IO (a power cut, no
# goodbye on the wire) and booted again. The server exports its disk
# /dev/vda, which outlives the QEMU (scripts/rtrsvm.py), over two paths.
# For our stack (our rnbd on our rtrs, both sides) and then the C stack as
# the control:
#   - writes completed before the crash are verified after it;
#   - IO in flight when the server dies ends with an error, it does not hang
#     (RTRS fails a request when no path is connected; C does the same);
#   - the client's paths go to reconnecting, and when the server is back and
#     exports again they reconnect by themselves within
#     max_reconnect_attempts, the device is opened again and new IO verifies;
#   - with max_reconnect_attempts 2 and the server gone, each path fails its
#     2 attempts and is closed for good: IO fails at once with EIO, and a
#     server back again does not bring the paths back.
. "$(dirname "$0")/../lib.sh"

ccls=/sys/class/rtrs-client
stacks=(rnbd c)
ktap_plan $((${#stacks[@]} * 14))

cleanup() {
	[ -n "$fio_pid" ] && kill "$fio_pid" 2>/dev/null
	wait
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	unload_rnbd_rtrs
	server_pings && on_server -t 30 'unload_rnbd_rtrs; true'
}
trap cleanup EXIT

states() { cat "$ccls/$sess"/paths/*/state 2>/dev/null | sort | uniq -c | xargs; }
# all_paths <state>: both paths of the session are in <state>.
all_paths() { [ "$(cat "$ccls/$sess"/paths/*/state 2>/dev/null | grep -cx "$1")" = 2 ]; }
# The server, booted again, exports /dev/vda with <stack>.
server_export() { on_server -t 120 "rxe_up_local && _stack_load server $1"; }
server_back() {
	wait_for 300 server_pings && wait_for 120 on_server -t 10 true && server_export "$1"
}
# fio over one region: write it, or (verify_only) check what a write with the
# same arguments left there.
region() { # <offset MiB> [fio args]
	local off=$1
	shift
	fio_verify /dev/rnbd0 --rw=randwrite --bs=4k --iodepth=16 --size=8M --offset=${off}M "$@"
}
# The failed reconnects of the two paths (stats/reconnects: "<ok> <failed>").
failed_reconnects() { cat "$ccls/$sess"/paths/*/stats/reconnects | awk '{print $2}' | xargs; }
# Writes completed on the device (the fifth field of its stat).
writes() { awk '{print $5}' /sys/block/rnbd0/stat; }
check_on_fail='diag "paths: $(states)"'

for stack in "${stacks[@]}"; do
	sess=crash-$stack
	diag "stack $stack"
	fio_pid=
	rxe_up && on_server "_stack_load server $stack" && clt_stack_load "$stack" ||
		bail "$stack: cannot load the stacks"
	echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/vda" \
		>/sys/class/rnbd-client/ctl/map_device || bail "$stack: map_device failed"
	wait_for 60 test -b /dev/rnbd0 && wait_for 60 all_paths connected ||
		bail "$stack: the device or its two paths did not come up"
	stack_files | sed 's/^/# /'

	check "$stack: 8 MiB written and verified before the crash" region 0

	# IO that keeps going until the server dies.
	fio --name=crash --filename=/dev/rnbd0 --ioengine=libaio --direct=1 --rw=randwrite \
		--bs=4k --iodepth=16 --offset=32M --size=32M --time_based --runtime=900 \
		>/tmp/fio-crash 2>&1 &
	fio_pid=$!
	w0=$(writes)
	wait_for 60 eval '[ "$(writes)" -gt $((w0 + 200)) ]'
	host_request kill server
	t0=$SECONDS
	check "$stack: both paths leave connected after the server died" \
		wait_for 120 eval '! cat $ccls/$sess/paths/*/state | grep -qx connected'
	diag "paths after $((SECONDS - t0)) s: $(states)"
	check "$stack: the IO in flight ends with an error, no hang" \
		wait_for 180 eval '! kill -0 $fio_pid 2>/dev/null'
	wait "$fio_pid"
	rc=$?
	fio_pid=
	diag "fio ended $((SECONDS - t0)) s after the kill, status $rc: $(grep -m1 -o 'err=.*' /tmp/fio-crash)"
	check "$stack: fio reports the error" test "$rc" != 0

	host_request start server
	check "$stack: the server boots again and exports /dev/vda" server_back "$stack"
	t1=$SECONDS
	check "$stack: both paths reconnect by themselves" wait_for 300 all_paths connected
	diag "reconnected $((SECONDS - t1)) s after the export, $((SECONDS - t0)) s after the kill"
	check "$stack: the device opens again: a read succeeds" \
		wait_for 60 dd if=/dev/rnbd0 of=/dev/null bs=4k count=1 iflag=direct status=none
	check "$stack: the writes completed before the crash read back verified" \
		region 0 --verify_only
	check "$stack: new IO after the reconnect, verified" region 64
	check "$stack: (the same check of a region never written fails)" eval '! region 96 --verify_only'

	# No coming back: the attempts run out and IO fails, it does not wait.
	echo 2 >"$ccls/$sess/max_reconnect_attempts"
	for f in "$ccls/$sess"/paths/*/stats/reset_all; do echo 1 >"$f"; done
	host_request kill server
	t0=$SECONDS
	check "$stack: with 2 attempts and no server, both paths fail 2 reconnects" \
		wait_for 900 eval '[ "$(failed_reconnects)" = "2 2" ]'
	diag "reconnects failed $((SECONDS - t0)) s after the kill: $(failed_reconnects)"
	timeout 30 dd if=/dev/rnbd0 of=/dev/null bs=4k count=1 iflag=direct 2>/tmp/dd-err
	rc=$?
	diag "dd: status $rc: $(cat /tmp/dd-err)"
	check "$stack: then a read fails with EIO at once" \
		eval '[ $rc = 1 ] && grep -q "Input/output error" /tmp/dd-err'
	# Out of attempts, a path is closed for good: with the server back,
	# nothing reconnects over a few reconnect delays (30 s each).
	host_request start server
	server_back "$stack" || bail "the server did not come back"
	t0=$SECONDS
	wait_for 100 eval '[ "$(failed_reconnects)" != "2 2" ] || cat $ccls/$sess/paths/*/state | grep -qx connected'
	diag "after $((SECONDS - t0)) s of a server back: $(states), failed reconnects $(failed_reconnects)"
	check "$stack: the paths stay closed, no further attempt" \
		eval '[ "$(failed_reconnects)" = "2 2" ] && ! cat $ccls/$sess/paths/*/state | grep -qx connected'
	check "$stack: the device unmaps" eval 'echo force >/sys/block/rnbd0/rnbd/unmap_device'
	unload_rnbd_rtrs
	on_server 'unload_rnbd_rtrs; true'
done
ktap_finish
