#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# Our whole stack on both sides: our rnbd-client on our rtrs-client against
# our rnbd-server on our rtrs-server (stack rnbd), over two paths. Verified
# IO with 4k, 64k and the largest blocks, random and sequential, libaio and
# io_uring, QD 1 and 64; a discard reads back as zeros (null_blk has no
# write-zeroes to pass on: rnbd_zeroes_resize.sh tests it over loop);
# flushes and FUA writes are accepted; IO survives losing a path; then 5
# rounds (soak/: 100) of map, read, unmap; unload is clean. The paths run
# RTRS 2.1 with read responses (both sides' protocol files), with
# always_invalidate and, after the server comes back with smaller chunks
# (the session's path reconnected through sysfs once it is: the remap, not
# the reconnect delay, is what that case is about), without it.
. "$(dirname "$0")/lib.sh"

sess=rs-pair
ctl=/sys/class/rnbd-client/ctl
ccls=/sys/class/rtrs-client
# ROUNDS of map, read, unmap: make check 5; soak/ 100.
rounds=${ROUNDS:-5}
ktap_plan 26

trap rnbd_cleanup EXIT

# Where the IO is, when it hangs: blk-mq's view and the RTRS counters on
# both sides.
io_state() {
	local f
	for f in /sys/block/rnbd0/inflight /sys/kernel/debug/block/rnbd0/hctx*/{busy,dispatch,tags} \
		$ccls/$sess/paths/*/stats/rdma; do
		[ -e "$f" ] && sed "s|^|# client $f: |" "$f"
	done
	on_server 'for f in /sys/block/nullb0/inflight /sys/class/rtrs-server/*/paths/*/stats/rdma; do
		[ -e "$f" ] && sed "s|^|# server $f: |" "$f"; done; true'
}
# IO that takes 4 minutes on these guests is hung: fail, and show where.
export FIO_TIMEOUT=240
check_on_fail=io_state

unmap() { echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 test ! -e /dev/rnbd0; }
state_is() { [ "$(cat "$ccls/$sess/paths/$1/state" 2>/dev/null)" = "$2" ]; }

# Fills the first MiB of /dev/rnbd0 with a pattern, discards it, and reads
# zeros back (a memory-backed null_blk frees what is discarded).
discard_zeroes() {
	local zero
	dd if=/dev/urandom of=/dev/rnbd0 bs=64k count=16 oflag=direct 2>/dev/null || return 1
	blkdiscard -o 0 -l 1048576 /dev/rnbd0 || return 1
	zero=$(dd if=/dev/rnbd0 bs=64k count=16 iflag=direct 2>/dev/null | tr -d '\0' | wc -c)
	diag "non-zero bytes after the discard: $zero"
	[ "$zero" = 0 ]
}

rxe_up || bail "rxe did not come up"
on_server 'modprobe null_blk nr_devices=2 gb=1 memory_backed=1 discard=1 cache_size=64 && srv_stack_load rnbd' ||
	bail "server: cannot load null_blk and our rnbd-server"
clt_stack_load rnbd || bail "cannot load our rnbd-client"
diag "client: $(stack_files | tr '\n' ' ')"
diag "server: $(on_server stack_files | tr '\n' ' ')"
check "both sides run our modules" eval 'mod_is_ours rnbd_client && on_server mod_is_ours rnbd_server'

map="sessname=$sess path=ip:$CLIENT_IP0@ip:$SERVER_IP0 path=ip:$CLIENT_IP1@ip:$SERVER_IP1 device_path=/dev/nullb0"
check "map_device over two paths, /dev/rnbd0 appears" \
	eval 'echo "$map" >$ctl/map_device && wait_for 60 test -b /dev/rnbd0'
paths=()
for p in "$ccls/$sess"/paths/*; do paths+=("$(basename "$p")"); done
check "both paths connected" eval '[ ${#paths[@]} = 2 ] &&
	wait_for 30 state_is "${paths[0]}" connected && wait_for 30 state_is "${paths[1]}" connected'
check "both paths run RTRS 2.1 with fences and read responses, on both sides" eval '
	[ "$(cat $ccls/$sess/paths/*/protocol | sort -u)" = "2.1 fence read_rsp" ] &&
	[ "$(on_server "cat /sys/class/rtrs-server/$sess/paths/*/protocol" | sort | uniq -c | sed "s/^ *//")" = \
		"2 2.1 fence read_rsp" ]'
check "the server shows the session's device" \
	on_server "test -e /sys/class/rnbd-server/ctl/devices/nullb0/sessions/$sess/access_mode"
max_kb=$(($(cat /sys/block/rnbd0/queue/max_hw_sectors_kb) / 4 * 4))
diag "largest IO: $max_kb KiB"

check "4k random read/write, libaio, QD64, verified" \
	fio_verify /dev/rnbd0 --rw=randrw --bs=4k --iodepth=64 --size=4M
check "64k sequential writes, libaio, QD1, verified" \
	fio_verify /dev/rnbd0 --rw=write --bs=64k --iodepth=1 --size=4M --offset=32M
check "${max_kb}k random writes, io_uring, QD8, verified" \
	fio_verify /dev/rnbd0 --rw=randwrite --bs="${max_kb}k" --iodepth=8 --size=8M \
	--offset=64M --ioengine=io_uring
