#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# topology=servers=2 clients=1 links=2 smp=1
# Redundancy across storage servers, the way operators build it: the
# client mirrors two RNBD devices, one from each server, with md RAID1.
# Each server's disk is its /dev/vda (256 MiB; the array uses the first
# ARRAY_MIB of each) behind a volatile write cache that the machine's death
# loses (lib.sh's loop_vda: /dev/loop0, buffered). Through the array the
# client first writes the durability sets (lib.sh's dur_write: A then
# fsync(), B with O_DSYNC, C with neither). Under verified IO, server2's
# machine dies: the array degrades and the IO goes on, verified, while
# server2 boots again. Its leg, read on its own before anything is
# resynced, holds A and B: what the array acknowledged as flushed was on
# both servers' disks.
# The client fills the degraded array with a pattern, its session to
# server2 comes back once server2 serves, and its device, wiped, is added
# to the array again and resynced (no bitmap: all of it). Then the first
# server's leg is failed and removed: every block of the array now comes
# from server2's disk, and the pattern verifies. Our stack on all three
# machines.
#
# Knobs, from the environment (scripts/run-tests --env): IO_SECONDS, how
# long the verified IO runs around the kill (60: the kill comes after 10 s,
# and the paths notice a dead server within 1 to 35 s, the last of them by
# its heartbeats; the IO must still run when the array degrades);
# ARRAY_MIB, how much of each disk the array uses (16; 0 for all of it, as
# soak/rnbd_raid1_servers.sh runs it): the pattern, the resync and the read
# back each move the whole array over the links, and the verified IO runs
# over its first 64 MiB at most; RECONNECT, how the session to server2
# comes back once server2 serves again: through its paths' reconnect files
# (sysfs, make check), or by itself, after the reconnect delay, 30 s, and
# whatever attempt to the dead server2 was under way (delay, soak/).
. "$(dirname "$0")/lib.sh"

IO_SECONDS=${IO_SECONDS:-60}
ARRAY_MIB=${ARRAY_MIB:-16}
# The verified IO runs over the first io_mib MiB, and the durability sets
# take the 3 MiB after it.
io_mib=64
[ "$ARRAY_MIB" = 0 ] || [ "$ARRAY_MIB" -ge $((io_mib + 4)) ] || io_mib=$((ARRAY_MIB - 4))
sets_mib=$io_mib
ctl=/sys/class/rnbd-client/ctl
ccls=/sys/class/rtrs-client
ktap_plan 16

cleanup() {
	dmsetup remove r1leg 2>/dev/null
	mdadm --stop /dev/md0 >/dev/null 2>&1
	rnbd_cleanup
	on_server 'loop_vda_off; true'
	on_guest -t 30 server2 'unload_rnbd_rtrs; loop_vda_off; true' >/dev/null 2>&1
	true
}
trap cleanup EXIT

