#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# Our rtrs-server under the unmodified C rnbd-server, serving the C
# rnbd-client on the C rtrs-client over two paths: the session connects,
# IO of every size up to the largest (124 KiB with the default 128 KiB
# chunks) is written and verified, random and sequential, at queue depth 1
# and 64, and unmap and unload leave both kernels clean. With
# always_invalidate (the default), then again with always_invalidate=N.
# Each run moves a few MiB (64 IOs of the largest size, 4 times the queue
# depth): what is checked is that every size verifies, not throughput.
. "$(dirname "$0")/lib.sh"

sess=rs-srv
ktap_plan 18
cleanup() {
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	unload_rnbd_rtrs
	on_server 'unload_rnbd_rtrs; rmmod null_blk 2>/dev/null; true'
}
trap cleanup EXIT

rxe_up || bail "rxe did not come up"
check "server: C rnbd-server loads on our rtrs-server" on_server srv_stack_load rtrs
on_server stack_files | sed 's/^/# server| /'
check "server: rtrs_server and rtrs_core are ours, rnbd_server is C" \
	on_server 'mod_is_ours rtrs_server && mod_is_ours rtrs_core && ! mod_is_ours rnbd_server'
clt_stack_load c || bail "cannot load the C client"
stack_files | sed 's/^/# client| /'

on_server 'kmsg_mark srv-c-peers'
check "map_device over our server" \
	eval "echo 'sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0' >/sys/class/rnbd-client/ctl/map_device"
check "/dev/rnbd0 appears" wait_for 60 test -b /dev/rnbd0
check "both paths are connected" \
	wait_for 30 eval '[ "$(cat /sys/class/rtrs-client/$sess/paths/*/state | sort -u)" = connected ] &&
		[ "$(ls /sys/class/rtrs-client/$sess/paths | wc -l)" = 2 ]'
check "C's client gets RTRS 2.0 from our server" \
	on_server '[ "$(kmsg_since srv-c-peers | grep -c "rtrs_server: .*: RTRS 2.0$")" -ge 2 ] &&
		! kmsg_since srv-c-peers | grep -q "rtrs_server: .*RTRS 2.1"'
check "server: both paths' protocol files show 2.0" \
	on_server "[ \"\$(cat /sys/class/rtrs-server/$sess/paths/*/protocol | sort | uniq -c | sed 's/^ *//')\" = '2 2.0' ]"
check "capacity is the server's 1 GiB" \
	eval '[ "$(cat /sys/block/rnbd0/size)" = "$(on_server cat /sys/block/nullb0/size)" ]'

check "4k random writes, QD64, verified" fio_verify /dev/rnbd0 --rw=randwrite --bs=4k --iodepth=64 --size=4M
check "124k (largest IO) sequential writes, QD16, verified" \
	fio_verify /dev/rnbd0 --rw=write --bs=124k --iodepth=16 --size=7936k --offset=64M
check "mixed 4k-124k random read/write, QD1, verified" \
	fio_verify /dev/rnbd0 --rw=randrw --bsrange=4k-124k --iodepth=1 --size=2M --offset=256M

check "unmap_device" eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device'
check "the client session goes away" wait_for 30 eval '! ls /sys/class/rtrs-client/$sess >/dev/null 2>&1'
unload_rnbd_rtrs
check "server: our rtrs-server unloads after the session closed" \
	on_server 'wait_for 30 eval "rmmod rnbd_server && rmmod rtrs_server && rmmod rtrs_core"'

check "server: our rtrs-server loads with always_invalidate=N" on_server srv_stack_load rtrs always_invalidate=N
clt_stack_load c || bail "cannot reload the C client"
check "always_invalidate=N: map_device" \
	eval "echo 'sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0' >/sys/class/rnbd-client/ctl/map_device &&
		wait_for 60 test -b /dev/rnbd0"
check "always_invalidate=N: 512 B to 124 KiB, QD32, verified" \
	fio_verify /dev/rnbd0 --rw=randrw --bsrange=512-124k --blockalign=512 --iodepth=32 --size=4M
check "always_invalidate=N: unmap, unload on both sides" eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device &&
	wait_for 30 eval "! ls /sys/class/rtrs-client/$sess >/dev/null 2>&1" && unload_rnbd_rtrs &&
	on_server "wait_for 30 eval \"rmmod rnbd_server && rmmod rtrs_server && rmmod rtrs_core\""'
ktap_finish
