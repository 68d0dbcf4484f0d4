#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# Poll queues: the C rnbd-client maps a device with nr_poll_queues=2 from
# the C rnbd-server, on each client stack of STACKS: make check runs ours,
# "rtrs"; soak/ the C rtrs-client first, the reference, "c rtrs". Polled IO (io_uring with --hipri) goes through the block layer's
# POLL hardware queues, whose RDMA completion queues nothing but
# rtrs_clt_rdma_cq_direct() reaps, and verifies; requests are seen in
# flight on the POLL queues; unmap and unload are clean.
#
# The session has two paths, as users run it. fio's polling keeps a vCPU of
# the client busy, which slows the TCG guests enough that rxe retransmits
# after late ACKs; rxe as Linux 6.12 has it then broke QPs on a REG_MR it
# executed again ("rxe, retransmits and REG_MR" in Documentation/rtrs.md;
# the test kernel carries a fix). A path that breaks fails its IO over to
# the other one, and the diagnostic lines show each path's reconnects.
#
# Both clients, C's and ours, fail an IO with ECONNABORTED when no path is
# connected the moment it is submitted or failed over (rtrs_clt_request,
# rtrs_clt_failover_req), and C's rnbd-client makes it EIO. So when rxe
# breaks both paths, polled IO fails on either RTRS: such a run is excused
# only when every path reconnected during it (their reconnect counts), and
# the polled IO runs again once they are back, up to three runs, one of
# which must verify; an IO error while a path stayed up fails, and so does
# a mismatch in any run.
. "$(dirname "$0")/lib.sh"

sess=rs-poll
read -ra stacks <<<"${STACKS:-rtrs}"
ktap_plan $((${#stacks[@]} * 7))

cleanup() {
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	unload_rnbd_rtrs
	on_server 'unload_rnbd_rtrs; rmmod null_blk 2>/dev/null; true'
}
trap cleanup EXIT
check_on_fail=rxe_counters

# Whether requests are in flight on a hardware queue of type POLL of rnbd0
# (blk-mq debugfs: the busy tags of the queue).
poll_busy() {
	local h
	for h in /sys/kernel/debug/block/rnbd0/hctx*; do
		[ "$(cat "$h/type")" = poll ] || continue
		[ "$(sed -n 's/^busy=//p' "$h/tags" | head -1)" -gt 0 ] && return 0
	done
	return 1
}

# Each path's count of reconnects, a line each.
reconnects() { cat /sys/class/rtrs-client/$sess/paths/*/stats/reconnects | cut -d' ' -f1; }

# every_path_broke <counts before>: every path reconnected since.
every_path_broke() {
	local now
	now=$(reconnects)
	[ "$(wc -l <<<"$now")" = "$(wc -l <<<"$1")" ] &&
		paste -d' ' <(echo "$1") <(echo "$now") | awk '$1 == $2 { exit 1 }'
}

# Paths a break took down come back after the reconnect delay (30 s and a
# backoff); both clients fail IO while none is connected.
paths_back() {
	local t0=$SECONDS
	wait_for 120 paths_connected $sess 2 || { diag "a path is still not connected after 120 s"; return 1; }
	[ $((SECONDS - t0)) -lt 2 ] || diag "the paths were connected again after $((SECONDS - t0)) s"
}

polled=(--ioengine=io_uring --hipri=1 --rw=randrw --bsrange=4k-64k --iodepth=16 --size=8M)

rxe_up || bail "rxe did not come up"
on_server srv_stack_load c || bail "cannot load the C server stack"

for stack in "${stacks[@]}"; do
	clt_stack_load $stack || bail "cannot load the client stack $stack"
	stack_files | sed 's/^/# /'
	opts="sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0 nr_poll_queues=2"
	check "$stack: map_device with nr_poll_queues=2" \
		eval "echo '$opts' >/sys/class/rnbd-client/ctl/map_device && wait_for 60 test -b /dev/rnbd0"
	check "$stack: nr_poll_queues reads 2, io_poll is on" \
		eval '[ "$(cat /sys/block/rnbd0/rnbd/nr_poll_queues)" = 2 ] && [ "$(cat /sys/block/rnbd0/queue/io_poll)" = 1 ]'
	check "$stack: two POLL hardware queues" \
		eval '[ "$(grep -lx poll /sys/kernel/debug/block/rnbd0/hctx*/type | wc -l)" = 2 ]'
	kmsg_mark "poll-$stack"
	before=$(reconnects)
	fio_verify /dev/rnbd0 "${polled[@]}" >/tmp/fio-poll 2>&1 &
	fio_pid=$!
	check "$stack: requests in flight on the POLL queues" wait_for 60 poll_busy
	what="$stack: polled IO (io_uring, hipri), 4k to 64k, QD16, verified"
	wait $fio_pid
	rc=$? run=1
	# A run whose IO failed with every path broken during it runs again
	# once they are back, up to three runs in all; the case passes only
	# on a run that verified. A mismatch fails at once.
	while [ $rc = 1 ] && [ $run -lt 3 ] && grep -q 'Input/output error' /tmp/fio-poll &&
		paths_back && every_path_broke "$before" &&
		broke=$(kmsg_since "poll-$stack" | grep -m1 -E 'rtrs_client L[0-9]+: .*(Failed|failed|CM error)'); do
		rxe_counters
		cat /tmp/fio-poll && mv /tmp/fio-poll /tmp/fio-poll.$run
		diag "run $run: rxe broke every path under polled IO, and the IO failed with none up:" \
			"${broke#*] }; running it again"
		before=$(reconnects) run=$((run + 1))
		fio_verify /dev/rnbd0 "${polled[@]}" >/tmp/fio-poll 2>&1
		rc=$?
	done
	if [ $rc = 0 ] && [ $run = 1 ]; then
		ok "$what"
	elif [ $rc = 0 ]; then
		ok "$what (run $run)"
	else
		rxe_counters
		fail "$what (run $run, status $rc)"
	fi
	cat /tmp/fio-poll 2>/dev/null
	for p in /sys/class/rtrs-client/$sess/paths/*; do
		diag "path ${p##*/}: $(cat "$p/state"), reconnects $(cat "$p/stats/reconnects")"
	done
	paths_back
	check "$stack: interrupt-driven IO beside it still verifies" \
		fio_verify /dev/rnbd0 --rw=randrw --bs=16k --iodepth=8 --size=4M --offset=64M
	check "$stack: unmap, unload" eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device &&
		wait_for 30 eval "! test -e /sys/class/rtrs-client/$sess" && unload_rnbd_rtrs'
done
ktap_finish
