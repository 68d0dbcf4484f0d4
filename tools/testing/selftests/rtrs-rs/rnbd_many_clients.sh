#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# topology=servers=1 clients=3 links=2 smp=1
# One server and three client machines, each client with two links to the
# server: client and client2 run our rnbd on our rtrs, client3 C's. Each
# client maps a device of its own (nullb0, nullb1, nullb2) over its two
# links, and verified fio runs on all three at once. While it runs,
# client2's paths are disconnected and reconnected one after the other, and
# then client3's machine dies (its QEMU killed, as in a power cut). The
# others' IO goes on unharmed: their fio verifies, their paths never leave
# connected. The server lists exactly the live sessions throughout; it
# notices the dead client within its heartbeat window and frees its session
# and its device, and client3, booted again, maps the same device. The
# server runs our stack (soak/rnbd_many_clients.sh: ours, then C's).
#
# Knobs, from the environment (scripts/run-tests --env): IO_SECONDS, how
# long the IO runs after the faults (10); IO_MIB, what each verified fio
# run of the clients writes (2; soak/: 4); SERVER_STACKS, the server's
# stacks in turn ("rnbd"; "rnbd c" for ours, then C's).
. "$(dirname "$0")/lib.sh"

IO_SECONDS=${IO_SECONDS:-10}
IO_MIB=${IO_MIB:-2}
read -ra server_stacks <<<"${SERVER_STACKS:-rnbd}"
clients=(client client2 client3)
stacks=(rnbd rnbd c)
ktap_plan $((12 * ${#server_stacks[@]}))

# at <client> <script>: <script> on that client guest (the tests run in
# the first), with this library sourced; killed after AT_TIMEOUT seconds
# (300) on another guest.
at() {
	local g=$1
	shift
	if [ "$g" = client ]; then
		(eval "$*")
	else
		on_guest -t "${AT_TIMEOUT:-300}" "$g" "$*"
	fi
}

cleanup() {
	local g AT_TIMEOUT=30
	for g in "${clients[@]}"; do
		at "$g" 'touch /tmp/mc-stop
			for d in /sys/block/rnbd*/rnbd/unmap_device; do [ -e "$d" ] && echo force >"$d"; done
			unload_rnbd_rtrs; true' >/dev/null 2>&1
	done
	on_server 'unload_rnbd_rtrs; rmmod null_blk 2>/dev/null; true'
}
trap cleanup EXIT

sess() { echo "mc-$1"; }
# The map line of client <i>: its own device, over both of its links.
map_line() {
	local g=${clients[$1]}
	echo "sessname=$(sess "$g") path=ip:$(link_ip "$g" server 0)@ip:$(link_ip server "$g" 0)" \
		"path=ip:$(link_ip "$g" server 1)@ip:$(link_ip server "$g" 1) device_path=/dev/nullb$1"
}
# map <i>: client <i> loads its stack and maps its device; both paths up.
# The server answers on both links first: a first connection right after a
# boot may time out otherwise (lib.sh's rxe_up).
map() {
	local g=${clients[$1]} s
	s=$(sess "$g")
	at "$g" "rxe_up_local && wait_for 30 ping -c 1 -W 1 $(link_ip server "$g" 0) >/dev/null &&
		wait_for 30 ping -c 1 -W 1 $(link_ip server "$g" 1) >/dev/null && clt_stack_load ${stacks[$1]} &&
		echo '$(map_line "$1")' >/sys/class/rnbd-client/ctl/map_device &&
		wait_for 60 test -b /dev/rnbd0 &&
		wait_for 60 eval '[ \"\$(cat /sys/class/rtrs-client/$s/paths/*/state | grep -c ^connected)\" = 2 ]'"
}
# fio_start <i>: verified runs of IO_MIB of 4k random writes at QD16 on
# client <i>'s device, back to back (lib.sh's fio_loop), in the background
# there until fio_ok <i>; fio_running <i>: the loop runs; fio_clean <i>:
# it runs and no run so far failed; fio_stop <i>: the loop is told to end
# after its run; fio_ok <i>: stopped, it ran and every run verified.
fio_start() {
	at "${clients[$1]}" "setsid bash -c '. $SELFTESTS/lib.sh; echo \$\$ >/tmp/mc-loop.pid;
		fio_loop mc $IO_MIB /dev/rnbd0' </dev/null >/dev/null 2>&1 &"
}
fio_running() { at "${clients[$1]}" 'kill -0 "$(cat /tmp/mc-loop.pid)" 2>/dev/null'; }
fio_stop() { at "${clients[$1]}" 'touch /tmp/mc-stop'; }
fio_clean() {
	at "${clients[$1]}" 'kill -0 "$(cat /tmp/mc-loop.pid)" 2>/dev/null &&
		! { test -s /tmp/mc-fails && sed "s/^/# /" /tmp/mc-fails; }'
}
fio_ok() {
	at "${clients[$1]}" 'touch /tmp/mc-stop && wait_for 300 eval "! kill -0 \$(cat /tmp/mc-loop.pid) 2>/dev/null" &&
		echo "# $(cat /tmp/mc-runs 2>/dev/null) runs, longest IO $(sort -n /tmp/mc-max | tail -1) ms" &&
		[ "$(cat /tmp/mc-runs 2>/dev/null || echo 0)" -gt 0 ] &&
		! { test -s /tmp/mc-fails && sed "s/^/# /" /tmp/mc-fails; }'
}
# reconnects <i>: the reconnects of client <i>'s paths, successful and
# failed (stats/reconnects), summed.
reconnects() {
	at "${clients[$1]}" "cat /sys/class/rtrs-client/$(sess "${clients[$1]}")/paths/*/stats/reconnects |
		awk '{s += \$1 + \$2} END {print s}'"
}
# The server's sessions, sorted, on one line.
srv_sessions() { on_server 'ls /sys/class/rtrs-server 2>/dev/null | sort | xargs'; }
sessions_are() { [ "$(srv_sessions)" = "$*" ]; }
all3="$(sess client) $(sess client2) $(sess client3)"
# flap <path index>: client2 disconnects and reconnects one of its paths.
flap() {
	at client2 "p=\$(ls -d /sys/class/rtrs-client/$(sess client2)/paths/* | sed -n $(($1 + 1))p) &&
		echo 1 >\$p/disconnect && wait_for 60 eval '[ \"\$(cat \$p/state)\" != connected ]' &&
		echo 1 >\$p/reconnect && wait_for 120 eval '[ \"\$(cat \$p/state)\" = connected ]'"
}

# unmap_all: every client unmaps its device and unloads; the server then
# lists no session.
unmap_all() {
	local g
	for g in "${clients[@]}"; do
		at "$g" "echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 test ! -e /dev/rnbd0 &&
			unload_rnbd_rtrs" || return 1
	done
	wait_for 60 sessions_are ""
}

rxe_up_local && on_server 'rxe_up_local' || bail "rxe did not come up"
for g in client2 client3; do
	wait_for 60 at "$g" 'ping -c 1 -W 1 '"$(link_ip server "$g" 1)"' >/dev/null' ||
		bail "$g cannot reach the server"
done

for srv in "${server_stacks[@]}"; do
	diag "--- server stack: $srv"
	on_server "modprobe null_blk nr_devices=3 gb=1 memory_backed=1 && srv_stack_load $srv" ||
		bail "server: cannot load $srv"
	check "server $srv: the three clients map their devices over two paths each" \
		eval 'map 0 && map 1 && map 2'
	check "server $srv: client and client2 run our rnbd, client3 C's" \
		eval 'at client mod_is_ours rnbd_client && at client2 mod_is_ours rnbd_client &&
		at client3 "mod_loaded rnbd_client && ! mod_is_ours rnbd_client"'
	check "server $srv: it lists the three sessions and their devices" eval 'sessions_are $all3 &&
		on_server "for i in 0 1 2; do ls /sys/class/rnbd-server/ctl/devices/nullb\$i/sessions; done | xargs" |
		grep -qx "$all3"'
	r0=$(reconnects 0)
	for i in 0 1 2; do fio_start $i; done
	wait_for 30 eval 'fio_running 0 && fio_running 1 && fio_running 2'
	check "server $srv: client2's paths disconnected and reconnected, one by one, under IO" \
		eval 'flap 0 && flap 1'
	check "server $srv: the other clients' fio ran on then, every run verified" \
		eval 'fio_clean 0 && fio_clean 2'
	host_request kill client3
	t0=$SECONDS
	check "server $srv: client3 dies under IO; the server frees its session within 60 s" \
		wait_for 60 sessions_are "$(sess client) $(sess client2)"
	diag "the server freed client3's session after $((SECONDS - t0)) s"
	# RTRS removes the session's directory before it tells RNBD.
	check "server $srv: and its device is no longer open by it" wait_for 30 \
		on_server '! test -e /sys/class/rnbd-server/ctl/devices/nullb2/sessions/'"$(sess client3)"
	sleep "$IO_SECONDS"
	# Both loops are told to stop before either is waited for: their last
	# runs end together.
	check "server $srv: fio of client and client2 ran on throughout, every run verified" \
		eval 'fio_running 0 && fio_running 1 && fio_stop 0 && fio_stop 1 && fio_ok 0 && fio_ok 1'
	check "server $srv: client's paths never left connected" eval '[ "$(reconnects 0)" = "$r0" ] &&
		[ "$(cat /sys/class/rtrs-client/$(sess client)/paths/*/state | grep -c ^connected)" = 2 ]'
	host_request start client3
	check "server $srv: client3, booted again, maps the same device and verifies IO" eval '
		wait_for 300 eval "AT_TIMEOUT=5 at client3 true" && map 2 &&
		at client3 "fio_verify /dev/rnbd0 --rw=randrw --bs=4k --iodepth=16 --size=4M"'
	check "server $srv: every client unmaps; the server lists no session" unmap_all
	check "server $srv: no kernel warning on any guest" eval '! dmesg_bad &&
		! on_server dmesg_bad && ! at client2 dmesg_bad && ! at client3 dmesg_bad'
	on_server 'unload_rnbd_rtrs; rmmod null_blk' || bail "server: cannot unload"
done
ktap_finish
