#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# topology=servers=1 clients=1 links=4 client_smp=4
# A client of CPUS vCPUs (make check: 4, on the guests of
# rnbd_four_paths.sh, whose shape this is; soak/: 8, on a client of its
# own), our client and (soak/) C's, the control, against our server
# (CLIENTS: make check "rnbd", soak/ "rnbd c"), a device mapped over one
# path: the path has CPUS + 1 connections, the service connection and one
# per CPU, as C opens them; IO submitted on CPU k goes out on connection
# k + 1 (the QP whose send PSN moves: the connections' QPs, in the order
# they were made, are 0 to CPUS); and stats/cpu_migration_from and _to
# hold one count per CPU, the two summing to the same, as C's do.
. "$(dirname "$0")/lib.sh"

sess=cpus
ctl=/sys/class/rnbd-client/ctl
ccls=/sys/class/rtrs-client
read -ra clients <<<"${CLIENTS:-rnbd}"
CPUS=${CPUS:-4}
ktap_plan $((${#clients[@]} * 4 + 2))

trap rnbd_cleanup EXIT

# The QPNs of this client's connections to the server's link-0 address,
# in the order they were made.
qpns() {
	rdma resource show cm_id 2>/dev/null | grep -F "dst-addr $SERVER_IP0:" | grep 'state CONNECT' |
		sed -n 's/.* lqpn \([0-9]*\) .*/\1/p' | sort -n
}
# sq_psn <qpn>: the send PSN of that QP of rxe0.
sq_psn() {
	rdma resource show qp link rxe0/1 lqpn "$1" 2>/dev/null | sed -n 's/.* sq-psn \([0-9]*\) .*/\1/p'
}
# pinned <who>: 200 4k writes from each CPU in turn; the connection whose
# QP sent the most must be CPU + 1, and it must have sent them.
pinned() {
	local cpu i before after d best bestd ok=0 q
	read -ra q <<<"$(qpns | xargs)"
	[ ${#q[@]} = $((CPUS + 1)) ] && test -b /dev/rnbd0 || return 1
	for ((cpu = 0; cpu < CPUS; cpu++)); do
		before=()
		for i in "${!q[@]}"; do before[$i]=$(sq_psn "${q[$i]}"); done
		taskset -c $cpu fio --name=p --filename=/dev/rnbd0 --ioengine=libaio --direct=1 \
			--rw=randwrite --bs=4k --iodepth=4 --number_ios=200 --size=64M >/dev/null 2>&1 || return 1
		best='' bestd=-1
		for i in "${!q[@]}"; do
			after=$(sq_psn "${q[$i]}")
			d=$(((after - ${before[$i]} + 16777216) % 16777216))
			[ "$d" -gt "$bestd" ] && best=$i bestd=$d
		done
		diag "$1: CPU $cpu: most packets ($bestd) on connection $best"
		[ "$best" = $((cpu + 1)) ] && [ "$bestd" -ge 200 ] && ok=$((ok + 1))
	done
	[ $ok = "$CPUS" ]
}
# migrations <from|to>: the counts of stats/cpu_migration_<from|to>.
migrations() { cat "$ccls/$sess"/paths/*/stats/cpu_migration_"$1"; }
sum() { echo $(($(echo "$1" | xargs | tr ' ' '+'))); }
# migrations_agree: CPUS counts in each file, the two summing to the same. The
# files are read one after the other: a completion counted in between (a
# heartbeat's) adds to both, so a mismatch is read again.
migrations_agree() {
	local from to
	from=$(migrations from) to=$(migrations to)
	[ "$(echo $from | wc -w)" = "$CPUS" ] && [ "$(echo $to | wc -w)" = "$CPUS" ] &&
		[ "$(sum "$from")" = "$(sum "$to")" ]
}

rxe_up && on_server srv_stack_load rnbd || bail "rxe or the server did not come up"
check "the client has $CPUS CPUs" [ "$(nproc)" = "$CPUS" ]
for st in "${clients[@]}"; do
	who=$([ $st = c ] && echo "C's client" || echo "our client")
	clt_stack_load $st || bail "$who: cannot load"
	check "$who: mapped over one path" eval '
		echo "sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0" >$ctl/map_device &&
		wait_for 60 test -b /dev/rnbd0'
	n=$(qpns | wc -l)
	diag "$who: connections to $SERVER_IP0: $n"
	check "$who: the path has $((CPUS + 1)) connections" [ "$n" = $((CPUS + 1)) ]
	check "$who: IO from each CPU goes out on that CPU's connection" pinned "$who"
	check "$who: cpu_migration_from and _to: $CPUS counts each, the same sum" wait_for 10 migrations_agree
	diag "$who: cpu_migration_from: $(migrations from); _to: $(migrations to)"
	echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 test ! -e /dev/rnbd0
	unload_rnbd_rtrs
done
check "no kernel warning on either side" eval '! dmesg_bad && ! on_server dmesg_bad'
ktap_finish
