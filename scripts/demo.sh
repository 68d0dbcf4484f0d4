#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make run`: runs in the client guest of the VM pair. The server exports a
# memory-backed null_blk over RNBD; the client maps it as /dev/rnbd0, runs fio
# on it and shows what sysfs says about the session, the path and the device.
#
# Every module on both sides is ours, in Rust: rtrs-core, rtrs-client and
# rnbd-client in the client guest, rtrs-core, rtrs-server and rnbd-server in
# the server guest (stack_files prints which module is which).
. /opt/rtrs-rs/selftests/lib.sh

sess=demo
say() { printf '\n== %s\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }
show() { # <file>...: name = value
	local f
	for f in "$@"; do printf '  %-58s %s\n' "${f#/sys/}" "$(cat "$f" 2>/dev/null | head -1)"; done
}

say "soft RoCE on both guests"
rxe_up || die "rxe did not come up"
rdma link show | sed 's/^/  client: /'
on_server 'rdma link show' | sed 's/^/  server: /'

say "server: null_blk (1 GiB, memory backed) exported by our rnbd-server"
on_server srv_stack_load rnbd || die "cannot load the server modules"
on_server stack_files | sed 's/^/  server: /'

say "client: map server:/dev/nullb0 over RTRS, one path per link"
clt_stack_load rnbd || die "cannot load the client modules"
stack_files | sed 's/^/  client: /'
opts="sessname=$sess path=ip:$CLIENT_IP0@ip:$SERVER_IP0 path=ip:$CLIENT_IP1@ip:$SERVER_IP1 device_path=/dev/nullb0"
echo "  echo '$opts' > /sys/class/rnbd-client/ctl/map_device"
echo "$opts" >/sys/class/rnbd-client/ctl/map_device || die "map_device failed"
wait_for 60 test -b /dev/rnbd0 || die "/dev/rnbd0 did not appear"
paths=(/sys/class/rtrs-client/$sess/paths/*)
for path in "${paths[@]}"; do
	wait_for 30 grep -qx connected "$path/state" || die "path $path not connected"
done
show /sys/block/rnbd0/rnbd/{state,session,mapping_path,access_mode} /sys/block/rnbd0/size
for path in "${paths[@]}"; do
	show "$path"/{state,hca_name,hca_port,src_addr,dst_addr}
done
show /sys/class/rtrs-client/$sess/{mpath_policy,max_reconnect_attempts}
on_server "for p in /sys/class/rtrs-server/$sess/paths/*; do echo \"  server: \${p#/sys/}\"; done"

say "fio on /dev/rnbd0: 64 MiB written and verified (crc32c), then 15 s of 4k random reads at QD64"
fio --name=verify --filename=/dev/rnbd0 --ioengine=libaio --direct=1 --rw=write \
	--bs=128k --iodepth=16 --size=64M --verify=crc32c --verify_fatal=1 |
	grep -E 'IOPS=|err=|lat \(usec\): min|bw='
fio --name=randread --filename=/dev/rnbd0 --ioengine=libaio --direct=1 --rw=randread \
	--bs=4k --iodepth=64 --time_based --runtime=15 |
	grep -E 'IOPS=|err=|clat percentiles|99.00th'
echo "  stats/rdma per path: <reads> <bytes read> <writes> <bytes written> <in flight> <failed over>"
for path in "${paths[@]}"; do
	show "$path"/stats/{rdma,reconnects}
done

say "unmap"
echo normal >/sys/block/rnbd0/rnbd/unmap_device || die "unmap failed"
wait_for 30 test ! -e /dev/rnbd0 && echo "  /dev/rnbd0 is gone"
rmmod rnbd_client rtrs_client rtrs_core
on_server 'wait_for 30 eval "rmmod rnbd_server && rmmod rtrs_server && rmmod rtrs_core" && rmmod null_blk'
say "done"
