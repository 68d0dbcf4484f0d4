#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# The RTRS kernel API, driven by our test modules (rtrs/tests/): the
# client's rtrs-test-clt opens a session to the server's rtrs-test-srv (a
# memory disk) and moves data through rtrs_clt_request with sizes from
# 512 B to max_io_size, starting at a page or mid-page (one scatterlist
# entry per page touched), each written, read back and compared; a read
# past the disk's end must return the server's EINVAL; then 8 streams run
# at once, pinned round-robin to every CPU (each CPU has its own IO
# connection). The server logs what it served and must count every request
# the client sent (more if some failed over and ran twice). Each pairing
# of PAIRINGS (<client>:<server>, each c or rs: C's RTRS or ours; make
# check: ours with ours and with C's, "rs:c c:rs rs:rs"; soak/: C's with
# C's too, the control), with always_invalidate=Y and N. The session has
# two paths, as users run it: a path that breaks fails its IO over to the
# other; with one path that IO would fail (ECONNABORTED), in C as in ours.
# SIZE_ROUNDS and STREAM_ROUNDS: how many times the sizes run and each
# stream run (make check: 1 and 1; soak/: 3 and 2).
. "$(dirname "$0")/lib.sh"

ctl=/sys/class/rtrs-test/ctl
read -ra pairings <<<"${PAIRINGS:-rs:c c:rs rs:rs}"
size_rounds=${SIZE_ROUNDS:-1} stream_rounds=${STREAM_ROUNDS:-1}
# Five cases per pairing and always_invalidate, then the kernel logs.
ktap_plan $((${#pairings[@]} * 2 * 5 + 1))

unload_all() {
	mod_loaded rtrs_test_clt && rmmod rtrs_test_clt
	mod_loaded rtrs_test_srv && rmmod rtrs_test_srv
	unload_rnbd_rtrs
}
cleanup() {
	wait
	unload_all
	on_server "$(declare -f unload_all); unload_all"
}
trap cleanup EXIT

# rtrs_load <client|server> <c|rs> [params]: the C or our RTRS of a side,
# and no other (modprobe would take a leftover of ours for C's).
rtrs_load() {
	local side=$1 impl=$2
	shift 2
	case $impl in
	c) modprobe "rtrs-$side" "$@" && modules_are rtrs_core=c "rtrs_$side=c" ;;
	rs) insmod "$MODDIR/rtrs-core.ko" && insmod "$MODDIR/rtrs-$side.ko" "$@" &&
		modules_are rtrs_core=ours "rtrs_$side=ours" ;;
	esac
}

# Streams 0..7 at once, each pinned to a CPU in turn, <rounds> rounds each.
streams() {
	local cpus s pids=() rc=0
	cpus=$(nproc)
	for s in 0 1 2 3 4 5 6 7; do
		taskset -c $((s % cpus)) sh -c "echo '$s $1' >$ctl/run" &
		pids+=($!)
	done
	for s in "${pids[@]}"; do
		wait "$s" || rc=1
	done
	return $rc
}

# What both kernels logged of RTRS and the test since the pairing began.
show_logs() {
	kmsg_since "$sess" | grep -E 'rtrs|rxe' | tail -20 | sed 's/^/# client dmesg: /'
	on_server "kmsg_since $sess | grep -E 'rtrs|rxe' | tail -20" | sed 's/^/# server dmesg: /'
}
check_on_fail=show_logs

# The value of <key> in the line "<key>=<value> ..." of <file>.
field() { tr ' ' '\n' <"$2" | sed -n "s/^$1=//p"; }

rxe_up || bail "rxe did not come up"
diag "CPUs: $(nproc)"
# paired <client> <server>: the pairing is one of PAIRINGS.
paired() { [[ " ${pairings[*]} " == *" $1:$2 "* ]]; }
for srv in c rs; do
	paired c $srv || paired rs $srv || continue
	for inval in Y N; do
		on_server "$(declare -f unload_all rtrs_load); unload_all &&
			rtrs_load server $srv always_invalidate=$inval &&
			insmod $MODDIR/rtrs-test-srv.ko" ||
			bail "server: cannot load rtrs-test-srv on the $srv rtrs-server"
		for clt in c rs; do
			paired $clt $srv || continue
			pair="client $clt, server $srv, always_invalidate=$inval"
			sess=api-$clt-$srv-$inval
			unload_all
			kmsg_mark "$sess"
			on_server "kmsg_mark $sess"
			rtrs_load client $clt || bail "cannot load the $clt rtrs-client"
			check "$pair: rtrs-test-clt opens session $sess" \
				insmod "$MODDIR/rtrs-test-clt.ko" sessname=$sess path=ip:$SERVER_IP0 path2=ip:$SERVER_IP1
			if ! [ -e $ctl/attrs ]; then
				for c in IO streams mismatches server; do skip "$pair: $c: no session"; done
				continue
			fi
			diag "$(cat $ctl/attrs)"
			check "$pair: 512 B to max_io_size, page and mid-page starts, read back equal" \
				eval "echo '0 $size_rounds' >$ctl/run"
			check "$pair: 8 streams at once on every CPU, $stream_rounds round(s) each, read back equal" \
				streams $stream_rounds
			diag "$(cat $ctl/stats)"
			reqs=$(field requests $ctl/stats)
			check "$pair: no mismatch" [ "$(field mismatches $ctl/stats)" = 0 ]
			rmmod rtrs_test_clt
			# 1 request in 41 per round per stream is the read past the end.
			# A request that failed over to the other path may have been
			# served on the first one too: the server may count more.
			check "$pair: the server served each of the $reqs requests, and refused the bad reads" \
				on_server "wait_for 30 eval \"dmesg | grep -q 'session $sess closed'\" &&
					dmesg | grep 'session $sess closed' | tail -1 | sed 's/^/# /' &&
					dmesg | grep 'session $sess closed' | tail -1 |
					awk '{ for (i = 1; i < NF; i++) n[\$(i + 1)] = \$i }
					     END { exit !(n[\"reads,\"] + n[\"writes,\"] + n[\"errors\"] >= $reqs &&
					                  n[\"errors\"] >= $size_rounds + 8 * $stream_rounds) }'"
		done
	done
done
check "no kernel warnings" eval '! dmesg_bad && ! on_server dmesg_bad'
ktap_finish
