#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# Our rnbd-client against the C rnbd-server (server stack c), on our RTRS
# (stack rnbd) and on the C RTRS (stack rnbd-c): the C rnbd-client first
# records what sysfs shows and how writes are answered, then ours must do
# the same; and IO with verification over two paths (rnbd_fio_matrix too),
# a read-only mapping, unmap of an open device, resize, bad map_device
# strings, an unknown device, unload.
#
# STACKS: the client stacks whose cases run. make check: ours on our RTRS,
# "rnbd"; soak/: "c rnbd rnbd-c", where c is the C client's own cases (the
# control: add_path and remove_path on its session, a map to a silent
# server), besides the reference it records for every run. SILENT_MAP: how
# the map to a silent server ends once the other map and unmap are done:
# its writer gets a signal (signal, make check), or it waits out the
# connection's 30 s (timeout, soak/).
. "$(dirname "$0")/lib.sh"

sess=rs-clt
ctl=/sys/class/rnbd-client/ctl
dev=/sys/block/rnbd0/rnbd
map2="sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0"
read -ra stacks <<<"${STACKS:-rnbd}"
# Two cases for C's client, 39 for each of ours.
nplan=0
for stack in "${stacks[@]}"; do
	case $stack in c) nplan=$((nplan + 2)) ;; *) nplan=$((nplan + 39)) ;; esac
done
ktap_plan $nplan
# control: C's client's own cases run (c is one of STACKS).
control() { [[ " ${stacks[*]} " == *" c "* ]]; }

cleanup() {
	exec 3<&- 2>/dev/null
	rnbd_cleanup
}
trap cleanup EXIT

map() { echo "$1" >$ctl/map_device; }
unmap() { echo "${1:-normal}" >$dev/unmap_device && wait_for 30 test ! -e /dev/rnbd0; }

# What a client shows of a mapped device and answers to writes, into <dir>.
record() {
	local d=$1 f
	sysfs_tree $dev >"$d/tree"
	sysfs_tree $ctl >"$d/ctl_tree"
	for f in state session mapping_path access_mode nr_poll_queues unmap_device resize remap_device; do
		echo "$f: $(cat $dev/$f)"
	done >"$d/contents"
	cat /sys/block/rnbd0/size /sys/block/rnbd0/ro >>"$d/contents"
	{
		try_write $dev unmap_device bogus
		try_write $dev remap_device 2
		try_write $dev remap_device 1
		try_write $dev resize abc
	} >"$d/dev_writes"
}

# map_device writes that fail, and how.
bad_maps() {
	try_write $ctl map_device "sessname=$sess"
	try_write $ctl map_device "device_path=/dev/nullb0"
	try_write $ctl map_device "sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0 bogus=1"
	try_write $ctl map_device "sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0 access_mode=rx"
	try_write $ctl map_device "sessname=$sess path=ip:300.1.2.3 device_path=/dev/nullb0"
	try_write $ctl map_device "sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nonexistent"
	# A bad path fails as it is read: before a bad or missing option.
	try_write $ctl map_device "path=foo"
	try_write $ctl map_device "path=foo bogus=1"
	try_write $ctl map_device "sessname=$sess path=foo device_path=/dev/nullb0 access_mode=zz"
	signalled_map
}

# A map to a server that never answers (as below) in the background, and
# meanwhile a map and an unmap of a device on a server that does: those
# must not wait for the first (C serialises per session). The first map is
# still connecting when they are done; then it fails, at once when its
# writer gets a signal (SILENT_MAP=signal, as signalled_map), or after the
# connection's 30 s.
independent_maps() {
	local bg rc=0
	ip neigh replace 192.0.2.98 lladdr 02:00:00:00:00:98 dev eth0 nud permanent
	(
		trap 'true' USR1
		echo "sessname=$sess-dead path=ip:192.0.2.98 device_path=/dev/nullb0" >$ctl/map_device
	) 2>/dev/null &
	bg=$!
	sleep 1
	map "sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0" && wait_for 60 test -b /dev/rnbd0 &&
		unmap && kill -0 $bg 2>/dev/null || rc=1
	[ "${SILENT_MAP:-signal}" = timeout ] || kill -USR1 $bg 2>/dev/null
	wait $bg && rc=1
	ip neigh del 192.0.2.98 dev eth0
	return $rc
}

