#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# The trace events of C's modules, from ours: rtrs_clt (3 events),
# rtrs_srv:send_io_resp_imm and rnbd_srv (6 events). Their format files
# (fields and print format, what perf and trace-cmd read) are those of the
# C modules byte for byte, and the same flow fires the same events with
# both: map a device, write and read it, disconnect the path from the
# server (the client's error recovery and reconnect), reconnect it from the
# client (close, reconnect), unmap. Each event's line says what C's says of
# the same IO: the session, the state, WRITE or READ.
#
# After the server's disconnect the client's reconnect work runs after the
# reconnect delay, 30 s (soak/: RECONNECT=delay), or at once when the
# path's reconnect file is written once the client is recovering (make
# check): the same work, and the same events.
. "$(dirname "$0")/lib.sh"

T=/sys/kernel/tracing
ktap_plan 14

cleanup() {
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	echo 0 >$T/events/enable 2>/dev/null
	on_server "echo 0 >$T/events/enable 2>/dev/null; true"
	rnbd_cleanup
}
trap cleanup EXIT

tracefs='grep -q " /sys/kernel/tracing " /proc/mounts || mount -t tracefs nodev /sys/kernel/tracing'
# formats <system...>: every event's format file, without its ID (numbered
# at load).
formats() {
	local s f
	for s in "$@"; do
		for f in $T/events/$s/*/format; do
			echo "== $f"
			grep -v '^ID:' "$f"
		done
	done
}
# events: the names of the events in the trace buffer, one per line (the
# word after the time stamp).
events() {
	awk '!/^#/ { for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {
		sub(":$", "", $(i + 1)); print $(i + 1); break } }' $T/trace | sort -u
}
# line <trace file> <event>: the lines of <event>, from its name on.
line() {
	awk -v ev="$2:" '{ for (i = 1; i <= NF; i++) if ($i == ev) {
		s = $i; for (j = i + 1; j <= NF; j++) s = s " " $j; print s; break } }' "$1"
}

eval "$tracefs" || bail "no tracefs"
on_server "$tracefs" || bail "server: no tracefs"
rxe_up || bail "rxe did not come up"

# step <what> <command...>: a step of the flow; says which one failed.
step() {
	local what=$1
	shift
	"$@" || { diag "$stack: failed: $what"; return 1; }
}
flow() { # <stack>: the flow, with every event of the three systems on
	local stack=$1 sess=trace-$1 p r
	on_server "srv_stack_load $stack" || return 1
	clt_stack_load "$stack" || return 1
	diag "$stack: $(stack_files | paste -sd, -)"
	formats rtrs_clt >/tmp/fmt-clt-$stack
	on_server "$(declare -f formats); T=$T; formats rtrs_srv rnbd_srv" \
		>/tmp/fmt-srv-$stack
	echo 1 >$T/events/rtrs_clt/enable && echo >$T/trace || return 1
	on_server "echo 1 >$T/events/rtrs_srv/enable && echo 1 >$T/events/rnbd_srv/enable &&
		echo >$T/trace" || return 1
	step map eval "echo 'sessname=$sess path=ip:$SERVER_IP0 device_path=/dev/nullb0' \
		>/sys/class/rnbd-client/ctl/map_device && wait_for 60 test -b /dev/rnbd0" || return 1
	dd if=/dev/urandom of=/tmp/trace.data bs=4k count=8 2>/dev/null
	step "write and read back" eval 'dd if=/tmp/trace.data of=/dev/rnbd0 bs=4k count=8 oflag=direct 2>/dev/null &&
		cmp <(dd if=/dev/rnbd0 bs=4k count=8 iflag=direct 2>/dev/null) /tmp/trace.data' || return 1
	p=$(ls /sys/class/rtrs-client/$sess/paths/)
	state() { cat /sys/class/rtrs-client/$sess/paths/$p/state; }
	# Reconnects done: the first number of stats/reconnects.
	ok_reconnects() { read -r r _ </sys/class/rtrs-client/$sess/paths/$p/stats/reconnects; echo "$r"; }
	# The device is back once RNBD has remapped it: a read succeeds.
	readable() { wait_for 30 eval 'dd if=/dev/rnbd0 of=/dev/null bs=4k count=8 iflag=direct 2>/dev/null'; }
	# The server takes the path down: the client recovers and reconnects.
	r=$(ok_reconnects)
	step "disconnect from the server" on_server "echo 1 >/sys/class/rtrs-server/$sess/paths/*/disconnect" || return 1
	if [ "${RECONNECT:-sysfs}" = delay ]; then
		step "reconnected" wait_for 90 eval '[ "$(ok_reconnects)" -gt "$r" ] && [ "$(state)" = connected ]'
	else
		step "reconnected through sysfs" wait_for 90 eval '
			reconnect_path /sys/class/rtrs-client/$sess/paths/$p && [ "$(ok_reconnects)" -gt "$r" ]'
	fi || return 1
	step "readable" readable || return 1
	# The client reconnects it: the reconnect work, at once.
	r=$(ok_reconnects)
	step "reconnect from sysfs" eval "echo 1 >/sys/class/rtrs-client/$sess/paths/$p/reconnect" || return 1
	step "reconnected again" wait_for 60 eval '[ "$(ok_reconnects)" -gt "$r" ] && [ "$(state)" = connected ]' || return 1
	step "readable again" readable || return 1
	step unmap eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 test ! -e /dev/rnbd0' || return 1
	wait_for 30 on_server "! ls /sys/class/rtrs-server/$sess >/dev/null 2>&1"
	events >/tmp/ev-clt-$stack
	cp $T/trace /tmp/trace-clt-$stack
	on_server "$(declare -f events); T=$T; events" >/tmp/ev-srv-$stack
	on_server "cat $T/trace" >/tmp/trace-srv-$stack
	echo 0 >$T/events/enable
	on_server "echo 0 >$T/events/enable"
	rnbd_cleanup
}

