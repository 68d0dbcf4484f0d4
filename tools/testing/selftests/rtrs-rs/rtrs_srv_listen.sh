#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# The server listens while an RDMA device is there, as C's rtrs-server (an
# ib_client: the first device added brings the listeners). With the port
# taken by another RDMA listener, the server's modules still load and say
# why they do not listen ("Binding RDMA address failed", "Failed to
# initialize RDMA connection"); once the port is free, a device added
# again brings the listeners and a client maps. For the C server (the
# reference), our rtrs-server under C's rnbd-server, and ours throughout;
# the client is C's.
. "$(dirname "$0")/lib.sh"

port=4421
ktap_plan 15

cleanup() {
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	on_server 'killall ib_write_bw 2>/dev/null; true'
	rnbd_cleanup
}
trap cleanup EXIT

srv_load() { # <stack>: load the server side with port_nr=$port
	local load
	case $1 in
	c) load="modprobe rtrs-server && modprobe rnbd-server port_nr=$port" ;;
	rtrs) load="insmod \$MODDIR/rtrs-core.ko && insmod \$MODDIR/rtrs-server.ko &&
		insmod \$(c_module rnbd-server) port_nr=$port" ;;
	rnbd) load="insmod \$MODDIR/rtrs-core.ko && insmod \$MODDIR/rtrs-server.ko &&
		insmod \$MODDIR/rnbd-server.ko port_nr=$port" ;;
	esac
	echo "$load && stack_is server $1"
}

rxe_up || bail "rxe did not come up"
clt_stack_load c || bail "cannot load the C rnbd-client"
for stack in c rtrs rnbd; do
	on_server "unload_rnbd_rtrs -w 30 && { mod_loaded null_blk || modprobe null_blk nr_devices=1 gb=1 memory_backed=1; }" ||
		bail "$stack: server: cannot unload the last stack or load null_blk"
	# perftest's server listens (rdma_cm) on the port, on any address.
	on_server "(ib_write_bw -R -p $port >/dev/null 2>&1 &)"
	on_server "wait_for 10 eval 'rdma resource show cm_id | grep -q \":$port \"'" ||
		diag "$stack: perftest does not seem to listen"
	on_server "kmsg_mark $stack-busy"
	check "$stack: with the port taken, the server's modules load" on_server "$(srv_load $stack)"
	check "$stack: and say why they do not listen" on_server "kmsg_since $stack-busy |
		grep -q 'Binding RDMA address failed' && kmsg_since $stack-busy |
		grep -q 'Failed to initialize RDMA connection'"
	check "$stack: the port freed, a device added again brings the listeners" on_server "
		killall ib_write_bw; wait_for 10 eval '! rdma resource show cm_id | grep -q \":$port \"' &&
		rdma link delete rxe1 && rxe_up_local &&
		wait_for 10 eval 'rdma resource show cm_id | grep -q \":$port \"'"
	# dest_port first: C's client gives each path the port read so far.
	check "$stack: a client maps and reads" eval "
		echo 'dest_port=$port sessname=listen-$stack path=ip:$SERVER_IP0 device_path=/dev/nullb0' \
			>/sys/class/rnbd-client/ctl/map_device && wait_for 30 test -b /dev/rnbd0 &&
		dd if=/dev/rnbd0 of=/dev/null bs=4k count=4 iflag=direct 2>/dev/null &&
		echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 test ! -e /dev/rnbd0"
	check "$stack: the server's modules unload" on_server "
		wait_for 30 eval '! ls /sys/class/rtrs-server/* >/dev/null 2>&1' && unload_rnbd_rtrs &&
		! mod_loaded rtrs_server"
done
ktap_finish
