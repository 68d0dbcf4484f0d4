#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# No stale write: a write that a failed-over path delivers late never
# lands over a newer write to the same block. Two paths, round-robin, and
# four writers, each rewriting its own 16 blocks of 4 KiB in turn through
# O_DIRECT with a sequence stamp in every write (stampio, from
# tools/testing/stampio). A few seconds in, the packets the client sends on
# link 1 are delayed by DELAY_S seconds (netem: delayed, not dropped), with
# those the server sends too ("both") or not ("client"): the client fails
# the path's IO over, and the writers go on over path 0, rewriting every
# block, until before the delayed packets arrive; then nothing writes
# until they have. Every block then holds, on the client and on the
# server's disk alike, the stamp its writer was told last was written (or
# a later one whose write returned an error): an older one would be a
# write of path 1 that landed after a newer one completed.
#
# Between our modules the client fences path 1 first (RTRS 2.1: the server
# closes the path and answers its IO before the IO fails over), so nothing
# of the old path is left to land. CASES names what runs, as
# <client stack>:<server stack>:<delayed direction>[:2.0]; :2.0 pins the
# client to RTRS 2.0 (proto_ext=N), where no fence is sent, as against a
# C peer, and such a case, like C's, is a control: what it shows is
# recorded (stale blocks in it are what the test can tell), not asserted.
# make check: ours, and ours at 2.0, both directions delayed; soak/: the
# client's direction alone too, and C's stack, with the delay long enough
# for C's client to fail the path over.
. "$(dirname "$0")/lib.sh"

sess=late
ccls=/sys/class/rtrs-client
p0=ip:$CLIENT_IP0@ip:$SERVER_IP0
p1=ip:$CLIENT_IP1@ip:$SERVER_IP1
STAMPIO=/opt/rtrs-rs/bin/stampio
CASES=${CASES:-rnbd:rnbd:both rnbd:rnbd:both:2.0}
# The delay, and when it begins after the writers started.
DELAY_S=${DELAY_S:-8}
START_S=3
WRITERS=4
BLOCKS=16
# The writers stop 2 s before the first delayed packet can arrive, and so
# long after the failover that each rewrote every block of its own.
WRITE_S=$((START_S + DELAY_S - 2))
n=1
for c in $CASES; do
	case $c in *:2.0 | c:*) n=$((n + 3)) ;; *) n=$((n + 7)) ;; esac
done
ktap_plan $n

cleanup() {
	pkill -f "$STAMPIO" 2>/dev/null
	wait
	link_delay eth1 off
	on_server 'link_delay eth1 off'
	[ -e /sys/module/rtrs_client/parameters/proto_ext ] && echo Y >/sys/module/rtrs_client/parameters/proto_ext
	rnbd_cleanup
}
trap cleanup EXIT

writes_of() { set -- $(cat "$ccls/$sess/paths/$1/stats/rdma"); echo "$3"; }
# delay_on <both|client>, delay_off: netem on link 1, with a queue that
# holds every delayed packet (netem's default of 1000 would drop some).
delay_on() {
	tc qdisc replace dev eth1 root netem delay "${DELAY_S}s" limit 100000 || return 1
	[ "$1" = client ] || on_server "tc qdisc replace dev eth1 root netem delay ${DELAY_S}s limit 100000"
}
delay_off() { link_delay eth1 off && on_server 'link_delay eth1 off'; }

# writers <run>: the writers, in the background, each with its own blocks
# from block 1024 on (4 MiB in); each prints its summary to
# /tmp/late-<w>.out and its log to /tmp/late-<w>.log.
writers() {
	local w
	rm -f /tmp/late-*.out /tmp/late-*.log
	for ((w = 0; w < WRITERS; w++)); do
		$STAMPIO write /dev/rnbd0 "$1" $((1024 + w * BLOCKS)) $BLOCKS $WRITE_S /tmp/late-$w.log \
			>/tmp/late-$w.out 2>&1 &
	done
}
# sum_of <field>: the writers' total of writes=, ok=, failed=; of max_ms,
# the longest; of oldest_ack_ms, the oldest.
sum_of() {
	cat /tmp/late-*.out | tr ' ' '\n' | sed -n "s/^$1=//p" | awk -v f="$1" '
		f == "max_ms" { s = NR == 1 || $1 > s ? $1 : s; next }
		f == "oldest_ack_ms" { s = NR == 1 || $1 < s ? $1 : s; next }
		{ s += $1 }
		END { print s + 0 }'
}

