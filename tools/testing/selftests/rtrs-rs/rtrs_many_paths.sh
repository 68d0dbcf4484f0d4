#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# Path selection over many paths, and the round-robin cursor when a path
# goes: our whole stack on both sides. A device is mapped over one path,
# then 32 more are added from addresses the client's link-0 netdev gets for
# the purpose (33 paths; C takes up to 128). The addresses change rxe0's
# GID table, an event the client logs as C; the 33 paths share one PD on
# each side. With the first 32 disconnected,
# verified IO must go over the 33rd: every path of the list carries IO, not
# only the first 32. Then, with three paths and round-robin, one CPU writes
# twice (paths 0 and 1), path 0 is removed, and its next write must go to
# path 2, as C's rtrs_clt_remove_path_from_arr() keeps each CPU's cursor on
# its path.
. "$(dirname "$0")/lib.sh"

sess=rs-many
ccls=/sys/class/rtrs-client
n_extra=32
ktap_plan 11

alias_ip() { echo "192.0.2.$((100 + $1))"; }
cleanup() {
	local i
	rnbd_cleanup
	for i in $(seq 1 $n_extra); do ip addr del "$(alias_ip $i)/24" dev eth0 2>/dev/null; done
	true
}
trap cleanup EXIT

path_of() { echo "ip:$1@ip:$SERVER_IP0"; }
state_is() { [ "$(cat "$ccls/$sess/paths/$1/state" 2>/dev/null)" = "$2" ]; }
writes_of() { set -- $(cat "$ccls/$sess/paths/$1/stats/rdma"); echo "$3"; }
all_connected() {
	local i
	state_is "$(path_of "$CLIENT_IP0")" connected || return 1
	for i in $(seq 1 $n_extra); do state_is "$(path_of "$(alias_ip $i)")" connected || return 1; done
}

command -v taskset >/dev/null || bail "no taskset in the guest"
rxe_up || bail "rxe did not come up"
on_server srv_stack_load rnbd || bail "cannot load our server stack"
clt_stack_load rnbd || bail "cannot load our client stack"
echo "sessname=$sess path=ip:$CLIENT_IP0@ip:$SERVER_IP0 device_path=/dev/nullb0" \
	>/sys/class/rnbd-client/ctl/map_device && wait_for 60 test -b /dev/rnbd0 || bail "map_device failed"
# New addresses change the device's GID table: an event of the device.
kmsg_mark gid
for i in $(seq 1 $n_extra); do ip addr add "$(alias_ip $i)/24" dev eth0 || bail "cannot add an address"; done
check "the client logs the device's events, as C" \
	wait_for 10 eval 'kmsg_since gid | grep -q "rtrs_client: Handling event: GID changed"'

check "add_path of 32 more paths" eval 'for i in $(seq 1 $n_extra); do
	echo "$(path_of "$(alias_ip $i)")" >$ccls/$sess/add_path || exit 1; done'
check "all 33 paths are connected" wait_for 120 all_connected
# Every path is on rxe0: one PD each side, shared, as C's rtrs_ib_dev.
pds() { rdma resource show pd 2>/dev/null | grep -c "$1"; }
diag "PDs: client $(pds rtrs_client), server $(on_server "rdma resource show pd | grep -c rtrs_server")"
check "the 33 paths share one PD on each side" \
	eval '[ "$(pds rtrs_client)" = 1 ] && [ "$(on_server "rdma resource show pd | grep -c rtrs_server")" = 1 ]'
# The list is in the order the paths came: the first 32 go down.
check "disconnect the first 32" eval '
	echo 1 >"$ccls/$sess/paths/$(path_of "$CLIENT_IP0")/disconnect" &&
	for i in $(seq 1 $((n_extra - 1))); do echo 1 >"$ccls/$sess/paths/$(path_of "$(alias_ip $i)")/disconnect" || exit 1; done'
last=$(path_of "$(alias_ip $n_extra)")
w=$(writes_of "$last")
check "verified IO goes over the 33rd path" eval 'fio_verify /dev/rnbd0 --rw=randwrite --bs=4k --iodepth=8 --size=2M &&
	[ "$(writes_of "$last")" -gt "$w" ]'

# Three paths: the 33rd and two reconnected ones, in list order p0, p1, p2.
p0=$(path_of "$(alias_ip 1)")
p1=$(path_of "$(alias_ip 2)")
p2=$last
check "two paths reconnect" eval 'echo 1 >"$ccls/$sess/paths/$p0/reconnect" && echo 1 >"$ccls/$sess/paths/$p1/reconnect"'
check "remove every other path" eval 'for p in "$ccls/$sess"/paths/*; do
	case ${p##*/} in "$p0"|"$p1"|"$p2") ;; *) echo 1 >"$p/remove_path" || exit 1 ;; esac; done &&
	[ "$(ls "$ccls/$sess/paths" | wc -l)" = 3 ]'
echo round-robin >$ccls/$sess/mpath_policy
one_write() { taskset -c 0 dd if=/dev/zero of=/dev/rnbd0 bs=4k count=1 seek=$1 oflag=direct 2>/dev/null; }
# The cursor of CPU 0 is where IO before left it: write until path 1 took
# a write, so that it is on path 1.
before=$(writes_of "$p1")
n=0
while [ "$(writes_of "$p1")" = "$before" ] && [ $n -lt 6 ]; do one_write $n; n=$((n + 1)); done
check "round-robin on CPU 0 reaches path 1" [ "$(writes_of "$p1")" != "$before" ]
check "remove path 0" eval 'echo 1 >"$ccls/$sess/paths/$p0/remove_path" && ! test -e "$ccls/$sess/paths/$p0"'
w1=$(writes_of "$p1") w2=$(writes_of "$p2")
one_write 100
diag "writes after the removal: path 1 $w1 -> $(writes_of "$p1"), path 2 $w2 -> $(writes_of "$p2")"
check "CPU 0's next write goes to path 2, the one after its cursor" \
	eval '[ "$(writes_of "$p2")" -gt "$w2" ] && [ "$(writes_of "$p1")" = "$w1" ]'
ktap_finish
