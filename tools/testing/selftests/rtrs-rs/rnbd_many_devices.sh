#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# Sixteen devices in one session, and the server's chunk and queue depth
# limits, in each pairing of PAIRINGS (<client stack>:<server stack>).
#
# Per server configuration of CONFIGS (sess_queue_depth, max_chunk_size,
# always_invalidate): the server exports 16 memory-backed null_blk devices
# and the client maps all 16 in one session over two paths. Each device's
# queue is sized by the session (nr_requests: the session's permits, one
# fewer than the chunks on our client, as many on C's) and its largest IO
# by the chunk (max_hw_sectors_kb: the chunk less its 4 KiB header page,
# at most 512 KiB). Verified fio then runs on all 16 at once from both
# CPUs, 4 KiB to the largest IO at depth 8 each: 128 IOs wanted at once,
# more than any configuration has permits, so that requests wait for tags
# in blk-mq or, with a queue per CPU, for a permit in rnbd-client (which
# requeues them; not counted here) while others complete. All 16
# unmap and the server lists no session after.
#
# Then the limits, on our stacks: a sess_queue_depth or max_chunk_size
# out of C's range fails the server's load with C's line; a session deeper
# than the device's completion queues allow (8192 chunks of 8 KiB on rxe)
# is refused by our client with EINVAL and a line that says so, where
# C's client allocates completion queues until the guest is out of memory
# (not run), and the deepest the device allows here (4096) maps and
# verifies. With always_invalidate=Y, 2048 chunks (one MR each, all
# registered with the INFO_RSP) map and verify; C's server fails to post
# its INFO_RSP there (ENOMEM: its service connection's send queue holds
# 1026 work requests).
#
# make check: our stacks (PAIRINGS=rnbd:rnbd) and two configurations, and
# each device's fio writes the depth's IOs (8 of the average size, 4 KiB
# to the largest: 32 KiB of 4 KiB IOs, 256 KiB up to 60 KiB, at most 512
# KiB); soak/rnbd_many_devices.sh: C's as the control, all six of CONFIGS,
# and 512 KiB on every device (DEV_KIB).
. "$(dirname "$0")/lib.sh"