rxe_up || bail "rxe did not come up"
for c in $CASES; do
	IFS=: read -r cst sst dir ver <<<"$c"
	name="client $cst, server $sst, delayed: $dir${ver:+, RTRS $ver}"
	control=
	[ "$ver" = 2.0 ] || [ "$cst" = c ] || [ "$sst" = c ] && control=1
	kmsg_mark "late-$c"
	check "$name: two paths, round-robin" eval 'on_server "srv_stack_load $sst" && clt_stack_load $cst &&
		{ [ "$ver" != 2.0 ] || echo N >/sys/module/rtrs_client/parameters/proto_ext; } &&
		echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0" \
			>/sys/class/rnbd-client/ctl/map_device &&
		wait_for 60 test -b /dev/rnbd0 && wait_for 30 paths_connected $sess 2 &&
		echo round-robin >$ccls/$sess/mpath_policy'
	run=$((RANDOM * 32768 + RANDOM + 1))
	fo=$(failed_over $sess) w1=$(writes_of "$p1")
	t0=$SECONDS
	writers $run
	sleep $START_S
	delay_on "$dir" || bail "$name: cannot delay link 1"
	wait
	diag "$name: writers: writes=$(sum_of writes) ok=$(sum_of ok) failed=$(sum_of failed)" \
		"longest=$(sum_of max_ms) ms, oldest last ack at $(sum_of oldest_ack_ms) ms;" \
		"path 1 took $(($(writes_of "$p1") - w1)) writes;" \
		"failed over: $(($(failed_over $sess) - fo))"
	# Until every delayed packet has arrived.
	left=$((START_S + DELAY_S + 3 - (SECONDS - t0)))
	[ $left -gt 0 ] && sleep $left
	logs=$(cat /tmp/late-*.log)
	clt=$($STAMPIO check /dev/rnbd0 $run /tmp/late-*.log 2>&1)
	clt_rc=$?
	srv=$(on_server "cat >/tmp/late.log <<'LOGEOF'
$logs
LOGEOF
		$STAMPIO check /dev/nullb0 $run /tmp/late.log 2>&1")
	srv_rc=$?
	diag "$name: client reads: ${clt//$'\n'/; }"
	diag "$name: server's disk: ${srv//$'\n'/; }"
	if [ -n "$control" ]; then
		diag "$name: a control: $([ $clt_rc = 0 ] && [ $srv_rc = 0 ] && echo "no stale block" ||
			echo "stale or wrong blocks (status $clt_rc and $srv_rc)")"
		check "$name: each block read back, on the client and the server" \
			eval '[ $clt_rc != 1 ] && [ $srv_rc != 1 ]'
	else
		check "$name: every write succeeded" eval '[ "$(sum_of failed)" = 0 ] && [ "$(sum_of ok)" -gt 0 ]'
		check "$name: path 1's IO failed over (stats/rdma)" eval '[ "$(failed_over $sess)" -gt "$fo" ]'
		check "$name: every block was rewritten 2 s or more after the delay began" \
			eval '[ "$(sum_of oldest_ack_ms)" -gt $(((START_S + 2) * 1000)) ]'
		check "$name: the client reads each block's last acknowledged stamp" test $clt_rc = 0
		check "$name: so does the server's disk" test $srv_rc = 0
		[ $clt_rc = 2 ] || [ $srv_rc = 2 ] && data_mismatch "$name: stale or wrong blocks"
	fi
	delay_off
	check "$name: with the link back, path 1 reconnects; unmap, unload" eval '
		wait_for 120 eval "reconnect_path $ccls/$sess/paths/$p1 && paths_connected $sess 2" &&
		rnbd_unmap_all && wait_for 30 eval "! test -e $ccls/$sess" &&
		{ [ "$ver" != 2.0 ] || echo Y >/sys/module/rtrs_client/parameters/proto_ext; } &&
		unload_rnbd_rtrs -w 30 &&
		on_server "unload_rnbd_rtrs -w 30"'
done
check "no kernel warning on either side" eval '! dmesg_bad && ! on_server dmesg_bad'
ktap_finish