# A map to an address that resolves but never answers (a static neighbour
# entry with nobody behind it), by a writer that gets a signal after 2 s
# while the connection waits: the write ends with the signal (C's
# ERESTARTSYS, EINTR for a handler without SA_RESTART), not a timeout.
signalled_map() {
	local pid
	ip neigh replace 192.0.2.99 lladdr 02:00:00:00:00:99 dev eth0 nud permanent
	(
		trap 'true' USR1
		echo "sessname=$sess-dead path=ip:192.0.2.99 device_path=/dev/nullb0" >$ctl/map_device 2>/tmp/sig.err
		echo "map to a silent address, signalled: $(sed 's/.*: //' /tmp/sig.err)"
	) &
	pid=$!
	sleep 2
	kill -USR1 $pid
	wait $pid
	ip neigh del 192.0.2.99 dev eth0
}

rxe_up || bail "rxe did not come up"
unload_rnbd_rtrs
on_server srv_stack_load c || bail "server: cannot load null_blk and the C rnbd-server"

# The reference: the C client.
ref=$(mktemp -d)
clt_stack_load c || bail "cannot load the C rnbd-client"
map "$map2" && wait_for 60 test -b /dev/rnbd0 || bail "C client: map failed"
record "$ref"
if control; then
	fio_verify /dev/rnbd0 --rw=randrw --bsrange=512-124k --blockalign=512 --iodepth=32 --size=8M
	diag "C client randrw: $?"
fi
unmap || bail "C client: unmap failed"
if control; then
	map "sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0" && wait_for 60 test -b /dev/rnbd0 ||
		bail "C client: map on one path failed"
	check "C client: add_path without and with a source, and remove_path, on its session" add_path_cycle $sess
	unmap || bail "C client: unmap failed"
	check "C client: a map to a silent server makes no other map or unmap wait" independent_maps
fi
bad_maps >"$ref/bad_maps"
unload_rnbd_rtrs
diag "C: $(tr '\n' ' ' <"$ref/bad_maps")"

