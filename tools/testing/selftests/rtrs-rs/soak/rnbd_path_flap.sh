#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=3000
# Path flaps under verified IO, on our stack (our rnbd on our rtrs, both
# sides) with two paths and round-robin: path 0 is disconnected and
# reconnected through sysfs FLAPS times (100), then path 1; then the cable
# of each path's link is pulled and plugged in again LINK_FLAPS times (5:
# each takes about 30 s, mostly the reconnect delay; the runner
# turns the carrier of both NICs off and on; where rxe's GSI QP bug keeps a
# path from coming back, rxe is re-created on that side and the path must
# come back then). Verified fio runs back to back during all of it. Nothing may
# fail: every fio run verifies, no IO error, and the counters agree: each
# sysfs flap is one successful reconnect in stats/reconnects, the paths'
# stats/rdma together count at least the IO fio did, nothing is in flight
# at the end, and failovers were counted.
#
# Knobs, from the environment (scripts/run-tests --env): FLAPS, LINK_FLAPS,
# and LINK_PATHS, the paths whose cable is pulled ("0 1"; the others skip
# that case). A line per pull gives its phases: the seconds until the path
# left connected, from the plug-in until it was connected again, and the
# client's CM IDs toward the path's server in between.
. "$(dirname "$0")/../lib.sh"

FLAPS=${FLAPS:-100}
LINK_FLAPS=${LINK_FLAPS:-5}
LINK_PATHS=${LINK_PATHS:-0 1}
sess=flap
ccls=/sys/class/rtrs-client
ktap_plan 13

cleanup() {
	touch /tmp/flap-stop
	wait
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	host_request link 0 up
	host_request link 1 up
	unload_rnbd_rtrs
	on_server 'unload_rnbd_rtrs; rmmod null_blk 2>/dev/null; true'
}
trap cleanup EXIT

pdir() { echo "$ccls/$sess/paths/${paths[$1]}"; }
# srv_ip <path index>: the server's address on that path's link.
srv_ip() { [ "$1" = 0 ] && echo "$SERVER_IP0" || echo "$SERVER_IP1"; }
state_is() { [ "$(cat "$(pdir "$1")/state" 2>/dev/null)" = "$2" ]; }
both_connected() { state_is 0 connected && state_is 1 connected; }
reconnects() { set -- $(cat "$(pdir "$1")/stats/reconnects"); echo "$1"; }
show_paths() { diag "paths: $(cat $ccls/$sess/paths/*/state | xargs)"; }
check_on_fail=show_paths

rxe_up && on_server srv_stack_load rnbd && clt_stack_load rnbd || bail "cannot load our stacks"
echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0" \
	>/sys/class/rnbd-client/ctl/map_device || bail "map_device failed"
