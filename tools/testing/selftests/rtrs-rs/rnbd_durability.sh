#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# What a flush or an O_DSYNC write of the client completed is on the
# server's disk when the disk loses power; what neither covered is not.
#
# The server's disk is a null_blk made through configfs: memory-backed, a
# volatile write cache (cache_size) and FUA, 4096-byte logical blocks (as
# many NVMe drives) unless said. Writing 0 to its `power` drops the cache,
# and with it every write no flush or FUA put on the medium: the kernel's
# own model of a power cut. The client writes three sets of 64 blocks with
# O_DIRECT: A then fsync() (a REQ_PREFLUSH), B with O_DSYNC (REQ_FUA writes
# and a flush), C with neither, last. It unmaps, the server's disk loses
# power and comes back, the client maps it again: A and B read back, every
# block. A control on the server itself shows that C is lost there (so the
# test can tell), and the client's queue says "write back" with FUA, as
# the server announced.
#
# Then the server's machine dies instead (its QEMU killed, booted again):
# the disk is /dev/loop0 over the server's /dev/vda (which outlives its
# QEMU), buffered, so that the guest's page cache is the disk's volatile
# write cache, with the kernel's periodic writeback held off: what no flush
# wrote back dies with the machine. loop has a write cache and no FUA (the
# client's queue then has none either, and the block layer makes a FUA
# write a write and a flush). The same sets, the same verdicts, and the
# same control on the server alone.
#
# blk-mq gives the flush request of a flush sequence no position (sector
# -1), which C's client sends as it is; a device with 4 KiB logical blocks
# fails a zero-sized bio at sector -1 as unaligned, so C's stack fails every
# fsync() there with EIO (recorded, the control with 512-byte blocks
# passes). Ours sends a flush at sector 0 and our server submits any IO
# without data at sector 0, so each of ours flushes against C's peer too.
. "$(dirname "$0")/lib.sh"

sess=dur
ctl=/sys/class/rnbd-client/ctl
# The disk: null_blk names it after its configfs item.
nb=/sys/kernel/config/nullb/dur
dev=/dev/dur
# The disk of the machine's death (lib.sh's loop_vda).
loop=/dev/loop0
# <client stack>:<server stack>:<logical block size>; C's stack first.
CASES=${CASES:-c:c:512 c:c:4096 rnbd:rnbd:4096 c:rnbd:4096 rnbd:c:4096}
# The same for the machine's death: ours (soak/: C's stack where it can
# flush, and the mixed pairings, too).
CRASH_CASES=${CRASH_CASES:-rnbd:rnbd:4096}
# Per case: four checks, five for one that must flush (not C's on 4096).
n=5
for c in $CASES $CRASH_CASES; do
	case $c in c:c:4096) n=$((n + 4)) ;; *) n=$((n + 5)) ;; esac
done
ktap_plan $n

cleanup() {
	rnbd_cleanup
	on_server "rmdir $nb 2>/dev/null; rmmod null_blk 2>/dev/null; loop_vda_off; true"
}
trap cleanup EXIT

# nullb_make <block size>: $dev, a 64 MiB configfs null_blk as above,
# powered on. Runs on the server.
nullb_make() {
	rmdir $nb 2>/dev/null
	{ mod_loaded null_blk || modprobe null_blk nr_devices=0; } && mkdir $nb &&
		echo 64 >$nb/size && echo "$1" >$nb/blocksize && echo 1 >$nb/memory_backed &&
		echo 32 >$nb/cache_size && echo 1 >$nb/fua && echo 1 >$nb/power && test -b $dev
}
# nullb_power_cycle: the disk loses power (and its cache) and comes back.
# Runs on the server.
nullb_power_cycle() { echo 0 >$nb/power && echo 1 >$nb/power && test -b $dev; }
fns="nb=$nb dev=$dev
$(declare -f nullb_make nullb_power_cycle)"
# load_map <client stack> <server stack> [device]: loads both and maps the
# device ($dev unless named).
load_map() {
	on_server "srv_stack_load $2" && clt_stack_load "$1" &&
		echo "sessname=$sess path=ip:$SERVER_IP0 device_path=${3:-$dev}" >$ctl/map_device &&
		wait_for 60 test -b /dev/rnbd0
}
# queue_as <block size> <fua>: the client's queue as the server's disk:
# write back, with FUA or not, and the disk's logical block size.
queue_as() {
	[ "$(cat /sys/block/rnbd0/queue/write_cache)" = "write back" ] &&
		[ "$(cat /sys/block/rnbd0/queue/fua)" = "$2" ] &&
		[ "$(cat /sys/block/rnbd0/queue/logical_block_size)" = "$1" ]
}
# crash_server: the server's QEMU is killed and booted again (the runner
# does both, lib.sh's host_request); back once it answers on the peer
# channel with rxe up.
crash_server() {
	host_request kill server
	wait_for 60 eval '! server_pings' || return 1
	host_request start server
	wait_for 300 server_pings && wait_for 120 on_server -t 10 true && on_server rxe_up_local
}