for stack in "${stacks[@]}"; do
	[ "$stack" = c ] && continue
	ours=$(mktemp -d)
	if ! clt_stack_load $stack; then
		fail "$stack: load"
		continue
	fi
	diag "$stack: $(stack_files | tr '\n' ' ')"
	kmsg_mark "$stack"
	check "$stack: map_device with two paths" eval 'map "$map2" && wait_for 60 test -b /dev/rnbd0'
	check "$stack: state is open" wait_for 10 eval '[ "$(cat $dev/state)" = open ]'
	check "$stack: the session has two connected paths" \
		wait_for 30 eval '[ "$(cat /sys/class/rtrs-client/$sess/paths/*/state | grep -c connected)" = 2 ]'
	check "$stack: size of rnbd0 equals nullb0" \
		eval '[ "$(cat /sys/block/rnbd0/size)" = "$(on_server cat /sys/block/nullb0/size)" ]'
	check "$stack: fio writes 4 MiB and reads it back verified" \
		fio_verify /dev/rnbd0 --rw=randwrite --bs=64k --iodepth=16 --size=4M
	check "$stack: 512 B to 124 KiB, read and write mixed, verified" \
		fio_verify /dev/rnbd0 --rw=randrw --bsrange=512-124k --blockalign=512 --iodepth=32 --size=4M
	rnbd_fio_matrix "$stack" /dev/rnbd0 64
	record "$ours"
	check "$stack: sysfs of the device (names, modes) is the C one" diff -u "$ref/tree" "$ours/tree"
	check "$stack: ctl's sysfs (names, modes, devices link) is the C one" \
		diff -u "$ref/ctl_tree" "$ours/ctl_tree"
	check "$stack: what the files show is what C shows" diff -u "$ref/contents" "$ours/contents"
	check "$stack: device writes get C's answers" diff -u "$ref/dev_writes" "$ours/dev_writes"

	exec 3</dev/rnbd0
	check "$stack: unmap normal of an open device is EBUSY" \
		eval '[ "$(try_write $dev unmap_device normal)" = "unmap_device normal: Device or resource busy" ]'
	exec 3<&-
	check "$stack: resize to 1 GiB / 2 shows in the disk size" \
		eval 'echo 1048576 >$dev/resize && [ "$(cat /sys/block/rnbd0/size)" = 1048576 ]'
	check "$stack: unmap normal" unmap normal

	check "$stack: map read-only" \
		eval 'map "$map2 access_mode=ro" && wait_for 60 test -b /dev/rnbd0'
	check "$stack: read-only: ro is 1, access_mode ro" \
		eval '[ "$(cat /sys/block/rnbd0/ro) $(cat $dev/access_mode)" = "1 ro" ]'
	check "$stack: read-only: a write fails" \
		eval '! dd if=/dev/zero of=/dev/rnbd0 bs=4k count=1 oflag=direct 2>/dev/null'
	check "$stack: read-only: reads work" \
		eval 'dd if=/dev/rnbd0 of=/dev/null bs=64k count=64 iflag=direct 2>/dev/null'
	check "$stack: unmap force" unmap force
	check "$stack: the last unmap closed the RTRS session" \
		wait_for 30 eval '! test -e /sys/class/rtrs-client/$sess'

	# One path: reconnecting it takes the session down (link event
	# DISCONNECTED: state closed) and up again (RECONNECTED: remapped).
	check "$stack: map on one path" \
		eval 'map "sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0" && wait_for 60 test -b /dev/rnbd0'
	kmsg_mark "$stack-re"
	check "$stack: the path reconnects" \
		eval 'echo 1 >/sys/class/rtrs-client/$sess/paths/*/reconnect'
	check "$stack: the device was disconnected and remapped, state open" \
		wait_for 60 eval 'kmsg_since "$stack-re" | grep -q "remapped successfully" && [ "$(cat $dev/state)" = open ]'
	check "$stack: IO after the remap, verified" \
		fio_verify /dev/rnbd0 --rw=randwrite --bs=16k --iodepth=16 --size=4M
	# As an operator extends the session rnbd-client made: C's client does.
	check "$stack: add_path without and with a source, and remove_path, on this session" \
		add_path_cycle $sess
	check "$stack: unmap" unmap
	check "$stack: a map to a silent server makes no other map or unmap wait" independent_maps

	# Poll queues need a session of their own.
	check "$stack: map with nr_poll_queues=1" \
		eval 'map "$map2 nr_poll_queues=1" && wait_for 60 test -b /dev/rnbd0'
	check "$stack: nr_poll_queues reads 1, io_poll is on" \
		eval '[ "$(cat $dev/nr_poll_queues) $(cat /sys/block/rnbd0/queue/io_poll)" = "1 1" ]'
	check "$stack: polled IO (io_uring, hipri), verified" \
		fio_verify /dev/rnbd0 --ioengine=io_uring --hipri=1 --rw=randrw --bsrange=4k-64k --iodepth=16 --size=4M
	check "$stack: unmap" unmap

	kmsg_mark "$stack-bad"
	bad_maps >"$ours/bad_maps"
	check "$stack: bad map_device strings and an unknown device fail as in C" \
		diff -u "$ref/bad_maps" "$ours/bad_maps"
	check "$stack: each bad map_device string left a dmesg line" \
		eval '[ "$(kmsg_since "$stack-bad" | grep -c "map_device: invalid")" -ge 4 ]'
	check "$stack: no rnbd device left behind" eval '! ls /dev/rnbd* 2>/dev/null'
	check "$stack: rmmod rnbd_client, then rtrs_client" eval 'rmmod rnbd_client && rmmod rtrs_client'
	check "$stack: dmesg is clean" eval '! dmesg_bad'
	unload_rnbd_rtrs
done
ktap_finish
