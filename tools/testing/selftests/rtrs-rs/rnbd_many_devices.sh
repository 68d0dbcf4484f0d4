#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# The shapes of a session, our stack on both sides, C's where it is the
# control:
# - sixteen devices in one session of queue depth 16, verified IO on all of
#   them at once (128 requests wanted, 16 permits): requests wait for
#   permits (blk-mq's dispatch_busy shows it) and every one completes;
# - sess_queue_depth 1, 16 and 32768 (the largest C loads: the IMM holds 28
#   bits of chunk number and offset, and chunks are at least 8 KiB), each
#   with verified IO; 0 and 65536 are refused at load, by ours as by C's,
#   with C's message;
# - max_chunk_size 8 KiB, 64 KiB and 512 KiB, with always_invalidate Y and
#   N: the device's largest IO is the chunk less the 4 KiB C keeps for the
#   header, and IO of every size up to it verifies.
. "$(dirname "$0")/lib.sh"

sess=devs
ctl=/sys/class/rnbd-client/ctl
ktap_plan 29

trap rnbd_cleanup EXIT

unmap_all() {
	local d
	for d in /sys/block/rnbd*/rnbd/unmap_device; do
		[ -e "$d" ] || continue
		echo normal >"$d" || return 1
	done
	wait_for 60 eval '! ls /dev/rnbd* >/dev/null 2>&1'
}
# server <rtrs-server params...>: our server stack, fresh, with those.
server() {
	on_server "unload_rnbd_rtrs; rmmod null_blk 2>/dev/null;
		modprobe null_blk nr_devices=16 gb=1 memory_backed=1 &&
		insmod $MODDIR/rtrs-core.ko && insmod $MODDIR/rtrs-server.ko $* &&
		insmod $MODDIR/rnbd-server.ko"
}
# tags: the tag depth of rnbd0's first hardware queue: the session's
# queue depth (blk-mq caps a tag set at 10240).
tags() { sed -n 's/^nr_tags=//p' /sys/kernel/debug/block/rnbd0/hctx0/tags; }
map1() { # <device index>: nullb<i> in the session, the first one opens it
	echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb$1" \
		>$ctl/map_device && wait_for 60 test -b "/dev/rnbd$1"
}

rxe_up || bail "rxe did not come up"
clt_stack_load rnbd || bail "cannot load our client"

# --- sixteen devices, sixteen permits
server sess_queue_depth=16 || bail "server: cannot load"
map_16() { local i; for i in $(seq 0 15); do map1 $i || return 1; done; }
check "16 devices mapped in one session of queue depth 16" map_16
check "the devices have 16 tags, the session's queue depth" [ "$(tags)" = 16 ]
# dispatch_busy: blk-mq's average of dispatches that found the driver
# busy (no permit), sampled while the IO runs.
busy_max=0
sample_busy() {
	local v f
	while [ ! -e /tmp/devs-stop ]; do
		for f in /sys/kernel/debug/block/rnbd*/hctx*/dispatch_busy; do
			v=$(cat "$f" 2>/dev/null || echo 0)
			[ "$v" -gt "$busy_max" ] && busy_max=$v
		done
		sleep 0.2
	done
	echo "$busy_max" >/tmp/devs-busy
}
rm -f /tmp/devs-stop /tmp/devs-busy
sample_busy &
# fio16: a verified job of 4k random writes at QD8 on each device, at once.
fio16() {
	local i out rc args=()
	for i in $(seq 0 15); do
		# fio would write a regular file where a device is missing.
		test -b "/dev/rnbd$i" || return 1
		args+=(--name="d$i" --filename="/dev/rnbd$i")
	done
	out=$(timeout 600 fio --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=8 --size=4M \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --group_reporting "${args[@]}" 2>&1)
	rc=$?
	echo "$out" | grep -E 'IOPS=|err=|verify:|error|bad' | sed 's/^/# /'
	return $rc
}
check "verified 4k random writes at QD8 on all 16 at once" fio16
touch /tmp/devs-stop
wait
diag "largest dispatch_busy seen: $(cat /tmp/devs-busy)"
check "requests waited for permits (dispatch_busy > 0)" [ "$(cat /tmp/devs-busy)" -gt 0 ]
check "16 devices unmapped" unmap_all

# --- queue depths
for qd in 1 16 32768; do
	params="sess_queue_depth=$qd"
	[ $qd = 32768 ] && params="$params max_chunk_size=8192"
	want=$((qd < 10240 ? qd : 10240))
	check "sess_queue_depth=$qd: the server loads, the device has $want tags" \
		eval 'server $params && map1 0 && [ "$(tags)" = $want ]'
	check "sess_queue_depth=$qd: verified IO at QD32" \
		fio_verify /dev/rnbd0 --rw=randrw --bs=4k --iodepth=32 --size=8M
	check "sess_queue_depth=$qd: unmapped" unmap_all
done
# refused <params>: rtrs-server of <stack> refuses to load with them; its
# message goes to stdout.
refused() { # <stack: c|rs> <param>
	local tag=refused-$1-${2#*=}
	on_server "unload_rnbd_rtrs; kmsg_mark $tag
		if [ $1 = c ]; then modprobe rtrs-server $2 2>/dev/null; else
			insmod $MODDIR/rtrs-core.ko && insmod $MODDIR/rtrs-server.ko $2 2>/dev/null; fi && exit 1
		! mod_loaded rtrs_server && kmsg_since $tag | grep -o 'Invalid sess_queue_depth.*\|RDMA immediate size.*' | head -1"
}
for p in sess_queue_depth=0 sess_queue_depth=65536 sess_queue_depth=65535; do
	c=$(refused c $p) rs=$(refused rs $p)
	diag "$p: C: ${c:-loaded}; ours: ${rs:-loaded}"
	check "$p is refused at load, with C's message" eval '[ -n "$c" ] && [ "$rs" = "$c" ]'
done

# --- chunk sizes, with and without invalidation
for inv in Y N; do
	for chunk in 8192 65536 524288; do
		name="max_chunk_size=$chunk always_invalidate=$inv"
		kb=0
		# The server offers the chunk less a page for the header (C's
		# max_io_size).
		check "$name: the device's largest IO is the chunk less 4 KiB" eval '
			server max_chunk_size=$chunk always_invalidate=$inv && map1 0 &&
			kb=$(cat /sys/block/rnbd0/queue/max_hw_sectors_kb) && [ "$kb" = $((chunk / 1024 - 4)) ]'
		diag "$name: max_hw_sectors_kb $kb"
		check "$name: verified IO of 512 B to ${kb} KiB" eval '
			fio_verify /dev/rnbd0 --rw=randrw --bsrange=512-${kb}k --blockalign=512 --iodepth=8 --size=8M &&
			unmap_all'
	done
done
ktap_finish