# control <what> <output>: the two cases of a control on the server
# alone, from what it printed ("writes: ..." and "after: ..."): every
# write returned, and after <what> the disk kept A and B and lost C.
control() {
	local out=$2
	diag "server alone, 4096-byte blocks, $1: ${out//$'\n'/; }"
	check "server alone: every write returns" eval '[[ "$out" = *"writes: A=0 B=0 C=0"* ]]'
	check "server alone: after $1 A and B are there, C is lost" eval '[[ "$out" = *"after: A B -"* ]]'
}

# writes_are <name> <dur_write's output>, for the case in $c: every write
# of the sets succeeded, one case; C's stack on 4096-byte blocks fails its
# fsync() and O_DSYNC writes, which is shown (its client's log since the
# case's mark) and is no case.
writes_are() {
	local w=$2
	diag "$1: writes: $w"
	if [ "$c" = c:c:4096 ]; then
		diag "$1: C's client logs:"
		kmsg_since "dur-$c" | grep -v 'rtrs-rs: mark' | sed 's/^/#   /' | head -8
	else
		check "$1: the fsync() and every O_DSYNC write succeed" eval '[ "$w" = "A=0 B=0 C=0" ]'
	fi
}
# sets_after <name> <what> <dur_read's output, empty if not mapped>, for
# the case in $c: after <what>, A (flushed) and B (O_DSYNC) are there,
# every block; for C's stack on 4096-byte blocks, which flushed nothing,
# only that it mapped again.
sets_after() {
	local r=$3
	diag "$1: after $2: ${r:-not mapped}"
	if [ "$c" = c:c:4096 ]; then
		check "$1: mapped again after $2" eval '[ -n "$r" ]'
	else
		check "$1: after $2 A (flushed) and B (O_DSYNC) are there, every block" \
			eval '[[ "$r" = "A B "? ]]'
	fi
}

rxe_up || bail "rxe did not come up"

# The control, on the server alone: the disk keeps what a flush and FUA
# covered and loses the rest.
on_server "unload_rnbd_rtrs; rmmod null_blk 2>/dev/null; true"
control "a power cut" "$(on_server "$fns
	nullb_make 4096 && echo \"writes: \$(dur_write $dev)\" &&
	nullb_power_cycle && echo \"after: \$(dur_read $dev)\"")"

for c in $CASES; do
	IFS=: read -r cst sst bs <<<"$c"
	name="client $cst, server $sst, $bs-byte blocks"
	on_server "$fns
		nullb_make $bs" || bail "$name: cannot make $dev"
	check "$name: $dev mapped, write back with FUA as the server's disk" \
		eval 'load_map $cst $sst && queue_as $bs 1'
	kmsg_mark "dur-$c"
	writes_are "$name" "$(dur_write /dev/rnbd0)"
	check "$name: unmapped" rnbd_unmap_all
	unload_rnbd_rtrs -w 30
	on_server "unload_rnbd_rtrs -w 30 && $fns
		nullb_power_cycle" || bail "$name: $dev did not come back after the power cut"
	sets_after "$name" "the power cut" "$(load_map "$cst" "$sst" && dur_read /dev/rnbd0)"
	check "$name: unmapped again" rnbd_unmap_all
	rnbd_cleanup
	on_server "rmdir $nb; rmmod null_blk 2>/dev/null; true"
done

# --- The server's machine dies.
on_server "unload_rnbd_rtrs; rmmod null_blk 2>/dev/null; true"
out=$(on_server "loop_vda 4096 wipe && echo \"writes: \$(dur_write $loop)\"")
crash_server || bail "the server did not come back after its QEMU was killed"
control "its machine died" "$out
$(on_server "loop_vda 4096 && echo \"after: \$(dur_read $loop)\"")"

for c in $CRASH_CASES; do
	IFS=: read -r cst sst bs <<<"$c"
	name="machine killed: client $cst, server $sst, $bs-byte blocks"
	on_server "loop_vda $bs wipe" || bail "$name: cannot make $loop"
	check "$name: $loop mapped, write back without FUA as the server's disk" \
		eval 'load_map $cst $sst $loop && queue_as $bs 0'
	kmsg_mark "dur-$c"
	writes_are "$name" "$(dur_write /dev/rnbd0)"
	check "$name: the server's machine dies and boots again" crash_server
	echo force >/sys/block/rnbd0/rnbd/unmap_device
	unload_rnbd_rtrs -w 30
	on_server "loop_vda $bs" || bail "$name: $loop did not come back"
	sets_after "$name" "the machine died" "$(load_map "$cst" "$sst" $loop && dur_read /dev/rnbd0)"
	check "$name: unmapped again" rnbd_unmap_all
	rnbd_cleanup
	on_server "loop_vda_off; true"
done
check "no kernel warning on either side" eval '! dmesg_bad && ! on_server dmesg_bad'
ktap_finish