paths=()
for p in "$ccls/$sess"/paths/*; do paths+=("$(basename "$p")"); done
wait_for 60 test -b /dev/rnbd0 && wait_for 60 both_connected || bail "the two paths did not come up"
echo round-robin >"$ccls/$sess/mpath_policy"
for i in 0 1; do echo 1 >"$(pdir $i)/stats/reset_all"; done

# Verified fio runs of 2 MiB, back to back (a few seconds a run, so that
# runs end and start throughout the flaps); fio's own IO count is kept.
fio_loop flap 2 /dev/rnbd0 &

# flap_sysfs <path index>: FLAPS rounds of disconnect, wait, reconnect, wait.
flap_sysfs() {
	local i=$1 k
	for ((k = 0; k < FLAPS; k++)); do
		echo 1 >"$(pdir "$i")/disconnect" || return 1
		wait_for 60 state_is "$i" disconnected || { diag "round $k: still connected"; return 1; }
		echo 1 >"$(pdir "$i")/reconnect" || return 1
		wait_for 120 state_is "$i" connected || { diag "round $k: not connected"; return 1; }
	done
}
# flap_link <path index>: LINK_FLAPS rounds of the link's cable pulled until
# the path leaves connected, then plugged in again; the path reconnects by
# itself, unless rxe's GSI QP bug struck (see rxe_heal).
flap_link() {
	local i=$1 k try t0 t_down t_up
	for ((k = 0; k < LINK_FLAPS; k++)); do
		t0=$SECONDS
		host_request link "$i" down
		wait_for 30 carrier_is "eth$i" 0 || { diag "round $k: carrier still up"; return 1; }
		wait_for 120 eval '! state_is $i connected' || { diag "round $k: still connected"; return 1; }
		t_down=$((SECONDS - t0))
		host_request link "$i" up
		wait_for 30 carrier_is "eth$i" 1 || { diag "round $k: no carrier"; return 1; }
		t_up=$SECONDS
		phases= phases_last=x
		for ((try = 0; try < 3; try++)); do
			wait_for 150 connected_sampling "$i" "$t_up" && break
			link_diag "$i"
			rxe_heal "$i" || { diag "round $k: not connected"; return 1; }
		done
		state_is "$i" connected || { diag "round $k: not connected after healing rxe"; return 1; }
		diag "path $i pull $k: left connected after ${t_down} s, connected $((SECONDS - t_up)) s after the plug-in; stats/reconnects $(cat "$(pdir "$i")/stats/reconnects" | xargs), fio runs $(cat /tmp/flap-runs 2>/dev/null); CM IDs since the plug-in:$phases"
	done
}
# connected_sampling <path index> <since>: whether the path is connected,
# a wait_for predicate that also appends to $phases each change of the
# client's CM IDs toward the path's server, as " +<s>s <count> <state>...",
# the seconds counted from <since>: the IDs of the old connections stay
# (CONNECT, then DISCONNECT once the server answered their close) until
# the client has failed their IO over, none are there during the reconnect
# delay, then the new ones resolve and connect. Start with phases= and
# phases_last=x.
connected_sampling() {
	local now
	now=$(cm_id_states "$(srv_ip "$1")" | sort | uniq -c |
		awk '{s = s (NR > 1 ? "," : "") $1 " " $2} END {print s}')
	if [ "$now" != "$phases_last" ]; then
		phases="$phases +$((SECONDS - $2))s ${now:-none}"
		phases_last=$now
	fi
	state_is "$1" connected
}
gsi_qp_err() { rdma resource show qp link "rxe$1/1" lqpn 1 2>/dev/null | grep -q "state ERR"; }
# rxe_heal <path index>: rxe's bug (reliability.md, "Path flaps", bug 3): a
# CM message sent while the carrier is down moves the port's GSI QP to the
# error state for good, and no connection gets through that port until the
# rxe device is created again. Where the GSI QP of the path's link is in ERR
# (either side), re-create rxe: the device removal closes the path on that
# side, and a closed client path is reconnected through sysfs, as after any
# removal. Fails if neither side shows the bug: then the test fails too.
heals=0
rxe_heal() {
	local i=$1 healed=
	if gsi_qp_err "$i"; then
		rdma link delete "rxe$i" && rxe_up_local || return 1
		healed="client"
	fi
	if on_server "rdma resource show qp link rxe$i/1 lqpn 1 | grep -q 'state ERR'"; then
		on_server "rdma link delete rxe$i && rxe_up_local" || return 1
		healed="$healed server"
	fi
	[ -n "$healed" ] || return 1
	heals=$((heals + 1))
	diag "rxe$i GSI QP in ERR on: $healed; rxe$i re-created there (rxe bug)"
	# The device removal closed the client's path for good.
	case $healed in client*) echo 1 >"$(pdir "$i")/reconnect" 2>/dev/null ;; esac
	return 0
}
# What the client knows of the server behind link <i>, when a path does not
# come back.
link_diag() {
	local ip
	ip=$(srv_ip "$1")
	diag "ping $ip: $(ping -c 2 -W 1 "$ip" >/dev/null 2>&1 && echo answers || echo silent)"
	diag "neigh: $(ip neigh show dev "eth$1" | xargs)"
	diag "cm_ids: $(rdma resource show cm_id 2>&1 | grep -c .) ($(rdma resource show cm_id 2>&1 | grep -o 'state [A-Z_]*' | sort | uniq -c | xargs))"
	diag "server cm_ids: $(on_server "rdma resource show cm_id | grep -o 'state [A-Z_]*' | sort | uniq -c | xargs")"
	# The port's GSI QP carries the CM's messages.
	diag "GSI QP: $(rdma resource show qp link "rxe$1/1" lqpn 1 2>&1 | xargs); server: $(on_server "rdma resource show qp link rxe$1/1 lqpn 1 2>&1 | xargs")"
	rxe_counters
}

t_flaps=$SECONDS
for i in 0 1; do
	if [ "$FLAPS" = 0 ]; then
		skip "path $i: sysfs disconnects and reconnects (FLAPS=0)"
		skip "path $i: stats/reconnects counts each flap (FLAPS=0)"
		continue
	fi
	r0=$(reconnects $i)
	kmsg_mark "flap-$i"
	t0=$SECONDS
	check "path $i: $FLAPS sysfs disconnects and reconnects" flap_sysfs $i
	# Each flap is one successful reconnect; so is each recovery from an
	# error the path met on its own (logged, with its cause).
	recovered=$(kmsg_since "flap-$i" | grep -cF "<$sess> ${paths[$i]}: reconnecting the path")
	diag "path $i: $FLAPS flaps in $((SECONDS - t0)) s; stats/reconnects: $(cat "$(pdir $i)/stats/reconnects"), recoveries logged: $recovered"
	check "path $i: stats/reconnects counts each flap and each recovery" \
		eval '[ "$(reconnects $i)" = $((r0 + FLAPS + recovered)) ]'
done
t0=$SECONDS
for i in 0 1; do
	case " $LINK_PATHS " in
	*" $i "*) check "path $i: $LINK_FLAPS link downs and ups, reconnected by itself" flap_link $i ;;
	*) skip "path $i: link downs and ups (not in LINK_PATHS)" ;;
	esac
done
diag "link flaps in $((SECONDS - t0)) s; reconnects: $(cat "$ccls/$sess"/paths/*/stats/reconnects | xargs); rxe re-created for its GSI QP bug: $heals times"