check "${max_kb}k random writes, io_uring, QD64, verified" \
	fio_verify /dev/rnbd0 --rw=randwrite --bs="${max_kb}k" --iodepth=64 --size=16M \
	--offset=96M --ioengine=io_uring
check "mixed 512 B to ${max_kb} KiB, io_uring, QD1, verified" \
	fio_verify /dev/rnbd0 --rw=randrw --bsrange=512-"${max_kb}k" --blockalign=512 --iodepth=1 \
	--size=4M --offset=128M --ioengine=io_uring
check "the disk has the server's write cache" \
	eval '[ "$(cat /sys/block/rnbd0/queue/write_cache)" = "write back" ] &&
	[ "$(cat /sys/block/rnbd0/queue/fua)" = 1 ]'
check "O_SYNC (FUA) writes with an fsync (flush) every 4, verified" \
	fio_verify /dev/rnbd0 --rw=write --bs=16k --iodepth=8 --size=4M --offset=160M --sync=1 --fsync=4
check "a discard reads back as zeros" discard_zeroes

# A path lost under IO: the IO goes on over the other, unharmed.
ios() { awk '{print $1 + $3}' "$ccls/$sess/paths/${paths[1]}/stats/rdma"; }
before=$(ios)
# 16 MiB: about 10 s of IO here, and the disconnect comes at path 1's
# first IO of it.
fio_verify /dev/rnbd0 --rw=randrw --bs=16k --iodepth=16 --size=16M --offset=192M \
	>/tmp/rs_pair_failover.fio 2>&1 &
fio_pid=$!
wait_for 30 eval '[ "$(ios)" -gt "$before" ]'
fo=$(failed_over $sess)
during_io $fio_pid "disconnect path 1 during IO" eval 'echo 1 >$ccls/$sess/paths/${paths[1]}/disconnect'
wait $fio_pid
rc=$?
cat /tmp/rs_pair_failover.fio
check "the IO completes, verified" [ $rc = 0 ]
diag "requests failed over: $(($(failed_over $sess) - fo))"
check "path 1's requests in flight failed over (stats/rdma)" eval '[ "$(failed_over $sess)" -gt "$fo" ]'
check "path 1 reconnects from sysfs" \
	eval 'echo 1 >$ccls/$sess/paths/${paths[1]}/reconnect && wait_for 60 state_is "${paths[1]}" connected'
check "unmap" unmap

# Map, read and unmap, $rounds times, over one path: each round opens and
# closes the session.
one="sessname=$sess path=ip:$CLIENT_IP0@ip:$SERVER_IP0 device_path=/dev/nullb0"
round() {
	echo "$one" >$ctl/map_device && wait_for 30 test -b /dev/rnbd0 &&
		dd if=/dev/rnbd0 of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null && unmap
}
n=0
start=$SECONDS
while [ $n -lt $rounds ] && round; do n=$((n + 1)); done
diag "$n rounds in $((SECONDS - start)) s"
check "$rounds rounds of map, read, unmap" [ $n = $rounds ]
check "add_path without and with a source, and remove_path, on a session of one path" eval '
	echo "$one" >$ctl/map_device && wait_for 30 test -b /dev/rnbd0 && add_path_cycle $sess && unmap'
# The server comes back with smaller chunks, and without always_invalidate:
# a device mapped after the session's remap gets the new IO size (C's
# remap_devs() asks RTRS again), and READs are answered without new keys.
kmsg_mark remap-size
check "a server back with 64 KiB chunks: the session remaps" eval '
	echo "$one" >$ctl/map_device && wait_for 30 test -b /dev/rnbd0 &&
	old_kb=$(cat /sys/block/rnbd0/queue/max_hw_sectors_kb) &&
	on_server "rmmod rnbd_server && rmmod rtrs_server &&
		insmod $MODDIR/rtrs-server.ko max_chunk_size=65536 always_invalidate=N &&
		insmod $MODDIR/rnbd-server.ko" &&
	wait_for 120 eval "reconnect_path $ccls/$sess/paths/* &&
		kmsg_since remap-size | grep -q \"remapped successfully\""'
new_kb=0
check "a device mapped then has the smaller IO size, and verifies at it over 2.1" eval '
	echo "sessname=$sess device_path=/dev/nullb1" >$ctl/map_device && wait_for 30 test -b /dev/rnbd1 &&
	[ "$(cat $ccls/$sess/paths/*/protocol)" = "2.1 fence read_rsp" ] &&
	new_kb=$(cat /sys/block/rnbd1/queue/max_hw_sectors_kb) && [ "$new_kb" -lt "$old_kb" ] &&
	fio_verify /dev/rnbd1 --rw=randwrite --bs=$((new_kb / 4 * 4))k --iodepth=8 --size=4M'
diag "largest IO before and after: $old_kb KiB, $new_kb KiB"
check "unmap both" eval 'echo normal >/sys/block/rnbd1/rnbd/unmap_device && wait_for 30 test ! -e /dev/rnbd1 && unmap'
check "no session is left on either side" eval '! [ -e $ccls/$sess ] &&
	on_server "wait_for 30 eval \"! [ -e /sys/class/rtrs-server/$sess ]\""'

check "unload both sides" eval 'unload_rnbd_rtrs && ! mod_loaded rnbd_client &&
	on_server "unload_rnbd_rtrs && ! mod_loaded rnbd_server"'
check "dmesg is clean on both sides" eval '! dmesg_bad && on_server "! dmesg_bad"'
ktap_finish
