#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=300
# The reference flow with the C modules of the test kernel: the C rnbd-client
# maps a memory-backed null_blk exported by the C rnbd-server over rxe, fio
# writes 64 MiB with crc32c verification and reads it back, then unmap; then
# again with the server's always_invalidate=N, the control for the pairings
# of make check's tests, which swap our modules into exactly this flow (and
# record C's answers first where they compare with them). C's modules
# alone: a control, so make soak runs it, not make check.
. "$(dirname "$0")/../lib.sh"

sess=c-ref
ktap_plan 10

cleanup() {
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	unload_rnbd_rtrs
	on_server 'unload_rnbd_rtrs; rmmod null_blk 2>/dev/null; true'
}
trap cleanup EXIT

rxe_up || bail "rxe did not come up"
unload_rnbd_rtrs
on_server srv_stack_load c || bail "server: cannot load null_blk and rnbd-server"
clt_stack_load c || bail "cannot load rnbd-client"

check "map_device sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0" \
	eval "echo 'sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0' >/sys/class/rnbd-client/ctl/map_device"
check "/dev/rnbd0 appears" wait_for 60 test -b /dev/rnbd0
state() { cat /sys/class/rtrs-client/$sess/paths/*/state 2>/dev/null; }
check "rtrs path state is connected" wait_for 30 eval '[ "$(state)" = connected ]'
diag "paths: $(ls /sys/class/rtrs-client/$sess/paths/)"
check "size of rnbd0 equals nullb0 (1 GiB)" \
	eval '[ "$(cat /sys/block/rnbd0/size)" = "$(on_server cat /sys/block/nullb0/size)" ]'

check "fio writes 64 MiB and verifies it with crc32c" \
	fio_verify /dev/rnbd0 --rw=randwrite --bs=64k --iodepth=16 --size=64M

check "unmap_device normal" eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device'
check "/dev/rnbd0 is gone" wait_for 30 test ! -e /dev/rnbd0

on_server 'srv_stack_load c always_invalidate=N' || bail "server: cannot reload with always_invalidate=N"
clt_stack_load c || bail "cannot reload rnbd-client"
check "always_invalidate=N: map_device" \
	eval "echo 'sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0' >/sys/class/rnbd-client/ctl/map_device &&
		wait_for 60 test -b /dev/rnbd0"
check "always_invalidate=N: 512 B to 124 KiB, QD32, verified" \
	fio_verify /dev/rnbd0 --rw=randrw --bsrange=512-124k --blockalign=512 --iodepth=32 --size=16M
check "always_invalidate=N: unmap_device" \
	eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 test ! -e /dev/rnbd0'
ktap_finish
