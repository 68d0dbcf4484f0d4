#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=14400
# Links that go silent under verified IO, many times: our stack on both
# sides, two paths, round-robin. PULLS times (100) for each path, both
# guests drop every packet of that path's link (netem loss 100%) until the
# path leaves connected, and then carry them again until it is back (the
# reconnect delay, 30 s, is most of each round). Verified fio runs go back
# to back through all of it. Nothing may fail: every run verifies, none
# has an IO error, and no IO of any run took 10 s or more (a failover that
# waited for the server's heartbeat timeout would take 35 s). A line per
# pull says how long the path took to leave connected, whether the
# server answered the fence, and how long the path took to come back.
#
# Knobs, from the environment (scripts/run-tests --env): PULLS,
# PROTO_EXT=N to run with the client pinned to RTRS 2.0 (chunk fences,
# as against a C server), and RECONNECT=sysfs to reconnect the path
# through its reconnect file as soon as the link is back instead of
# waiting for the reconnect delay: the failover, what the test measures,
# is the same, and a round takes about 7 s instead of 40.
. "$(dirname "$0")/../lib.sh"

PULLS=${PULLS:-100}
sess=pulls
ccls=/sys/class/rtrs-client
ktap_plan 7

cleanup() {
	touch /tmp/pulls-stop
	wait
	link_silence eth0 off
	link_silence eth1 off
	on_server 'link_silence eth0 off; link_silence eth1 off'
	rnbd_cleanup
}
trap cleanup EXIT

pdir() { echo "$ccls/$sess/paths/${paths[$1]}"; }
state_is() { [ "$(cat "$(pdir "$1")/state" 2>/dev/null)" = "$2" ]; }
both_connected() { state_is 0 connected && state_is 1 connected; }

rxe_up && on_server srv_stack_load rnbd && clt_stack_load rnbd || bail "cannot load our stacks"
[ "${PROTO_EXT:-Y}" = N ] && echo N >/sys/module/rtrs_client/parameters/proto_ext
echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0" \
	>/sys/class/rnbd-client/ctl/map_device || bail "map_device failed"
paths=()
for p in "$ccls/$sess"/paths/*; do paths+=("$(basename "$p")"); done
wait_for 60 test -b /dev/rnbd0 && wait_for 60 both_connected || bail "the two paths did not come up"
echo round-robin >"$ccls/$sess/mpath_policy"

# Verified fio runs of 4 MiB, back to back, the longest IO of each kept,
# and each IO of a second or more.
rm -f /tmp/pulls-answered /tmp/pulls-chunks /tmp/pulls-stalled /tmp/pulls-probe /tmp/pulls-times
FIO_SLOW_MS=1000 fio_loop pulls 4 /dev/rnbd0 &

# reconnect_now <path index>: connected, or a write of its reconnect file
# (which fails while the path is still closing, and else connects it at
# once) made it so.
reconnect_now() {
	state_is "$1" connected || echo 1 >"$(pdir "$1")/reconnect" 2>/dev/null
	state_is "$1" connected
}

# now_ms: the time in ms since the epoch, fio's clock in its latency logs.
# The guests' busybox date has no sub-second field; adjtimex reads the
# clock to the microsecond without setting anything.
now_ms() { adjtimex | awk '/tv_sec/ { s = $2 } /tv_usec/ { u = $2 } END { printf "%d%03d\n", s, u / 1000 }'; }

# pull <path index>: PULLS rounds of the link going silent until the path
# leaves connected, then back until it is connected again. Each round adds
# a line to /tmp/pulls-times: the path, the round, and when (now_ms) the
# silence began, the path was seen to leave connected, the link carried
# packets again and the path was connected again.
pull() {
	local i=$1 k t0 t_down fenced log ms_on ms_down ms_back
	for ((k = 0; k < PULLS; k++)); do
		kmsg_mark "pull-$i-$k"
		t0=$SECONDS
		ms_on=$(now_ms)
		# The server's side first: the client's silence starts at its
		# last receive, as when a cable is pulled; with the client's
		# side first, the server would go on answering for as long as
		# on_server takes to start its half, and the IO sent meanwhile
		# would wait that long too.
		on_server "link_silence eth$i on" && link_silence "eth$i" on || return 1
		wait_for 120 eval '! state_is $i connected' || { diag "pull $k: still connected"; return 1; }
		t_down=$((SECONDS - t0))
		ms_down=$(now_ms)
		link_silence "eth$i" off && on_server "link_silence eth$i off" || return 1
		ms_back=$(now_ms)
		t0=$SECONDS
		if [ "${RECONNECT:-delay}" = sysfs ]; then
			wait_for 180 reconnect_now "$i"
		else
			wait_for 180 state_is "$i" connected
		fi || { diag "pull $k: not connected again"; return 1; }
		echo "$i $k $ms_on $ms_down $ms_back $(now_ms)" >>/tmp/pulls-times
		log=$(kmsg_since "pull-$i-$k")
		sed -n 's/.*nothing from the server for \([0-9]*\) ms .* unanswered for \([0-9]*\) ms (sent \([0-9]*\) ms late).*/\1 \2 \3/p' \
			<<<"$log" | head -1 >>/tmp/pulls-probe
		fenced=$(grep -o 'answered its IO in [0-9]* ms\|IOs failed over on other chunks' <<<"$log" | head -1)
		case $fenced in
		answered*) echo >>/tmp/pulls-answered ;;
		IOs*) echo >>/tmp/pulls-chunks ;;
		esac
		diag "path $i pull $k: left connected after $t_down s, ${fenced:-no IO to fail over}, back in $((SECONDS - t0)) s, fio runs $(cat /tmp/pulls-runs 2>/dev/null)"
		# Every ten pulls, fio must have completed a run since the
		# ten before: IO went on through the pulls.
		if ((k % 10 == 9)); then
			runs=$(cat /tmp/pulls-runs 2>/dev/null || echo 0)
			[ "$runs" -gt "${runs_then:-0}" ] || echo "path $i, pulls $((k - 9)) to $k" >>/tmp/pulls-stalled
			runs_then=$runs
		fi
	done
}

