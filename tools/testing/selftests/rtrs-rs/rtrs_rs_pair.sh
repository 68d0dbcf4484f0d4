#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# Our rtrs-client and our rtrs-server, under the C rnbd modules, with two
# paths. The C server maps the same device first as a reference: its
# sysfs tree, what its files show and how they answer writes must be ours.
# Then: the server's module parameters are C's; verified IO over both paths
# (the server counts it on each); a path the server disconnects during IO
# fails over and the client reconnects it; unmap and unload on both
# sides. Both paths run RTRS 2.1 with fences and read responses, as both
# sides' protocol files show, so the verified reads are answered with one
# message each. Then the parameters take effect: with
# always_invalidate=N, sess_queue_depth=128 and max_chunk_size=65536 the
# disk has 127 tags (one chunk stays spare for failover) and 60 KiB IOs,
# and IO of every size up to that verifies, still over 2.1. Last,
# proto_ext=N on the server, then on the client, pins RTRS 2.0, under
# verified IO.
#
# RECONNECT: how the path the server disconnected comes back: through its
# reconnect file once the server has closed its side (sysfs, make check:
# the same reconnect work, at once), or by itself after the reconnect
# delay, 30 s and the backoff (delay, soak/rtrs_rs_pair.sh).
. "$(dirname "$0")/lib.sh"

sess=rs-pair
ccls=/sys/class/rtrs-client
p0=ip:$CLIENT_IP0@ip:$SERVER_IP0
p1=ip:$CLIENT_IP1@ip:$SERVER_IP1
ref=/tmp/rtrs-pair-ref
ours=/tmp/rtrs-pair-ours
ktap_plan 37

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
state_is() { [ "$(cat "$ccls/$sess/paths/$1/state" 2>/dev/null)" = "$2" ]; }
both_connected() { state_is "$p0" connected && state_is "$p1" connected; }
unmap() { echo normal >/sys/block/rnbd0/rnbd/unmap_device; }
clt_sess_gone() { ! [ -e "$ccls/$sess" ]; }

