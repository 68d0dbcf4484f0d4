#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# topology=servers=1 clients=1 links=4 client_smp=4
# A session of four paths over four links, our client against our server,
# and (soak/) C's client against it as the control. Each multipath policy chooses
# as its definition says: round-robin spreads reads evenly over the four
# paths; min-inflight sends fewer to a path whose link is slow (its
# requests stay in flight longer); min-latency sends none to the path
# whose link the heartbeats found slow. Then, under verified IO, the
# policy is switched round and round, a path is removed and added again
# (without and with its source address), and a path's sysfs files are read
# in a loop while it is removed: the IO verifies, nothing warns. The
# client has 4 vCPUs: rtrs_many_cpus.sh, next, runs on the same guests
# (a shape the runner boots once); the policies do not depend on it.
. "$(dirname "$0")/lib.sh"

sess=four
ctl=/sys/class/rnbd-client/ctl
ccls=/sys/class/rtrs-client
# CLIENTS: whose policies are measured; make check: ours, "rnbd"; soak/:
# "rnbd c". SWITCH_ROUNDS: rounds of the three policies under IO (make
# check 10; soak/ 20); IO_MIB: what each verified run of the IO writes
# (make check 2; soak/ 4).
read -ra clients <<<"${CLIENTS:-rnbd}"
switch_rounds=${SWITCH_ROUNDS:-10}
io_mib=${IO_MIB:-2}
ktap_plan $((10 + 5 * ${#clients[@]}))

cleanup() {
	touch /tmp/four-stop
	[ -n "$fio_pid" ] && wait_for 120 eval '! kill -0 $fio_pid 2>/dev/null'
	for i in 0 1 2 3; do link_delay "eth$i" off; done
	on_server 'for i in 0 1 2 3; do link_delay eth$i off; done'
	rnbd_cleanup
}
fio_pid=
trap cleanup EXIT

# slow_link <i> <ms>|off: link <i> delays each packet by <ms>, times
# SLOWDOWN: on a slow kernel the heartbeats' round trips vary more.
slow_link() {
	local d=$2
	[ "$d" = off ] || d=$((d * ${SLOWDOWN:-1}))
	link_delay "eth$1" "$d" && on_server "link_delay eth$1 $d"
}
srv() { link_ip server client "$1"; }
clt() { link_ip client server "$1"; }
pdir() { echo "$ccls/$sess/paths/ip:$(clt "$1")@ip:$(srv "$1")"; }
connected_all() {
	local i
	for i in 0 1 2 3; do [ "$(cat "$(pdir $i)/state" 2>/dev/null)" = connected ] || return 1; done
}
# reads <i>: reads path <i> carried since its stats were reset.
reads() { awk '{print $1}' "$(pdir "$1")/stats/rdma"; }
# latency <i>: path <i>'s last heartbeat round trip, in ns (cur_latency).
latency() { awk '{print $1}' "$(pdir "$1")/cur_latency"; }
# slowest <i>: the heartbeats found path <i> slower than every other path:
# min-latency then sends it nothing.
slowest() {
	local i l
	l=$(latency "$1")
	for i in 0 1 2 3; do [ "$i" = "$1" ] || [ "$l" -gt "$(latency $i)" ] || return 1; done
}
reset_stats() { local i; for i in 0 1 2 3; do echo 1 >"$(pdir $i)/stats/reset_all"; done; }
# read_load: 4k random reads at QD16, 1000 of them; then the share of
# each path, in percent, goes to shares[] (emptied first: a failed load
# leaves nothing for a check to judge).
read_load() {
	local i total=0
	shares=()
	test -b /dev/rnbd0 || return 1
	reset_stats
	fio --name=r --filename=/dev/rnbd0 --ioengine=libaio --direct=1 --rw=randread --bs=4k \
		--iodepth=16 --number_ios=1000 --size=64M >/dev/null 2>&1 || return 1
	for i in 0 1 2 3; do total=$((total + $(reads $i))); done
	for i in 0 1 2 3; do shares[$i]=$(($(reads $i) * 100 / (total ? total : 1))); done
	diag "$(cat "$ccls/$sess/mpath_policy"): reads per path: $(for i in 0 1 2 3; do echo -n "$(reads $i) "; done)(${shares[*]} %)"
}
policy() { echo "$1" >"$ccls/$sess/mpath_policy"; }

map4() {
	local line="sessname=$sess" i
	for i in 0 1 2 3; do line="$line path=ip:$(clt $i)@ip:$(srv $i)"; done
	echo "$line device_path=/dev/nullb0" >$ctl/map_device && wait_for 60 test -b /dev/rnbd0 &&
		wait_for 60 connected_all
}
unmap() { echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 test ! -e /dev/rnbd0; }
# shares_between <lo> <hi>: every path's share is within [lo, hi] %.
shares_between() {
	local i
	for i in 0 1 2 3; do [ "${shares[$i]}" -ge "$1" ] && [ "${shares[$i]}" -le "$2" ] || return 1; done
}
# least <i>: path <i> has a smaller share than every other path.
least() {
	local i
	for i in 0 1 2 3; do [ "$i" = "$1" ] || [ "${shares[$1]}" -lt "${shares[$i]}" ] || return 1; done
}

# The policies, for our client and for C's.
policies() { # <client stack>
	local st=$1 who
	who=$([ "$st" = c ] && echo "C's client" || echo "our client")
	clt_stack_load "$st" || bail "$who: cannot load"
	check "$who: mapped over four paths" map4
	check "$who, round-robin: each path carries 15 to 35 % of the reads" \
		eval 'policy round-robin && read_load && shares_between 15 35'
	check "$who, min-inflight: the path of the slow link gets fewer reads than each other path" \
		eval 'policy min-inflight && slow_link 1 20 && read_load && least 1'
	slow_link 1 off
	# The heartbeats measure each path's latency, every 5 s: the reads
	# start once they found path 2 the slowest, or after 15 s.
	check "$who, min-latency: the path of the slow link gets at most 2 % of the reads" \
		eval 'policy min-latency && slow_link 2 20 && { wait_for 15 slowest 2; true; } &&
			read_load && [ "${shares[2]}" -le 2 ]'
	slow_link 2 off
	check "$who: unmap" unmap
}

rxe_up_local && on_server 'rxe_up_local' || bail "rxe did not come up"
for i in 0 1 2 3; do
	wait_for 30 ping -c 1 -W 1 "$(srv $i)" >/dev/null || bail "the server does not answer on link $i"
done
on_server 'srv_stack_load rnbd' || bail "server: cannot load our stack"

for st in "${clients[@]}"; do policies "$st"; done
unload_rnbd_rtrs

# Under verified IO: policies switched, a path removed and added again, and
# its files read while it goes.
clt_stack_load rnbd && map4 || bail "our client: map over four paths failed"
rm -f /tmp/four-stop
fio_loop four "$io_mib" /dev/rnbd0 &
fio_pid=$!
runs() { cat /tmp/four-runs 2>/dev/null || echo 0; }
# The first run has completed: the changes below happen under IO.
wait_for 120 eval '[ "$(runs)" -ge 1 ]'
runs0=$(runs)
switch_policies() {
	local k p
	for ((k = 0; k < switch_rounds; k++)); do
		for p in round-robin min-inflight min-latency; do policy $p || return 1; sleep 0.3; done
	done
}
check "mpath_policy switched $((switch_rounds * 3)) times under IO" switch_policies
# reader <dir>: reads every file below <dir> until it is gone.
reader() {
	while [ -d "$1" ]; do cat "$1"/* "$1"/stats/* >/dev/null 2>&1; done
	return 0
}
# srv_path_to <address>: the server has a path of the session to <address>.
srv_path_to() { on_server "ls /sys/class/rtrs-server/$sess/paths" | grep -q "@ip:$1\$"; }
# remove_add: the client's remove_path ends with its side of the path; the
# server closes its own once it hears of it, and until then refuses a
# path to the same address (EEXIST, as C's server), so the path is added
# again once the server's is gone, as an operator's script would.
remove_add() { # <path index> <with source: 0|1>
	local p r
	p=$(pdir "$1")
	reader "$p" &
	r=$!
	echo 1 >"$p/remove_path" && wait_for 30 eval "! test -d $p" || { kill $r; return 1; }
	wait $r
	wait_for 30 eval "! srv_path_to $(srv "$1")" || return 1
	if [ "$2" = 1 ]; then
		echo "ip:$(clt "$1")@ip:$(srv "$1")" >"$ccls/$sess/add_path"
	else
		echo "ip:$(srv "$1")" >"$ccls/$sess/add_path"
	fi || return 1
	wait_for 60 eval "[ \"\$(cat $ccls/$sess/paths/*@ip:$(srv "$1")/state)\" = connected ]"
}
check "path 3 removed while its files are read, added again without a source" remove_add 3 0
check "path 1 removed while its files are read, added again with its source" remove_add 1 1
check "a removed path's directory is gone, the added one is there" eval '
	ls $ccls/$sess/paths | grep -q "@ip:$(srv 3)\$" && test -d "$(pdir 1)"'
check "four paths connected" eval '[ "$(cat $ccls/$sess/paths/*/state | grep -c ^connected)" = 4 ]'
check "fio runs completed while the policies and paths changed" eval '
	diag "fio runs: $runs0 before the changes, $(runs) after"; [ "$(runs)" -gt "$runs0" ]'
touch /tmp/four-stop
check "the fio loop stops when asked: no IO hangs" wait_for 120 eval '! kill -0 $fio_pid 2>/dev/null'
kill -0 $fio_pid 2>/dev/null && bail "fio does not end"
fio_pid=
check "every fio run verified, no IO error" eval '! test -s /tmp/four-fails || { sed "s/^/# /" /tmp/four-fails; false; }'
check "unmap" unmap
check "no kernel warning on either side" eval '! dmesg_bad && ! on_server dmesg_bad'
ktap_finish
