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

# fio's terse output (version 3): the read numbers start at field 6, the
# write numbers 41 fields later; IOPS at +2, KiB/s at +1, the completion
# latency percentiles (here 50 and 99) at +12 and +13, each as "p%=usec".
results=()
measure() { # <label> <read|write> <fio args>...: runs fio, keeps one table row
	local label=$1 dir=$2 out rc row
	shift 2
	out=$(fio --name=demo --filename=/dev/rnbd0 --ioengine=libaio --direct=1 \
		--output-format=terse --terse-version=3 --percentile_list=50:99 "$@")
	rc=$?
	row=$(echo "$out" | awk -F';' -v o=$([ "$dir" = write ] && echo 41 || echo 0) \
		-v label="$label" -v rc=$rc '$1 == 3 {
			split($(18 + o), p50, "="); split($(19 + o), p99, "=")
			printf "  %-40s %9d %9.1f %9d %9d %6s\n", label, $(8 + o),
				$(7 + o) / 1024, p50[2], p99[2], ($5 == 0 && rc == 0) ? "none" : "err=" $5
		}')
	[ -n "$row" ] || row=$(printf '  %-40s fio failed (exit %d)' "$label" $rc)
	echo "$row"
	results+=("$row")
	return $rc
}

say "fio on /dev/rnbd0 (the table at the end shows IOPS, MiB/s, latency p50/p99 in usec, errors)"
measure "128k write QD16, 64 MiB, crc32c verified" write --rw=write --bs=128k --iodepth=16 \
	--size=64M --verify=crc32c --verify_fatal=1 || die "the verified write failed"
measure "4k random read QD64, 15 s" read --rw=randread --bs=4k --iodepth=64 \
	--time_based --runtime=15
measure "4k random read QD1, 10 s" read --rw=randread --bs=4k --iodepth=1 \
	--time_based --runtime=10
echo "  stats/rdma per path: <reads> <bytes read> <writes> <bytes written> <in flight> <failed over>"
for path in "${paths[@]}"; do
	show "$path"/stats/{rdma,reconnects}
done

say "what was measured (guests of one vCPU under TCG, soft RoCE over QEMU links)"
printf '  %-40s %9s %9s %9s %9s %6s\n' "fio job" IOPS MiB/s p50 p99 errors
printf '%s\n' "${results[@]}"

say "unmap"
echo normal >/sys/block/rnbd0/rnbd/unmap_device || die "unmap failed"
wait_for 30 test ! -e /dev/rnbd0 && echo "  /dev/rnbd0 is gone"
rmmod rnbd_client rtrs_client rtrs_core
on_server 'wait_for 30 eval "rmmod rnbd_server && rmmod rtrs_server && rmmod rtrs_core" && rmmod null_blk'
say "done"