# On the server: the session's tree, what its files show, their answers to
# writes (run there with `on_server "$(declare -f srv_record); srv_record"`).
# A path's protocol file (0444) is ours, and checked on its own.
srv_record() {
	local d=/sys/class/rtrs-server/rs-pair p f
	sysfs_tree "$d" | grep -v '^444 paths/[^/]*/protocol$'
	for p in "$d"/paths/*; do
		for f in hca_name hca_port src_addr dst_addr disconnect; do
			printf '== %s/%s\n' "${p##*/}" "$f"
			cat "$p/$f"
		done
		printf '== stats/rdma fields: %s\n' "$(wc -w <"$p/stats/rdma")"
		try_write "$p" disconnect 0
		try_write "$p" stats/rdma 0
		try_write "$p" stats/rdma 1
		cat "$p/stats/rdma"
	done
}
srv() { on_server "$(declare -f srv_record); $*"; }
# protocols_are <text>: both paths' protocol files show <text>, on both
# sides.
protocols_are() {
	local n="uniq -c | sed 's/^ *//'"
	[ "$(cat "$ccls/$sess"/paths/*/protocol | sort | eval "$n")" = "2 $1" ] &&
		[ "$(on_server "cat /sys/class/rtrs-server/$sess/paths/*/protocol" | sort | eval "$n")" = "2 $1" ]
}

rxe_up || bail "rxe did not come up"

# The reference: the C server (and client).
on_server srv_stack_load c && clt_stack_load c || bail "cannot load the C stacks"
map && wait_for 60 test -b /dev/rnbd0 && wait_for 30 both_connected ||
	bail "the C stacks cannot map the device over two paths"
mkdir -p "$ref" "$ours"
srv srv_record >"$ref/srv" || bail "cannot record the C server's sysfs"
unmap && wait_for 30 clt_sess_gone || bail "the C client cannot unmap"
unload_rnbd_rtrs

check "server: our rtrs-server loads" on_server srv_stack_load rtrs
check "client: our rtrs-client loads" clt_stack_load rtrs
stack_files | sed 's/^/# client| /'
on_server stack_files | sed 's/^/# server| /'
check "server: the module parameters are C's (modinfo -p), and proto_ext, ours" on_server \
	'modinfo -p $MODDIR/rtrs-server.ko | grep -q "^proto_ext:" &&
	diff <(modinfo -p $MODDIR/rtrs-server.ko | grep -v "^proto_ext:" | sort) \
		<(modinfo -p "$(c_module rtrs-server)" | sort)'
check "server: the parameters read back with C's defaults" eval \
	'[ "$(on_server "cd /sys/module/rtrs_server/parameters && cat always_invalidate max_chunk_size sess_queue_depth" | tr "\n" " ")" = "Y 131072 512 " ]'
kmsg_mark rs-pair-21
on_server 'kmsg_mark rs-pair-21'
check "map_device with two paths" map
check "/dev/rnbd0 appears" wait_for 60 test -b /dev/rnbd0
check "both paths are connected" wait_for 30 both_connected
check "ours to ours: both paths run RTRS 2.1 with fences and read responses, on both sides" eval '
	[ "$(kmsg_since rs-pair-21 | grep -c "rtrs_client: .*RTRS 2.1 with fences and read responses")" -ge 2 ] &&
	[ "$(on_server "kmsg_since rs-pair-21 | grep -c \"rtrs_server: .*RTRS 2.1 with fences and read responses\"")" -ge 2 ]'
check "the protocol files show it on both sides: 2.1 fence read_rsp" protocols_are "2.1 fence read_rsp"
check "server: the session's sysfs is C's (tree, contents, writes)" \
	eval 'srv srv_record >"$ours/srv" && diff -u "$ref/srv" "$ours/srv"'

check "mpath_policy round-robin" eval "echo round-robin >$ccls/$sess/mpath_policy"
check "4k-124k random writes, QD32, verified" \
	fio_verify /dev/rnbd0 --rw=randwrite --bsrange=4k-124k --iodepth=32 --size=16M
w0=$(srv_writes "$sess" "$p0") w1=$(srv_writes "$sess" "$p1")
diag "writes the server counted per path: $w0 $w1"
check "server: both paths carried writes" eval '[ "${w0:-0}" -gt 100 ] && [ "${w1:-0}" -gt 100 ]'
check "124k sequential writes, QD8, verified" \
	fio_verify /dev/rnbd0 --rw=write --bs=124k --iodepth=8 --size=7936k --offset=256M
check "mixed 512-byte aligned random read/write, QD1, verified" \
	fio_verify /dev/rnbd0 --rw=randrw --bsrange=512-64k --blockalign=512 --iodepth=1 --size=4M --offset=512M

# The server drops path 1 in the middle of verified IO.
fio_verify /dev/rnbd0 --rw=randwrite --bs=4k --iodepth=32 --size=8M --offset=640M >/tmp/fio-failover 2>&1 &
fio_pid=$!
wait_for 30 eval '[ "$(srv_writes "$sess" "$p1")" -gt "$w1" ]'
fo=$(failed_over $sess)
during_io $fio_pid "server: disconnect path 1 during IO" \
	on_server "echo 1 >/sys/class/rtrs-server/$sess/paths/$p1/disconnect"
check "client: path 1 goes down" wait_for 30 state_is "$p1" disconnected
# While the IO runs on path 0, and long before the client's own reconnect
# (30 s) could bring path 1 back, which a slow kernel's IO may outlast.
check "server: path 1 leaves sysfs once closed" \
	on_server "wait_for 10 eval '! test -e /sys/class/rtrs-server/$sess/paths/$p1'"
check "the IO completes, verified, on path 0" wait $fio_pid
sed 's/^/# /' /tmp/fio-failover
diag "requests failed over: $(($(failed_over $sess) - fo))"
check "path 1's requests in flight failed over (stats/rdma)" eval '[ "$(failed_over $sess)" -gt "$fo" ]'
if [ "${RECONNECT:-sysfs}" = delay ]; then
	check "client: path 1 reconnects by itself (after 30 s + 1 s backoff)" wait_for 90 state_is "$p1" connected
else
	check "client: path 1 reconnects through sysfs" wait_for 90 reconnect_path "$ccls/$sess/paths/$p1"
fi
check "client: stats/reconnects counts it" \
	eval '[ "$(cat $ccls/$sess/paths/$p1/stats/reconnects)" = "1 0" ]'
check "server: path 1 is back in sysfs" \
	on_server "test -d /sys/class/rtrs-server/$sess/paths/$p1"

check "unmap_device" unmap
check "client: the session leaves sysfs" wait_for 30 clt_sess_gone
check "server: the session leaves sysfs" \
	on_server "wait_for 30 eval '! test -e /sys/class/rtrs-server/$sess'"
check "client: our modules unload" eval 'rmmod rnbd_client && rmmod rtrs_client && rmmod rtrs_core'
check "server: our modules unload" \
	on_server 'wait_for 30 eval "rmmod rnbd_server && rmmod rtrs_server && rmmod rtrs_core"'

# The parameters take effect.
check "server: loads with always_invalidate=N sess_queue_depth=128 max_chunk_size=65536" \
	on_server srv_stack_load rtrs always_invalidate=N sess_queue_depth=128 max_chunk_size=65536
clt_stack_load rtrs || bail "cannot reload the client"
check "map_device" eval 'map && wait_for 60 test -b /dev/rnbd0 && wait_for 30 both_connected'
check "the disk has the server's 128 chunks less the spare as tags" \
	eval '[ "$(cat /sys/block/rnbd0/queue/nr_requests)" = 127 ]'
check "and 60 KiB IOs (64 KiB chunks less the header page)" \
	eval '[ "$(cat /sys/block/rnbd0/queue/max_hw_sectors_kb)" = 60 ]'
check "always_invalidate=N: the paths still run 2.1 with read responses" \
	protocols_are "2.1 fence read_rsp"
check "4k-60k random read/write, QD32, verified" \
	fio_verify /dev/rnbd0 --rw=randrw --bsrange=4k-60k --iodepth=32 --size=4M
check "unmap, unload on both sides" eval 'unmap && wait_for 30 clt_sess_gone &&
	rmmod rnbd_client && rmmod rtrs_client && rmmod rtrs_core &&
	on_server "wait_for 30 eval \"rmmod rnbd_server && rmmod rtrs_server && rmmod rtrs_core\""'

# proto_ext=N on either side pins RTRS 2.0: the other side's offer or
# answer is 2.0's, and IO verifies as between C peers.
for side in server client; do
	srv_p=(always_invalidate=N) clt_p=()
	if [ $side = server ]; then srv_p+=(proto_ext=N); else clt_p+=(proto_ext=N); fi
	on_server srv_stack_load rtrs "${srv_p[@]}" && clt_stack_load rtrs "${clt_p[@]}" ||
		bail "cannot load the stacks with proto_ext=N on the $side"
	check "proto_ext=N on the $side: both paths run RTRS 2.0, 4k-60k random read/write verifies" eval '
		map && wait_for 60 test -b /dev/rnbd0 && wait_for 30 both_connected &&
		protocols_are 2.0 &&
		fio_verify /dev/rnbd0 --rw=randrw --bsrange=4k-60k --iodepth=32 --size=4M &&
		unmap && wait_for 30 clt_sess_gone && unload_rnbd_rtrs &&
		on_server "wait_for 30 eval \"rmmod rnbd_server && rmmod rtrs_server && rmmod rtrs_core\""'
done
ktap_finish