touch /tmp/flap-stop
check "the fio runs stop" wait_for 600 eval '! jobs -r | grep -q .'
runs=$(cat /tmp/flap-runs 2>/dev/null || echo 0)
ios=$(awk '{s += $1} END {print s + 0}' /tmp/flap-ios)
diag "$runs verified fio runs, $ios IOs"
check "every fio run verified, no IO error" test ! -s /tmp/flap-fails
[ -s /tmp/flap-fails ] && sed 's/^/# /' /tmp/flap-fails
# IO went on throughout: a run ended every 20 s at least.
check "fio runs ended throughout the flaps ($runs in $((SECONDS - t_flaps)) s)" \
	test "$runs" -ge $(((SECONDS - t_flaps) / 20))
rdma() { awk -v c="$2" '{print $c}' "$(pdir "$1")/stats/rdma"; }
counted=$(($(rdma 0 1) + $(rdma 0 3) + $(rdma 1 1) + $(rdma 1 3)))
diag "stats/rdma: $(cat "$(pdir 0)/stats/rdma") | $(cat "$(pdir 1)/stats/rdma")"
check "stats/rdma of both paths count all of fio's IO" test "$counted" -ge "$ios"
check "nothing in flight at the end" eval '[ "$(rdma 0 5)" = 0 ] && [ "$(rdma 1 5)" = 0 ]'
check "failed-over requests were counted" test $(($(rdma 0 6) + $(rdma 1 6))) -gt 0
check "both paths connected at the end" both_connected
ktap_finish