# serve <server> [wipe]: rxe on its links, our stack exporting its
# /dev/vda behind its volatile cache (loop_vda, /dev/loop0); with wipe,
# vda's first MiBs zeroed first.
serve() {
	on_guest "$1" "rxe_up_local && loop_vda 512 $2 && _stack_load server rnbd"
}
# map <server> <device index>: its vda over both of its links, as
# /dev/rnbd<i>, in session r1-<server>. The server answers on both links
# first: a first connection right after a boot may time out otherwise
# (lib.sh's rxe_up).
map() {
	local s=$1 line="sessname=r1-$1" k
	for k in 0 1; do
		wait_for 30 ping -c 1 -W 1 "$(link_ip "$s" client $k)" >/dev/null || return 1
		line="$line path=ip:$(link_ip client "$s" $k)@ip:$(link_ip "$s" client $k)"
	done
	echo "$line device_path=/dev/loop0" >$ctl/map_device && wait_for 60 test -b "/dev/rnbd$2"
}
# The array's state in /proc/mdstat: [UU] both legs, [U_] or [_U] one.
md_legs() { sed -n 's/.*\[\([U_]*\)\].*/\1/p' /proc/mdstat | tail -1; }
# reconnected: both paths of the session to server2 connected, each
# reconnected through its reconnect file if it was not (lib.sh's
# reconnect_path: the write fails while the path is still trying server2
# by itself, and then reconnects it at once).
reconnected() {
	local p n=0
	for p in "$ccls"/r1-server2/paths/*; do
		reconnect_path "$p" || return 1
		n=$((n + 1))
	done
	[ $n = 2 ]
}
# pattern <verify|write>: a verifiable sequential pattern over the whole
# array, written or checked.
pattern() {
	local size
	size=$(($(blockdev --getsize64 /dev/md0) / 1048576))M
	if [ "$1" = write ]; then
		fio --name=pat --filename=/dev/md0 --ioengine=libaio --direct=1 --rw=write --bs=1M \
			--iodepth=4 --size="$size" --verify=crc32c --do_verify=0 \
			>/tmp/r1-pat.out 2>&1
	else
		fio --name=pat --filename=/dev/md0 --ioengine=libaio --direct=1 --rw=write --bs=1M \
			--iodepth=4 --size="$size" --verify=crc32c --verify_only --verify_fatal=1 \
			>/tmp/r1-pat.out 2>&1
	fi
	local rc=$?
	grep -E 'err=|verify|bad' /tmp/r1-pat.out | sed 's/^/# /'
	return $rc
}

# leg_sets: the durability sets as server2's leg alone holds them (its
# array data seen through dm-linear from md's data offset on, once md let
# go of the failed leg): "A B C", "-" for a set that is not as written.
leg_sets() {
	local off
	mdadm /dev/md0 --remove failed >/dev/null 2>&1
	off=$(mdadm --examine /dev/rnbd1 2>/dev/null | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p')
	[ -n "$off" ] || return 1
	echo "0 $(blockdev --getsz /dev/md0) linear /dev/rnbd1 $off" | dmsetup create --noudevsync r1leg &&
		dmsetup mknodes r1leg && dur_read /dev/mapper/r1leg $sets_mib
	dmsetup remove r1leg
}

rxe_up_local && serve server wipe && serve server2 wipe || bail "the servers did not come up"
clt_stack_load rnbd && modprobe raid1 && modprobe dm-mod || bail "cannot load our client, raid1 or dm"
check "each server's disk mapped over its two links" eval 'map server 0 && map server2 1'
check "md RAID1 over the two" eval '
	mdadm --create /dev/md0 --run --level=1 --raid-devices=2 --assume-clean --metadata=1.2 \
		$([ "$ARRAY_MIB" = 0 ] || echo "--size=${ARRAY_MIB}M") /dev/rnbd0 /dev/rnbd1 >/dev/null 2>&1 && wait_for 30 test -b /dev/md0 && [ "$(md_legs)" = UU ]'

w=$(dur_write /dev/md0 $sets_mib)
diag "the durability sets through the array: $w"
check "the array takes the sets: A and its fsync(), B with O_DSYNC, C" eval '[ "$w" = "A=0 B=0 C=0" ]'

rm -f /tmp/r1-fio.rc
(
	fio_verify /dev/md0 --rw=randwrite --bs=4k --iodepth=16 --size=${io_mib}M --time_based \
		--runtime="$IO_SECONDS" --verify_backlog=256 >/tmp/r1-fio.out 2>&1
	echo $? >/tmp/r1-fio.rc
) &
fio_pid=$!
sleep 10
check "IO runs on the array when server2 dies" eval 'kill -0 $fio_pid && [ ! -e /tmp/r1-fio.rc ]'
host_request kill server2
t0=$SECONDS
check "the array degrades: server2's leg is failed" wait_for 180 eval '[ "$(md_legs)" = U_ ]'
diag "degraded $((SECONDS - t0)) s after the kill"
# The IO goes on past the degrade: it must still run then.
io_on=N
kill -0 $fio_pid 2>/dev/null && [ ! -e /tmp/r1-fio.rc ] && io_on=Y
# server2 boots again meanwhile: its boot and the rest of the IO overlap.
host_request start server2
wait $fio_pid
cat /tmp/r1-fio.out | grep -E 'IOPS=|err=|verify|bad' | sed 's/^/# /'
check "the IO went on and verified" eval '[ "$(cat /tmp/r1-fio.rc)" = 0 ] &&
	{ [ $io_on = Y ] || { diag "the IO had ended when the array degraded: give it more IO_SECONDS"; false; }; }'
check "a pattern fills the degraded array" pattern write

check "server2 boots again and serves its disk" \
	wait_for 300 eval 'on_guest -t 10 server2 true && serve server2'
t0=$SECONDS
if [ "${RECONNECT:-sysfs}" = delay ]; then
	check "the client's session to server2 reconnects by itself" wait_for 180 eval '
		[ "$(cat $ccls/r1-server2/paths/*/state 2>/dev/null | grep -c ^connected)" = 2 ]'
else
	check "the client's session to server2 reconnects through sysfs" wait_for 180 reconnected
fi
diag "the session was back $((SECONDS - t0)) s after server2 served"
r=$(leg_sets)
diag "server2's leg after its machine died, before any resync: ${r:-not read}"
check "server2's leg, before any resync, holds A (flushed) and B (O_DSYNC), every block" \
	eval '[[ "$r" = "A B "? ]]'
check "server2's device goes back into the array" eval '
	mdadm /dev/md0 --remove failed >/dev/null 2>&1; mdadm --zero-superblock /dev/rnbd1 &&
	mdadm /dev/md0 --add /dev/rnbd1 >/dev/null'
t0=$SECONDS
check "the array resyncs" wait_for 600 eval '[ "$(md_legs)" = UU ] && ! grep -q recovery /proc/mdstat'
diag "resynced in $((SECONDS - t0)) s"
check "the first server's leg failed and removed" eval '
	mdadm /dev/md0 --fail /dev/rnbd0 >/dev/null && mdadm /dev/md0 --remove /dev/rnbd0 >/dev/null &&
	[ "$(md_legs)" = _U ]'
check "the whole array, read from server2's disk alone, holds the pattern" pattern verify
check "the array stops, both devices unmap" eval 'mdadm --stop /dev/md0 >/dev/null &&
	echo normal >/sys/block/rnbd0/rnbd/unmap_device && echo normal >/sys/block/rnbd1/rnbd/unmap_device &&
	wait_for 30 eval "! ls /dev/rnbd* >/dev/null 2>&1"'
check "no kernel warning on any guest" eval '! dmesg_bad && ! on_server dmesg_bad && ! on_guest server2 dmesg_bad'
ktap_finish
