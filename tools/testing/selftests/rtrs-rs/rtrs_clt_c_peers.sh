#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# Our rtrs-client under the unmodified C rnbd-client, against the C server
# stack, with two paths (one per link). First the C rtrs-client maps the
# same device as a reference: its sysfs tree (names and modes), what its
# files show and how it answers bad writes are recorded, and ours must
# match, and removing every path, the last one too, must go as in C. Then,
# on ours: verified IO over both paths (round-robin spreads it, and every
# policy), IO that survives one path being disconnected, reconnect,
# remove_path and add_path, the errors only ours can show without a kernel
# warning, unmap and unload; last, a C server with always_invalidate=N.
. "$(dirname "$0")/lib.sh"

sess=rs-clt
cls=/sys/class/rtrs-client
p0=ip:$CLIENT_IP0@ip:$SERVER_IP0
p1=ip:$CLIENT_IP1@ip:$SERVER_IP1
ref=/tmp/rtrs-clt-ref
ours=/tmp/rtrs-clt-ours
ktap_plan 38

cleanup() {
	wait
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	unload_rnbd_rtrs
	on_server 'unload_rnbd_rtrs; rmmod null_blk 2>/dev/null; true'
}
trap cleanup EXIT

map() {
	echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0" \
		>/sys/class/rnbd-client/ctl/map_device
}
state_is() { [ "$(cat "$cls/$sess/paths/$1/state" 2>/dev/null)" = "$2" ]; }
both_connected() { state_is "$p0" connected && state_is "$p1" connected; }
unmap() { echo normal >/sys/block/rnbd0/rnbd/unmap_device; }
sess_gone() { ! [ -e "$cls/$sess" ]; }

# What the files that do not change with IO show. Per-CPU counters become
# their number of fields.
contents() {
	local f
	for f in max_reconnect_attempts mpath_policy add_path \
		paths/{"$p0","$p1"}/{hca_name,hca_port,src_addr,dst_addr,state,reconnect,disconnect,remove_path} \
		paths/"$p0"/stats/{reconnects,reset_all}; do
		printf '== %s\n' "$f"
		cat "$cls/$sess/$f"
	done
	for f in cpu_migration_from cpu_migration_to rdma; do
		printf '== %s fields: %s\n' "$f" "$(wc -w <"$cls/$sess/paths/$p0/stats/$f")"
	done
}

# Good and bad writes that leave the session as it was, and what the files
# show afterwards.
writes() {
	try_write "$cls/$sess" mpath_policy bogus
	try_write "$cls/$sess" mpath_policy 3
	try_write "$cls/$sess" mpath_policy ml
	cat "$cls/$sess/mpath_policy"
	try_write "$cls/$sess" mpath_policy round-robin
	cat "$cls/$sess/mpath_policy"
	try_write "$cls/$sess" mpath_policy 1
	try_write "$cls/$sess" max_reconnect_attempts 10000
	try_write "$cls/$sess" max_reconnect_attempts -2
	try_write "$cls/$sess" max_reconnect_attempts abc
	try_write "$cls/$sess" max_reconnect_attempts 5
	cat "$cls/$sess/max_reconnect_attempts"
	try_write "$cls/$sess" max_reconnect_attempts -1
	try_write "$cls/$sess" add_path garbage
	try_write "$cls/$sess" add_path ip:999.1.1.1
	try_write "$cls/$sess" "paths/$p1/reconnect" 2
	try_write "$cls/$sess" "paths/$p1/disconnect" 0
	try_write "$cls/$sess" "paths/$p1/remove_path" x
	try_write "$cls/$sess" "paths/$p1/stats/reset_all" 0
	try_write "$cls/$sess" "paths/$p1/stats/rdma" 2
	try_write "$cls/$sess" "paths/$p1/stats/reset_all" 1
	cat "$cls/$sess/paths/$p1/stats/reconnects"
}

