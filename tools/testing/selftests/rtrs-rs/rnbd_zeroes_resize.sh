#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# Write-zeroes and resize over RNBD, on every pairing of client and server
# stacks the RNBD tests run: the C RNBD on the C RTRS (the control), the C
# RNBD on our RTRS, our RNBD on our RTRS, the C client against our server on
# our RTRS and on the C one (rnbd_srv.sh), and our client on our RTRS and on
# the C one against the C server (rnbd_clt.sh). PAIRS (<client stack>/<server
# stack> ...): make check runs our RNBD on our RTRS against itself and
# against C's RNBD on either side, as rnbd_clt.sh and rnbd_srv.sh do; soak/
# adds our RNBD on C's RTRS on either side, the control and the C RNBD on
# our RTRS, which carries write-zeroes as it carries any IO.
#
# The server exports a loop device over a sparse 64 MiB file in its /tmp, a
# tmpfs: loop advertises write-zeroes when the backing file has fallocate,
# and does a write-zeroes without REQ_NOUNMAP (RNBD does not carry that
# flag) as FALLOC_FL_PUNCH_HOLE, which tmpfs has. null_blk has no
# write-zeroes.
#
# Write-zeroes: the client's write_zeroes_max_bytes is the server device's,
# as OPEN_RSP reported it; `fallocate -p` of a MiB written with a pattern
# (blkdev_issue_zeroout with BLKDEV_ZERO_NOFALLBACK: it fails with
# EOPNOTSUPP unless a REQ_OP_WRITE_ZEROES goes through RNBD) reads back as
# zeros on the client and on the server's loop device, the next MiB keeps
# its data, and the server's file lost the punched MiB (a hole, not written
# zeros); `fallocate -z` of the next MiB reads back as zeros too (only the
# zeros are checked: without write-zeroes the block layer writes them).
#
# Resize: the server grows the file to 128 MiB and rereads it
# (losetup -c); the client's disk keeps 64 MiB until 262144 is written to
# its resize file (RNBD does not tell the client), then shows 128 MiB, and a
# pattern written into the last MiB from the client reads back on the
# server's loop device and on the client.
. "$(dirname "$0")/lib.sh"

sess=rnbd-wz
ctl=/sys/class/rnbd-client/ctl
img=/tmp/rnbd-wz.img
pat=/tmp/rnbd-wz.pat
# Client stack / server stack.
pairs=${PAIRS:-rnbd/rnbd c/rnbd rnbd/c}
ktap_plan $(($(wc -w <<<"$pairs") * 11 + 1))

# On the server: detach the loop device of $img, if any, and remove it.
loop_gone() {
	local lo
	for lo in $(losetup -a | sed -n "s|^\(/dev/loop[0-9]*\): .*$img\$|\1|p"); do
		losetup -d "$lo"
	done
	rm -f "$img"
}
# On the server: $img, a new sparse file of 64 MiB on a tmpfs, on a free
# loop device; prints the device.
loop_fresh() {
	local lo
	[ "$(stat -f -c %T "$(dirname "$img")")" = tmpfs ] || {
		echo "$(dirname "$img") is not a tmpfs" >&2
		return 1
	}
	modprobe loop && loop_gone && truncate -s 64M "$img" &&
		lo=$(losetup -f) && losetup "$lo" "$img" && echo "$lo"
}
# range <dev> <first MiB> <MiBs>: those bytes of <dev>, read with O_DIRECT.
range() { dd if="$1" bs=64k skip=$(($2 * 16)) count=$(($3 * 16)) iflag=direct 2>/dev/null; }
nonzero() { range "$@" | tr -d '\0' | wc -c; }
sum() { range "$@" | md5sum | cut -d' ' -f1; }
# srv <script>: on_server with $img and the helpers above.
srv() { on_server "img=$img; $(declare -f loop_gone loop_fresh range nonzero sum); $*"; }

cleanup() {
	rnbd_cleanup
	srv loop_gone
}
trap cleanup EXIT

# What the two sides show when a case fails.
show() {
	diag "client: $(grep -H . /sys/block/rnbd0/size /sys/block/rnbd0/queue/write_zeroes_max_bytes 2>&1 | tr '\n' ' ')"
	srv "losetup -a; cat /sys/block/loop*/size 2>/dev/null | sort -u | tr '\n' ' '" | sed 's/^/# server: /'
	dmesg | tail -5 | sed 's/^/# client dmesg: /'
	on_server 'dmesg | tail -5' | sed 's/^/# server dmesg: /'
}
check_on_fail=show

rxe_up || bail "rxe did not come up"
unload_rnbd_rtrs
on_server 'unload_rnbd_rtrs; rmmod null_blk 2>/dev/null; true'
# 2 MiB of pattern: its first MiB is punched, its second zeroed; the tail
# of the grown disk gets its first MiB.
dd if=/dev/urandom of=$pat bs=64k count=32 2>/dev/null || bail "no pattern file"
sum1=$(dd if=$pat bs=64k count=16 2>/dev/null | md5sum | cut -d' ' -f1)
sum2=$(dd if=$pat bs=64k skip=16 count=16 2>/dev/null | md5sum | cut -d' ' -f1)