check "c: map, IO, disconnect, reconnect, unmap with the events on" flow c
check "ours: the same" flow rnbd
check "the events are there with both (rtrs_clt: 3, rtrs_srv: 1, rnbd_srv: 6)" eval '
	[ "$(grep -c "^== " /tmp/fmt-clt-c)" = 3 ] && [ "$(grep -c "^== " /tmp/fmt-srv-c)" = 7 ] &&
	[ "$(grep -c "^== " /tmp/fmt-clt-rnbd)" = 3 ] && [ "$(grep -c "^== " /tmp/fmt-srv-rnbd)" = 7 ]'
check "rtrs_clt: the format files are C'\''s" diff /tmp/fmt-clt-c /tmp/fmt-clt-rnbd
check "rtrs_srv, rnbd_srv: the format files are C'\''s" diff /tmp/fmt-srv-c /tmp/fmt-srv-rnbd
diag "client events, C: $(paste -sd, /tmp/ev-clt-c); ours: $(paste -sd, /tmp/ev-clt-rnbd)"
diag "server events, C: $(paste -sd, /tmp/ev-srv-c); ours: $(paste -sd, /tmp/ev-srv-rnbd)"
check "the client fires C's events in the flow" eval '
	[ "$(paste -sd, /tmp/ev-clt-c)" = rtrs_clt_close_conns,rtrs_clt_reconnect_work,rtrs_rdma_error_recovery ] &&
	diff /tmp/ev-clt-c /tmp/ev-clt-rnbd'
check "the server fires C's events in the flow" eval '
	[ "$(paste -sd, /tmp/ev-srv-c)" = create_sess,destroy_sess,process_msg_close,process_msg_open,process_msg_sess_info,process_rdma,send_io_resp_imm ] &&
	diff /tmp/ev-srv-c /tmp/ev-srv-rnbd'
# One line of each kind, C's and ours, for the log.
for ev in rtrs_rdma_error_recovery rtrs_clt_reconnect_work rtrs_clt_close_conns; do
	diag "C:    $(line /tmp/trace-clt-c $ev | head -1)"
	diag "ours: $(line /tmp/trace-clt-rnbd $ev | head -1)"
done
for ev in process_rdma send_io_resp_imm process_msg_open create_sess; do
	diag "C:    $(line /tmp/trace-srv-c $ev | head -1)"
	diag "ours: $(line /tmp/trace-srv-rnbd $ev | head -1)"
done
# The fields say the same of the same flow.
check "rtrs_rdma_error_recovery: the path, CONNECTED, as C" eval '
	[ -n "$(line /tmp/trace-clt-rnbd rtrs_rdma_error_recovery | grep "sess='\''ip:.*@ip:$SERVER_IP0'\'' state=CONNECTED")" ] &&
	[ -n "$(line /tmp/trace-clt-c rtrs_rdma_error_recovery | grep "state=CONNECTED")" ]'
check "rtrs_clt_reconnect_work: RECONNECTING, attempts counted" eval '
	line /tmp/trace-clt-rnbd rtrs_clt_reconnect_work | grep -q "state=RECONNECTING attempts=.[0-9]*. max-attempts=.-1."'
# both <event> <regex>: a line of <event> matches <regex>, with C's modules
# and with ours.
both() {
	local f
	for f in /tmp/trace-srv-c /tmp/trace-srv-rnbd; do
		line $f "$1" | grep -Eq "$2" || { diag "$f: no $1 line matches '$2'"; return 1; }
	done
}
diag "C:    $(line /tmp/trace-srv-c process_rdma | grep -m1 'type: WRITE')"
diag "ours: $(line /tmp/trace-srv-rnbd process_rdma | grep -m1 'type: WRITE')"
check "process_rdma: a 4 KiB WRITE at sector 56 and a READ at 0, as C" eval '
	both process_rdma "type: WRITE, ver: 2, devid: 0, sector: 56, bsize: 4096, flags: [A-Z|]*WRITE" &&
	both process_rdma "type: READ, ver: 2, devid: 0, sector: 0, bsize: 4096, flags: READ"'
check "send_io_resp_imm: the writes answered on the connected path, as C" \
	both send_io_resp_imm "state=.CONNECTED. dir=WRITE err=.0."
check "process_msg_open: the device path, read-write, as C" \
	both process_msg_open "path=./dev/nullb0. access_mode=RW"
check "create_sess, destroy_sess: the session and its queue depth, as C" eval '
	both create_sess "sessname: trace-[a-z]+ qdepth: 512" &&
	both destroy_sess "sessname: trace-[a-z]+ qdepth: 512"'
check "dmesg is clean on both sides" eval '! dmesg_bad && ! on_server dmesg_bad'
ktap_finish
