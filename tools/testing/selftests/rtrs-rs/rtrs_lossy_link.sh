#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# Verified IO over two paths while the client loses 2% of the packets it
# sends on the second link (netem), for each stack of STACKS: make check
# runs ours, our RTRS and RNBD ("rnbd"); soak/ the C stack (the reference)
# and our RTRS under the C RNBD too ("c rtrs rnbd"). The server runs with
# always_invalidate=N. Lost packets and ACKs make the client's rxe
# retransmit, and rxe in 6.12 (which the test kernel's rxe is made to
# behave as for this test: rdma_rxe.rerun_local_ops=Y on both guests, see
# scripts/kernel/patches/) then executes again the REG_MR work requests
# posted between the lost packet and the end of the send queue: the MR is
# still valid, the REG_MR fails, the QP goes to the error state, and the
# client is told that REG_MR was *flushed*. The C client takes a flushed
# REG_MR as the end of the path and reconnects it
# (rtrs_clt_fast_reg_done()). With the loss on the client's side only and
# no registrations on the server, nothing else notices the dead QP: a
# client that ignored the flush (ours did) waits forever for the IO on it.
# Every stack must finish the IO, verified, show that the loss broke path 1
# as described (a flushed REG_MR in its log, or a reconnect that
# stats/reconnects counts: otherwise the test saw none of what it is for),
# and have path 1 connected again once the link is clean.
. "$(dirname "$0")/lib.sh"

sess=lossy
ccls=/sys/class/rtrs-client
p0=ip:$CLIENT_IP0@ip:$SERVER_IP0
p1=ip:$CLIENT_IP1@ip:$SERVER_IP1
read -ra stacks <<<"${STACKS:-rnbd}"
ktap_plan $((${#stacks[@]} * 6))

rerun=/sys/module/rdma_rxe/parameters/rerun_local_ops
cleanup() {
	link_loss eth1 0
	rnbd_cleanup
	echo N >$rerun
	on_server "echo N >$rerun"
}
trap cleanup EXIT

# link_loss <netdev> <percent>: this guest drops that share of the packets
# it sends on <netdev>; 0 ends it.
link_loss() {
	if [ "$2" = 0 ]; then
		tc qdisc del dev "$1" root 2>/dev/null
		true
	else
		tc qdisc replace dev "$1" root netem loss "$2%"
	fi
}
loss() { link_loss eth1 "$1"; }
state_is() { [ "$(cat "$ccls/$sess/paths/$1/state" 2>/dev/null)" = "$2" ]; }
both_connected() { state_is "$p0" connected && state_is "$p1" connected; }
io_state() {
	local f
	for f in /sys/block/rnbd0/inflight "$ccls/$sess"/paths/*/stats/rdma "$ccls/$sess"/paths/*/state; do
		[ -e "$f" ] && sed "s|^|# client $f: |" "$f"
	done
	kmsg_since "$stack" | grep -E "rtrs|rnbd" | tail -20 | sed 's/^/# client dmesg: /'
}
check_on_fail=io_state
# A hung IO is what this test looks for: fail in time, and show where.
export FIO_TIMEOUT=300

# What the loss did to path 1 since the stack's mark: the flushed REG_MRs
# the client logged, and its successful reconnects.
flushed() { kmsg_since "$stack" | grep -c "Failed IB_WR_REG_MR"; }
# reconnects [path]: the successful reconnects of path 1, or of the one named.
reconnects() {
	set -- $(cat "$ccls/$sess/paths/${1:-$p1}/stats/reconnects" 2>/dev/null)
	echo "${1:-0}"
}
broke() { [ "$(flushed)" -gt 0 ] || [ "$(reconnects)" -gt 0 ]; }
# lossy_io: verified runs of random IO under the loss until path 1 has
# broken, at most 4 (a run is mostly enough). A run whose IO fails fails
# the case, unless path 0 broke in it as well: rxe retransmits on the clean
# link too when an ACK comes late (the guests are emulated), which the
# re-run REG_MR turns into a broken QP there as well, and with both paths
# down at once an IO fails, as it does with C. A path broke when it has
# reconnected since the run began; a run whose IO failed with both broken
# is repeated. A run that read back other data than it wrote fails the
# case at once, whatever broke: a mismatch is never excused. At least one
# run must verify.
lossy_io() {
	local run p0_before p1_before rc
	for run in 1 2 3 4; do
		p0_before=$(reconnects "$p0") p1_before=$(reconnects "$p1")
		fio_verify /dev/rnbd0 --rw=randrw --bsrange=4k-60k --iodepth=32 --size=16M \
			--offset=$((RANDOM % 512))M
		rc=$?
		if [ $rc = 2 ]; then
			diag "$stack: run $run: data mismatch"
			return 1
		elif [ $rc != 0 ]; then
			wait_for 150 both_connected && [ "$(reconnects "$p0")" -gt "$p0_before" ] &&
				[ "$(reconnects "$p1")" -gt "$p1_before" ] || return 1
			diag "$stack: run $run: both paths broke, and the IO failed with both" \
				"down; running it again"
			continue
		fi
		broke && return 0
		diag "$stack: run $run: path 1 has not broken yet"
	done
	diag "$stack: no run verified with path 1 broken"
	false
}

rxe_up || bail "rxe did not come up"
echo Y >$rerun && on_server "echo Y >$rerun" || bail "cannot make rxe run done local operations again"
for stack in "${stacks[@]}"; do
	kmsg_mark "$stack"
	check "$stack: two paths connect" eval 'on_server srv_stack_load $stack always_invalidate=N && clt_stack_load $stack &&
		echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0" \
			>/sys/class/rnbd-client/ctl/map_device &&
		wait_for 60 test -b /dev/rnbd0 && wait_for 30 both_connected &&
		echo round-robin >$ccls/$sess/mpath_policy'
	check "$stack: the client loses 2% of what it sends on link 1" loss 2
	check "$stack: 4k-60k random read/write, QD32, completes verified" lossy_io
	loss 0
	check "$stack: with the link clean, both paths are connected" wait_for 150 both_connected
	diag "$stack: path 1 reconnects: $(cat "$ccls/$sess/paths/$p1/stats/reconnects" 2>/dev/null)," \
		"flushed REG_MRs: $(flushed)"
	check "$stack: the loss broke path 1 (a flushed REG_MR or a reconnect)" broke
	check "$stack: unmap, unload" eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device &&
		wait_for 30 eval "! test -e $ccls/$sess" && unload_rnbd_rtrs && ! mod_loaded rtrs_core &&
		on_server "wait_for 30 eval \"unload_rnbd_rtrs; ! mod_loaded rtrs_core\""'
done
ktap_finish