# remove_all: removes path 1, then path 0, the last one; prints what each
# write answered and what is left.
remove_all() {
	try_write "$cls/$sess" "paths/$p1/remove_path" 1
	try_write "$cls/$sess" "paths/$p0/remove_path" 1
	echo "paths left: $(ls "$cls/$sess/paths" | wc -l)"
	cat /sys/block/rnbd0/rnbd/state
}

# record <dir>: the tree, contents and writes of the mapped session. A
# path's protocol file (0444) is ours, and checked on its own.
record() {
	mkdir -p "$1"
	sysfs_tree "$cls/$sess" | grep -v '^444 paths/[^/]*/protocol$' >"$1/tree"
	contents >"$1/contents" 2>&1
	writes >"$1/writes" 2>&1
}

rxe_up || bail "rxe did not come up"
on_server srv_stack_load c || bail "cannot load the C server stack"

# The reference: the C rtrs-client.
clt_stack_load c || bail "cannot load the C client stack"
map && wait_for 60 test -b /dev/rnbd0 && wait_for 30 both_connected ||
	bail "the C client cannot map the device over two paths"
record "$ref"
remove_all >"$ref/remove_all" 2>&1
unmap && wait_for 30 sess_gone || bail "the C client cannot unmap"
unload_rnbd_rtrs

check "our rtrs-client loads under the C rnbd-client" clt_stack_load rtrs
stack_files | sed 's/^/# client| /'
check "rtrs_client and rtrs_core are ours, rnbd_client is C" \
	eval 'mod_is_ours rtrs_client && mod_is_ours rtrs_core && ! mod_is_ours rnbd_client'
kmsg_mark clt-c-peers
check "map_device with two paths" map
check "/dev/rnbd0 appears" wait_for 60 test -b /dev/rnbd0
check "both paths are connected" wait_for 30 both_connected
check "the C server answers our offer of RTRS 2.1 with 2.0" eval '
	[ "$(kmsg_since clt-c-peers | grep -c "rtrs_client: .*: RTRS 2.0$")" -ge 2 ] &&
	! kmsg_since clt-c-peers | grep -q "rtrs_client: .*RTRS 2.1"'
check "both paths' protocol files show 2.0" \
	eval '[ "$(cat "$cls/$sess/paths/$p0/protocol" "$cls/$sess/paths/$p1/protocol")" = "2.0
2.0" ]'
record "$ours"
diag "C's answers:"
sed 's/^/#   /' "$ref/writes"
check "the session's sysfs tree (names, modes) is the C one" diff -u "$ref/tree" "$ours/tree"
check "what the files show is what C shows" diff -u "$ref/contents" "$ours/contents"
check "good and bad writes get C's answers" diff -u "$ref/writes" "$ours/writes"
check "hca_name is the path's rxe device" \
	eval '[ "$(cat $cls/$sess/paths/$p0/hca_name)" = rxe0 ] && [ "$(cat $cls/$sess/paths/$p1/hca_name)" = rxe1 ]'
check "capacity is the server's 1 GiB" \
	eval '[ "$(cat /sys/block/rnbd0/size)" = "$(on_server cat /sys/block/nullb0/size)" ]'

writes_of() { set -- $(cat "$cls/$sess/paths/$1/stats/rdma"); echo "$3"; }
check "mpath_policy round-robin" eval "echo round-robin >$cls/$sess/mpath_policy"
check "4k-124k random writes, QD32, verified" \
	fio_verify /dev/rnbd0 --rw=randwrite --bsrange=4k-124k --iodepth=32 --size=16M
w0=$(writes_of "$p0") w1=$(writes_of "$p1")
diag "writes per path: $w0 $w1"
check "round-robin used both paths" eval '[ "${w0:-0}" -gt 100 ] && [ "${w1:-0}" -gt 100 ]'