run_pair() {
	local cst=${1%/*} sst=${1#*/} p=$1 lo out blocks freed

	# The old stack goes first: its rnbd-server holds the old loop device.
	lo=$(srv "unload_rnbd_rtrs -w 30 && lo=\$(loop_fresh) && _stack_load server $sst && echo \$lo")
	if [[ $lo != /dev/loop* ]]; then
		echo "$lo" | sed 's/^/# server: /'
		bail "$p: server: cannot unload the old stack, set up the loop device or load the stack"
	fi
	clt_stack_load "$cst" || bail "$p: cannot load the client stack"
	diag "$p: server $lo; client: $(stack_files | tr '\n' ' '); server: $(on_server stack_files | tr '\n' ' ')"

	check "$p: map $lo, /dev/rnbd0 appears with its 64 MiB" \
		eval 'echo "sessname=$sess path=ip:$SERVER_IP0 device_path=$lo" >$ctl/map_device &&
			wait_for 60 test -b /dev/rnbd0 && [ "$(cat /sys/block/rnbd0/size)" = 131072 ]'

	local wz srv_wz
	wz=$(cat /sys/block/rnbd0/queue/write_zeroes_max_bytes)
	srv_wz=$(on_server "cat /sys/block/${lo#/dev/}/queue/write_zeroes_max_bytes")
	diag "$p: write_zeroes_max_bytes: client $wz, server $srv_wz"
	check "$p: write_zeroes_max_bytes is the server device's, not 0" \
		eval '[ "$wz" = "$srv_wz" ] && [ "$wz" -gt 0 ]'

	# Write-zeroes.
	check "$p: fallocate -p of a written MiB: zeros on the client, the next MiB kept" \
		eval 'dd if=$pat of=/dev/rnbd0 bs=64k oflag=direct 2>/dev/null &&
			[ "$(sum /dev/rnbd0 0 1) $(sum /dev/rnbd0 1 1)" = "$sum1 $sum2" ] &&
			blocks=$(srv "stat -c %b $img") &&
			out=$(fallocate -p -o 0 -l 1048576 /dev/rnbd0 2>&1) &&
			[ "$(nonzero /dev/rnbd0 0 1)" = 0 ] && [ "$(sum /dev/rnbd0 1 1)" = "$sum2" ] ||
			{ diag "fallocate -p: ${out:-no error}"; false; }'
	freed=$((blocks - $(srv "stat -c %b $img")))
	diag "$p: the server's file freed $freed blocks of 512 bytes"
	check "$p: the server's loop device reads zeros there too, the file lost the MiB" \
		eval 'srv "[ \"\$(nonzero $lo 0 1) \$(sum $lo 1 1)\" = \"0 $sum2\" ]" && [ "$freed" -ge 2048 ]'
	check "$p: fallocate -z of the next MiB reads back as zeros on both sides" \
		eval 'out=$(fallocate -z -o 1048576 -l 1048576 /dev/rnbd0 2>&1) &&
			[ "$(nonzero /dev/rnbd0 1 1)" = 0 ] && srv "[ \"\$(nonzero $lo 1 1)\" = 0 ]" ||
			{ diag "fallocate -z: ${out:-no error}"; false; }'

	# Resize after the server grew the device.
	check "$p: server: the file grows to 128 MiB, losetup -c, the loop device follows" \
		srv "truncate -s 128M $img && losetup -c $lo && [ \"\$(cat /sys/block/${lo#/dev/}/size)\" = 262144 ]"
	check "$p: the client's disk keeps 64 MiB until resized: the last MiB is out of reach" \
		eval '[ "$(cat /sys/block/rnbd0/size)" = 131072 ] &&
			! dd if=$pat of=/dev/rnbd0 bs=64k count=16 seek=$((127 * 16)) conv=notrunc oflag=direct 2>/dev/null'
	check "$p: resize 262144: /sys/block/rnbd0/size shows it" \
		eval 'echo 262144 >/sys/block/rnbd0/rnbd/resize && [ "$(cat /sys/block/rnbd0/size)" = 262144 ]'
	check "$p: a pattern written into the last MiB from the client reads back on the server" \
		eval 'dd if=$pat of=/dev/rnbd0 bs=64k count=16 seek=$((127 * 16)) conv=notrunc oflag=direct 2>/dev/null &&
			[ "$(srv "sum $lo 127 1")" = "$sum1" ]'
	check "$p: ... and on the client" eval '[ "$(sum /dev/rnbd0 127 1)" = "$sum1" ]'

	check "$p: unmap; both sides unload" \
		eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 test ! -e /dev/rnbd0 &&
			unload_rnbd_rtrs && ! mod_loaded rtrs_client &&
			srv "wait_for 30 eval \"unload_rnbd_rtrs; ! mod_loaded rtrs_server\" && loop_gone"'
}

for pair in $pairs; do run_pair "$pair"; done

check "no kernel warnings on either side" eval '! dmesg_bad && on_server "! dmesg_bad"'
ktap_finish