sess=manydev
ctl=/sys/class/rnbd-client/ctl
ccls=/sys/class/rtrs-client
ndev=16
PAIRINGS=${PAIRINGS:-rnbd:rnbd}
# sess_queue_depth:max_chunk_size:always_invalidate
CONFIGS=${CONFIGS:-16:8192:Y 1:65536:N}
read -ra pairings <<<"$PAIRINGS"
read -ra configs <<<"$CONFIGS"
ktap_plan $((${#pairings[@]} * ${#configs[@]} * 5 + 8 + 1))

cleanup() {
	rnbd_cleanup
	on_server 'rmmod null_blk 2>/dev/null; true'
}
trap cleanup EXIT

# map_all <n>: nullb0 .. nullb<n-1> of the server in one session.
map_all() {
	local i
	echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0" \
		>$ctl/map_device || return 1
	for ((i = 1; i < $1; i++)); do
		echo "sessname=$sess device_path=/dev/nullb$i" >$ctl/map_device || return 1
	done
	for ((i = 0; i < $1; i++)); do
		wait_for 60 test -b /dev/rnbd$i || return 1
	done
}
# Every mapped device's queue file <file> holds <value>.
queues_are() {
	local f
	for f in /sys/block/rnbd*/queue/"$1"; do
		[ "$(cat "$f")" = "$2" ] || { diag "$f: $(cat "$f"), not $2"; return 1; }
	done
}
# fio_all <n> <largest IO in KiB>: verified random writes of 4 KiB to the
# largest IO on rnbd0 .. rnbd<n-1> at once, depth 8 each, jobs split over
# the CPUs: DEV_KIB each, or the depth's IOs of the average size (8 of
# (4 + largest) / 2 KiB), at most 512 KiB: every device wants its depth
# at once.
fio_all() {
	local i jobs=() out rc kib=${DEV_KIB:-$((4 * (4 + $2)))}
	[ "$kib" -le 512 ] || kib=512
	for ((i = 0; i < $1; i++)); do
		jobs+=(--name=d$i --filename=/dev/rnbd$i)
	done
	out=$(timeout "${FIO_TIMEOUT:-600}" fio --ioengine=libaio --direct=1 --rw=randwrite \
		--bsrange=4k-${2}k --blockalign=4k --iodepth=8 --size=${kib}k --verify=crc32c \
		--verify_fatal=1 --do_verify=1 --cpus_allowed=0-$(($(nproc) - 1)) \
		--cpus_allowed_policy=split --group_reporting "${jobs[@]}" 2>&1)
	rc=$?
	echo "$out" | grep -E 'IOPS=|err=|verify:|error|bad' | sed 's/^/# /'
	return $rc
}
# The server's null_blk devices, memory-backed (what is written), 1 GiB each.
server_disks() {
	on_server "unload_rnbd_rtrs; rmmod null_blk 2>/dev/null
		modprobe null_blk nr_devices=$1 gb=1 memory_backed=1"
}

rxe_up || bail "rxe did not come up"
for pairing in "${pairings[@]}"; do
	cst=${pairing%:*} sst=${pairing#*:}
	for cfg in "${configs[@]}"; do
		IFS=: read -r qd chunk inval <<<"$cfg"
		name="client $cst, server $sst, $qd chunks of $((chunk / 1024)) KiB, always_invalidate=$inval"
		permits=$qd
		[ "$cst" = c ] || [ "$qd" -lt 2 ] || permits=$((qd - 1))
		max_kb=$(((chunk - 4096) / 1024))
		[ $max_kb -le 512 ] || max_kb=512
		server_disks $ndev && on_server "_stack_load server $sst sess_queue_depth=$qd \
			max_chunk_size=$chunk always_invalidate=$inval" && clt_stack_load "$cst" ||
			bail "$name: cannot load"
		check "$name: $ndev devices mapped in one session" map_all $ndev
		check "$name: each queue holds the session's $permits permits, IO up to ${max_kb} KiB" \
			eval "queues_are nr_requests $permits && queues_are max_hw_sectors_kb $max_kb"
		check "$name: verified IO of 4 KiB to ${max_kb} KiB on all $ndev devices at once" \
			fio_all $ndev $max_kb
		check "$name: both paths stayed connected" \
			eval '[ "$(cat $ccls/$sess/paths/*/state | grep -c ^connected)" = 2 ]'
		check "$name: all unmapped, and the server lists no session" eval \
			'rnbd_unmap_all 60 && wait_for 30 on_server "! ls /sys/class/rtrs-server/ 2>/dev/null | grep -q ."'
		rnbd_cleanup
	done
done

# The limits, on our stacks.
on_server "rmmod null_blk 2>/dev/null; modprobe null_blk nr_devices=1 gb=1 memory_backed=1" ||
	bail "server: cannot load null_blk"
srv_load() {
	on_server "unload_rnbd_rtrs && insmod $MODDIR/rtrs-core.ko && insmod $MODDIR/rtrs-server.ko $* &&
		insmod $MODDIR/rnbd-server.ko && stack_is server rnbd"
}
kmsg_mark manydev-limits
on_server "kmsg_mark manydev-limits"
check "server: sess_queue_depth=65536 refused at load, with C's line" eval '
	! srv_load sess_queue_depth=65536 2>/dev/null &&
	on_server "kmsg_since manydev-limits | grep -q \"Invalid sess_queue_depth value 65536\""'
check "server: max_chunk_size=4096 refused at load, with C's line" eval '
	! srv_load max_chunk_size=4096 2>/dev/null &&
	on_server "kmsg_since manydev-limits | grep -q \"Invalid max_chunk_size value 4096\""'
srv_load sess_queue_depth=8192 max_chunk_size=8192 always_invalidate=N && clt_stack_load rnbd ||
	bail "cannot load our stacks with 8192 chunks of 8 KiB"
check "8192 chunks of 8 KiB: our client refuses the session with EINVAL" eval '
	out=$(echo "sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0" 2>&1 >$ctl/map_device)
	echo "$out" | grep -q "Invalid argument" && ! test -b /dev/rnbd0'
check "8192 chunks of 8 KiB: the client says the device has too few completion queue entries" \
	eval 'kmsg_since manydev-limits | grep -Eq "a queue depth of [0-9]+ needs [0-9]+ completion queue entries per connection, the device has [0-9]+"'
# deep_session <chunks> <always_invalidate> <label>: our stacks with that
# many chunks of 8 KiB; one device over two paths, its queue of one permit
# fewer, and verified IO at depth 256.
deep_session() {
	unload_rnbd_rtrs
	srv_load sess_queue_depth=$1 max_chunk_size=8192 always_invalidate=$2 && clt_stack_load rnbd ||
		bail "cannot load our stacks with $3"
	check "$3: mapped$4, its queue holds $(($1 - 1)) permits" eval '
		echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0" >$ctl/map_device &&
		wait_for 60 test -b /dev/rnbd0 && queues_are nr_requests '$(($1 - 1))
	check "$3: verified IO at depth 256" \
		fio_verify /dev/rnbd0 --rw=randrw --bs=4k --iodepth=256 --size=4M
}
deep_session 4096 N "4096 chunks of 8 KiB"
deep_session 2048 Y "2048 chunks of 8 KiB, always_invalidate=Y" " (one MR per chunk, all registered at once)"
rnbd_cleanup
check "no kernel warning on either side" eval '! dmesg_bad && ! on_server dmesg_bad'
ktap_finish