# Path 1 goes down in the middle of verified IO: the IO fails over.
fio_verify /dev/rnbd0 --rw=randwrite --bs=4k --iodepth=32 --size=8M --offset=128M >/tmp/fio-failover 2>&1 &
fio_pid=$!
wait_for 30 eval '[ "$(writes_of "$p1")" -gt "$w1" ]'
fo=$(failed_over $sess)
during_io $fio_pid "disconnect path 1 during IO" eval "echo 1 >$cls/$sess/paths/$p1/disconnect"
check "path 1 shows disconnected, path 0 connected" eval 'state_is "$p1" disconnected && state_is "$p0" connected'
check "the IO completes, verified, on path 0" wait $fio_pid
sed 's/^/# /' /tmp/fio-failover
diag "requests failed over: $(($(failed_over $sess) - fo))"
check "path 1's requests in flight failed over (stats/rdma)" eval '[ "$(failed_over $sess)" -gt "$fo" ]'
check "the failover sent the C server nothing of RTRS 2.1 (no fence, no unknown IMM)" eval '
	! kmsg_since clt-c-peers | grep -q "fence on\|answered its IO" &&
	! on_server "dmesg | grep -q \"Unknown IMM\""'
check "reconnect path 1" eval "echo 1 >$cls/$sess/paths/$p1/reconnect"
check "path 1 is connected again" state_is "$p1" connected
check "stats/reconnects counts it" eval '[ "$(cat $cls/$sess/paths/$p1/stats/reconnects)" = "1 0" ]'

check "remove_path of path 1" eval "echo 1 >$cls/$sess/paths/$p1/remove_path"
check "its directory is gone, path 0 remains" eval '! [ -e "$cls/$sess/paths/$p1" ] && state_is "$p0" connected'
check "add_path of a path the session has: EEXIST" \
	eval '[ "$(try_write $cls/$sess add_path "ip:$SERVER_IP0")" = "add_path ip:$SERVER_IP0: File exists" ]'
check "add_path brings path 1 back" eval "echo ip:$SERVER_IP1 >$cls/$sess/add_path"
check "path 1 is connected and carries IO" eval 'state_is "$p1" connected &&
	fio_verify /dev/rnbd0 --rw=randrw --bs=8k --iodepth=16 --size=4M --offset=512M &&
	[ "$(writes_of "$p1")" -gt 0 ]'

for pol in min-inflight min-latency; do
	check "mpath_policy $pol: IO verifies" eval "echo $pol >$cls/$sess/mpath_policy &&
		grep -q '^$pol ' $cls/$sess/mpath_policy &&
		fio_verify /dev/rnbd0 --rw=randrw --bsrange=4k-64k --iodepth=16 --size=4M --offset=768M"
done
check "concurrent IO from both CPUs, 512 B to 124 KiB, verified" \
	fio_verify /dev/rnbd0 --rw=randrw --bsrange=512-124k --blockalign=512 --iodepth=16 --size=4M \
	--offset=800M --offset_increment=8M --numjobs=2 --cpus_allowed=0-1 --cpus_allowed_policy=split

check "removing every path, the last one too, goes as in C" \
	eval 'remove_all >"$ours/remove_all" 2>&1; diff -u "$ref/remove_all" "$ours/remove_all"'
sed 's/^/#   /' "$ours/remove_all"
check "unmap_device" unmap
check "the session leaves sysfs" wait_for 30 sess_gone
check "our modules unload" eval 'rmmod rnbd_client && rmmod rtrs_client && rmmod rtrs_core'

# A C server that does not invalidate: no RKEY_RSP, plain RDMA-write answers.
on_server 'srv_stack_load c always_invalidate=N' || bail "cannot reload the C server"
clt_stack_load rtrs || bail "cannot reload our client"
check "C server with always_invalidate=N: map_device" eval 'map && wait_for 60 test -b /dev/rnbd0 && wait_for 30 both_connected'
check "C server with always_invalidate=N: 512 B to 124 KiB, QD32, verified" \
	fio_verify /dev/rnbd0 --rw=randrw --bsrange=512-124k --blockalign=512 --iodepth=32 --size=4M
check "C server with always_invalidate=N: unmap, unload" eval 'unmap && wait_for 30 sess_gone &&
	rmmod rnbd_client && rmmod rtrs_client && rmmod rtrs_core'
ktap_finish
