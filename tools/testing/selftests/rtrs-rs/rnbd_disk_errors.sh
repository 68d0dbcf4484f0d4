#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# The server's disk fails, in every pairing of our RNBD stack and C's. The
# server exports /dev/mapper/bad, a device-mapper table over a null_blk
# whose second 64 KiB are dm's error target, and a sound null_blk, in one
# session. On the client, reads and then writes of the first 192 KiB in 4k
# IOs, one at a time, go on past errors: exactly the 16 IOs of the bad
# 64 KiB fail, with EIO, and the others succeed. Meanwhile the sound device
# verifies IO and the session's paths stay connected. What the client logs
# about the failed IOs is what C's client logs against the same server.
#
# PAIRINGS (<client stack>:<server stack> ..., each of ours after C's
# client against the same server) is the short set in make check, C's
# client and then ours against our server; soak/rnbd_disk_errors.sh runs
# all four.
. "$(dirname "$0")/lib.sh"

sess=diskerr
ctl=/sys/class/rnbd-client/ctl
ccls=/sys/class/rtrs-client
PAIRINGS=${PAIRINGS:-c:rnbd rnbd:rnbd}
# Seven cases a pairing, eight for our client (its log against C's).
n=1
for pairing in $PAIRINGS; do
	case $pairing in c:*) n=$((n + 7)) ;; *) n=$((n + 8)) ;; esac
done
ktap_plan $n

cleanup() {
	rnbd_cleanup
	on_server 'dmsetup remove bad 2>/dev/null; rmmod null_blk 2>/dev/null; true'
}
trap cleanup EXIT

# The server's bad disk: 1 GiB, its second 64 KiB an error target. No udev
# in the guests: dmsetup makes the node itself.
bad_disk() {
	local n=2097152
	on_server "unload_rnbd_rtrs; dmsetup remove bad 2>/dev/null; rmmod null_blk 2>/dev/null
		modprobe null_blk nr_devices=2 gb=1 memory_backed=1 && modprobe dm-mod &&
		printf '0 128 linear /dev/nullb0 0\n128 128 error\n256 $((n - 256)) linear /dev/nullb0 256\n' |
			dmsetup create --noudevsync bad && dmsetup mknodes bad && test -b /dev/mapper/bad"
}
# errors <rw>: 4k IOs of the first 192 KiB of rnbd0, one at a time, going
# on past errors; prints fio's error count and first error.
errors() {
	fio --name=e --filename=/dev/rnbd0 --ioengine=psync --direct=1 --rw="$1" --bs=4k --size=192k \
		--continue_on_error=io 2>&1 | sed -n 's/^ *errors *: *//p'
}
# The client's log lines about failed IO since the mark, with what differs
# between runs and builds taken out: the device's number, sectors, and C's
# source line in its message prefixes ("rnbd_client L390: ").
io_log() {
	kmsg_since "$1" | sed -n 's/^\[[ 0-9.]*\] //p' | grep -iE 'I/O|IO |err' |
		grep -v 'rtrs-rs: mark\|callbacks suppressed' |
		sed -E 's/^(rnbd_client|rtrs_client) L[0-9]+: /\1: /; s/rnbd[0-9]+,/rnbdN,/g; s/sector [0-9]+/sector S/g' | sort -u
}

rxe_up || bail "rxe did not come up"
# What C's client logged, by server stack: the reference for ours.
declare -A c_log
# C's client first against each server: ours must log as it did.
for pairing in $PAIRINGS; do
	cst=${pairing%:*} sst=${pairing#*:}
	name="client $cst, server $sst"
	[ "$cst" = c ] || [ -n "${c_log[$sst]+set}" ] ||
		bail "PAIRINGS: $pairing comes before c:$sst, whose log is its reference"
	bad_disk && on_server "srv_stack_load $sst" && clt_stack_load "$cst" || bail "$name: cannot load"
	check "$name: /dev/mapper/bad and a sound disk mapped in one session" eval '
		echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/mapper/bad" >$ctl/map_device &&
		echo "sessname=$sess device_path=/dev/nullb1" >$ctl/map_device &&
		wait_for 60 test -b /dev/rnbd0 && wait_for 60 test -b /dev/rnbd1'
	r0=$(cat $ccls/$sess/paths/*/stats/reconnects | awk '{s += $1} END {print s}')
	kmsg_mark "diskerr-$pairing"
	e=$(errors read)
	diag "$name: reads: ${e:-no errors}"
	check "$name: exactly the 16 reads of the bad 64 KiB fail, with EIO" \
		eval '[ "${e%%,*}" = "total=16" ] && echo "$e" | grep -q "first_error=5/"'
	e=$(errors write)
	diag "$name: writes: ${e:-no errors}"
	check "$name: exactly the 16 writes of the bad 64 KiB fail, with EIO" \
		eval '[ "${e%%,*}" = "total=16" ] && echo "$e" | grep -q "first_error=5/"'
	check "$name: what is written past the bad 64 KiB reads back" eval '
		test -b /dev/rnbd0 && dd if=/dev/urandom of=/tmp/diskerr.pat bs=1M count=1 2>/dev/null &&
		dd if=/tmp/diskerr.pat of=/dev/rnbd0 bs=1M seek=2 oflag=direct 2>/dev/null &&
		cmp <(dd if=/dev/rnbd0 bs=1M skip=2 count=1 iflag=direct 2>/dev/null) /tmp/diskerr.pat'
	check "$name: the sound disk verifies IO meanwhile" \
		fio_verify /dev/rnbd1 --rw=randrw --bs=4k --iodepth=16 --size=4M
	check "$name: the session's paths stayed connected" eval '
		[ "$(cat $ccls/$sess/paths/*/state | grep -c ^connected)" = 2 ] &&
		[ "$(cat $ccls/$sess/paths/*/stats/reconnects | awk "{s += \$1} END {print s}")" = "$r0" ]'
	log=$(io_log "diskerr-$pairing")
	diag "$name: the client logged:"
	echo "$log" | sed 's/^/#   /'
	if [ "$cst" = c ]; then
		c_log[$sst]=$log
	else
		check "$name: the client logs what C's does against the same server" \
			[ "$log" = "${c_log[$sst]}" ]
	fi
	check "$name: unmapped" rnbd_unmap_all
	rnbd_cleanup
done
check "no kernel warning on either side" eval '! dmesg_bad && ! on_server dmesg_bad'
ktap_finish
