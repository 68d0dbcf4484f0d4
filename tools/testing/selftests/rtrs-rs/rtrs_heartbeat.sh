#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# A path whose link goes silent: our client and our server (under the C
# rnbd modules) with two paths; with no IO in flight, both guests drop every
# packet of their second link (netem loss 100%). The client sees path 1 go
# down within the heartbeat window (5 misses of 5 s), verified IO goes on
# over path 0 without an error, and the server closes its side too. When the
# link carries packets again, path 1 reconnects and IO flows on it again:
# through its reconnect file (make check), or by itself after the reconnect
# delay, 30 s (soak/, RECONNECT=delay). The link stays silent until the
# client has given up on the server's answer to its disconnect and
# destroyed those connections; a later close of the path must not wait for
# them still. Last (soak/, LONG=Y: it waits out another unanswered close,
# 30 s), a sysfs disconnect that waits for an unanswered close, by a writer
# with a signal pending, must sleep rather than spin.
#
# Why netem and not `ip link set eth1 down`: under rxe an administrative
# down and up of a link leaves it unable to set up connections again (the
# client's connection request is never answered), for the C modules as for
# ours, so nothing could reconnect. netem makes the link silent without
# telling anybody, which is what heartbeats are for.
. "$(dirname "$0")/lib.sh"

sess=rs-hb
ccls=/sys/class/rtrs-client
p0=ip:$CLIENT_IP0@ip:$SERVER_IP0
p1=ip:$CLIENT_IP1@ip:$SERVER_IP1
ktap_plan $([ "${LONG:-N}" = Y ] && echo 18 || echo 15)

cleanup() {
	wait
	link_silence eth1 off
	on_server 'link_silence eth1 off'
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	unload_rnbd_rtrs
	on_server 'unload_rnbd_rtrs; rmmod null_blk 2>/dev/null; true'
}
trap cleanup EXIT

state_is() { [ "$(cat "$ccls/$sess/paths/$1/state" 2>/dev/null)" = "$2" ]; }
writes_of() { set -- $(cat "$ccls/$sess/paths/$1/stats/rdma"); echo "$3"; }
rxe_up || bail "rxe did not come up"
on_server srv_stack_load rtrs || bail "cannot load our server stack"
clt_stack_load rtrs || bail "cannot load our client stack"
echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0" \
	>/sys/class/rnbd-client/ctl/map_device || bail "map_device failed"
wait_for 60 test -b /dev/rnbd0 && wait_for 30 eval 'state_is "$p0" connected && state_is "$p1" connected' ||
	bail "the two paths did not come up"
echo round-robin >"$ccls/$sess/mpath_policy"

# Both paths carry IO; then, with none in flight, link 1 goes silent. IO in
# flight would end the path within a second on the client's silence probe
# (silence_ms), before any heartbeat was missed; an idle path has only the
# heartbeats to tell.
w1=$(writes_of "$p1")
check "verified IO uses both paths" eval 'fio_verify /dev/rnbd0 --rw=randwrite --bs=4k --iodepth=16 --size=4M &&
	[ "$(writes_of "$p1")" -gt "$w1" ]'
kmsg_mark hb-silent
check "link 1 goes silent, no IO in flight" eval 'link_silence eth1 on && on_server "link_silence eth1 on"'
t0=$SECONDS
check "client: path 1 goes down within the heartbeat window" wait_for 60 state_is "$p1" disconnected
diag "path 1 down after $((SECONDS - t0)) s: $(kmsg_since hb-silent | grep -m1 -o 'rtrs_client: .*')"
check "client: path 0 stays connected" state_is "$p0" connected
check "verified IO during the silence, without an error" \
	fio_verify /dev/rnbd0 --rw=randwrite --bs=4k --iodepth=16 --size=4M --offset=64M
check "server: path 1 leaves sysfs" \
	on_server "wait_for 60 eval '! test -e /sys/class/rtrs-server/$sess/paths/$p1'"
check "server: path 0 is still there" on_server "test -d /sys/class/rtrs-server/$sess/paths/$p0"
# The client's disconnect of path 1 goes unanswered: it gives up waiting
# for the server (30 s for the disconnect events) and destroys those
# connections, which the link stays silent for.
p1_conns_gone() { [ -z "$(cm_id_states "$SERVER_IP1")" ]; }
check "client: path 1's connections are destroyed, their disconnect unanswered" \
	eval 'wait_for 120 p1_conns_gone && kmsg_since hb-silent | grep "not disconnected after"'
check "link 1 carries packets again" eval 'link_silence eth1 off && on_server "link_silence eth1 off"'
t0=$SECONDS
if [ "${RECONNECT:-sysfs}" = delay ]; then
	check "client: path 1 reconnects by itself" wait_for 150 state_is "$p1" connected
else
	check "client: path 1 reconnects through sysfs once its link is back" \
		wait_for 150 reconnect_path "$ccls/$sess/paths/$p1"
fi
diag "path 1 up after $((SECONDS - t0)) s; reconnects: $(cat "$ccls/$sess/paths/$p1/stats/reconnects")"
w1=$(writes_of "$p1")
check "IO verifies and uses path 1 again" eval 'fio_verify /dev/rnbd0 --rw=randwrite --bs=8k --iodepth=16 --size=4M --offset=256M &&
	[ "$(writes_of "$p1")" -gt "$w1" ]'
# A later close of path 1 is answered, and waits for nothing the
# unanswered one left (C's client waits 30 s for it on each close).
kmsg_mark hb-close
check "a sysfs disconnect of path 1 waits for its own connections only" eval '
	echo 1 >"$ccls/$sess/paths/$p1/disconnect" && ! kmsg_since hb-close | grep "not disconnected after"'
check "path 1 reconnects through sysfs" eval 'echo 1 >"$ccls/$sess/paths/$p1/reconnect" && state_is "$p1" connected'
# A close that waits (the link silent: its disconnect goes unanswered for
# 30 s), written by a process with a signal pending: the writer sleeps, as
# C's flush_work() does, and does not spin on the wait a signal ends.
signalled_close() {
	local writer cpu t
	check "link 1 goes silent again" eval 'link_silence eth1 on && on_server "link_silence eth1 on"'
	( trap 'true' USR1; echo 1 >"$ccls/$sess/paths/$p1/disconnect" ) &
	writer=$!
	sleep 2
	kill -USR1 $writer
	cpu=0
	while kill -0 $writer 2>/dev/null; do
		# utime + stime of the writer, in clock ticks (fields 14 and 15).
		t=$(awk '{ print $14 + $15 }' /proc/$writer/stat 2>/dev/null) && cpu=${t:-$cpu}
		sleep 1
	done
	wait $writer
	diag "the writer of disconnect used $cpu ticks of CPU"
	check "a signalled writer of disconnect sleeps while the close waits (CPU: $cpu ticks)" [ "$cpu" -lt 100 ]
	check "the server closes path 1; with the link back, it reconnects through sysfs" eval '
		on_server "wait_for 60 eval \"! test -e /sys/class/rtrs-server/$sess/paths/$p1\"" &&
		link_silence eth1 off && on_server "link_silence eth1 off" &&
		echo 1 >"$ccls/$sess/paths/$p1/reconnect" && state_is "$p1" connected'
}
[ "${LONG:-N}" = Y ] && signalled_close
check "unmap_device" eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 eval "! test -e $ccls/$sess"'
check "our modules unload on both sides" eval 'rmmod rnbd_client && rmmod rtrs_client && rmmod rtrs_core &&
	on_server "wait_for 30 eval \"rmmod rnbd_server && rmmod rtrs_server && rmmod rtrs_core\""'
ktap_finish