check "path 0 goes silent and comes back $PULLS times" pull 0
check "path 1 goes silent and comes back $PULLS times" pull 1
touch /tmp/pulls-stop
wait
runs=$(cat /tmp/pulls-runs 2>/dev/null || echo 0)
max=$(sort -n /tmp/pulls-max 2>/dev/null | tail -1)
diag "fio runs: $runs; longest IO of any run: ${max:-?} ms"
diag "runs whose longest IO took 1.5 s or more: $(awk '$1 >= 1500' /tmp/pulls-max 2>/dev/null | wc -l)"
# percentiles: the 50th, 90th, 99th and 100th of the numbers on stdin.
percentiles() {
	sort -n | awk '{v[NR] = $1} END {if (NR) print v[int(NR * .5) + (NR * .5 > int(NR * .5))], v[int(NR * .9) + (NR * .9 > int(NR * .9))], v[int(NR * .99) + (NR * .99 > int(NR * .99))], v[NR]}'
}
diag "longest IO of the runs, ms (percentiles 50 90 99 100): $(cat /tmp/pulls-max 2>/dev/null | percentiles)"
# What the probe ended: the path's silence, how long its heartbeat went
# unanswered (two thirds of silence_ms when its steps ran on time) and how late
# the step that sent the heartbeat ran.
diag "the probe ended $(wc -l </tmp/pulls-probe 2>/dev/null || echo 0) silences; silence, ms (percentiles 50 90 99 100): $(cut -d' ' -f1 /tmp/pulls-probe 2>/dev/null | percentiles)"
diag "heartbeat unanswered, ms (percentiles 50 90 99 100): $(cut -d' ' -f2 /tmp/pulls-probe 2>/dev/null | percentiles)"
diag "heartbeat sent late, ms (percentiles 50 90 99 100): $(cut -d' ' -f3 /tmp/pulls-probe 2>/dev/null | percentiles)"
# Where the IOs of a second or more fell among the pulls: for each, the
# last pull whose silence began before the IO completed, and the IO's
# start and end from that silence's beginning; then the pull's own times
# from it (the path seen down, the link back, the path connected again).
# The 40 longest are listed.
diag "IOs of 1 s or more: $(wc -l </tmp/pulls-slow 2>/dev/null || echo 0)"
sort -k2,2nr /tmp/pulls-slow 2>/dev/null | head -40 | awk '
	FILENAME == ARGV[1] { n++; on[n] = $3; who[n] = $1 "/" $2; rest[n] = ($4 - $3) " " ($5 - $3) " " ($6 - $3); next }
	{
		p = 0
		for (j = 1; j <= n; j++) if (on[j] <= $1 && (p == 0 || on[j] > on[p])) p = j
		if (p == 0) { print "# slow IO: " $2 " ms, " ($3 ? "write" : "read") ", before any pull"; next }
		split(rest[p], r, " ")
		print "# slow IO: " $2 " ms, " ($3 ? "write" : "read") ", pull " who[p] ": from +" ($1 - $2 - on[p]) " to +" ($1 - on[p]) " ms of the silence (path down +" r[1] ", link back +" r[2] ", connected +" r[3] ")"
	}' /tmp/pulls-times -
check "fio ran throughout: $runs runs, at least one in every ten pulls" \
	eval '[ "$runs" -gt 0 ] &&
	{ ! test -s /tmp/pulls-stalled || { sed "s/^/# no run completed: /" /tmp/pulls-stalled; false; }; }'
check "every run verified, no IO error" eval '! test -s /tmp/pulls-fails || { sed "s/^/# /" /tmp/pulls-fails; false; }'
check "no IO waited for the server's heartbeat timeout (longest $max ms, under 10 s)" [ "${max:-99999}" -lt 10000 ]
if [ "${PROTO_EXT:-Y}" = N ]; then
	check "the IO failed over on fenced chunks (RTRS 2.0)" \
		eval '[ "$(wc -l </tmp/pulls-chunks 2>/dev/null || echo 0)" -ge "$PULLS" ]'
else
	check "the server answered a fence for the IO of most pulls (RTRS 2.1)" \
		eval '[ "$(wc -l </tmp/pulls-answered 2>/dev/null || echo 0)" -ge "$PULLS" ]'
fi
check "unmap_device" eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 eval "! test -e $ccls/$sess"'
ktap_finish
