# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Helpers for the rtrs-rs selftests, sourced by every test. Tests run in the
# client guest; on_server runs commands in the server guest, which sources
# this file too, so every helper here is available on both sides.
#
# Output is KTAP (Documentation/dev-tools/ktap.rst); the exit status follows
# kselftest: 0 pass, 1 fail, 4 skip.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin

# The tests load and unload modules, create rxe devices and talk to the
# server guest: they run in a guest of the VM pair alone (rtrs.role= on its
# kernel command line, scripts/rtrsvm.py). Anywhere else, as under kselftest's
# run_tests on a host, each is skipped before it does anything.
CMDLINE=" $(cat /proc/cmdline 2>/dev/null) "
case $CMDLINE in
*" rtrs.role="*) ;;
*)
	echo "1..0 # SKIP not in a guest of the rtrs-rs VM pair (make check runs them there)"
	exit 4 # KSFT_SKIP
	;;
esac

SELFTESTS=/opt/rtrs-rs/selftests
MODDIR=/opt/rtrs-rs/modules

# rtrs.slowdown=N on the kernel command line (run-tests, on a KASAN kernel):
# the kernel runs N times slower or more. The tests' time bounds are N times
# their own there, and so are the waits of wait_for and on_guest. So is a
# server's answer to a heartbeat while it has IO: our client's silence
# probe fails a path that hears nothing for silence_ms with IO in flight,
# and would take a slow server for a silent link, so on such a kernel every
# load of our rtrs-client gets a window N times the module's default (read
# from the module once loaded, not repeated here). A test's own
# silence_ms, given on the command line, wins.
SLOWDOWN=
[[ $CMDLINE =~ \ rtrs\.slowdown=([0-9]+)\  ]] && SLOWDOWN=${BASH_REMATCH[1]}
insmod() {
	local p=/sys/module/rtrs_client/parameters/silence_ms
	command insmod "$@" || return
	if [ -n "$SLOWDOWN" ] && [ "${1##*/}" = rtrs-client.ko ] && [[ " ${*:2} " != *" silence_ms="* ]]; then
		echo $(($(cat $p) * SLOWDOWN)) >$p
	fi
}
SERVER_IP0=192.0.2.1
CLIENT_IP0=192.0.2.2
SERVER_IP1=198.51.100.1
CLIENT_IP1=198.51.100.2
KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

ktap_n=0
ktap_planned=0
ktap_failed=0
ktap_skipped=0

ktap_plan() { # <number of test cases>
	ktap_planned=$1
	rm -f "$MISMATCH_LOG"
	echo "KTAP version 1"
	echo "1..$1"
}

diag() { echo "# $*"; }

ok() {
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n $*"
}

fail() {
	ktap_n=$((ktap_n + 1))
	ktap_failed=$((ktap_failed + 1))
	echo "not ok $ktap_n $*"
}

skip() {
	ktap_n=$((ktap_n + 1))
	ktap_skipped=$((ktap_skipped + 1))
	echo "ok $ktap_n $* # SKIP"
}

# check <description> <command...>: one test case, passing if the command does.
# A test may set check_on_fail to a command that shows why a case failed.
check() {
	local desc=$1
	shift
	if "$@"; then
		ok "$desc"
	else
		${check_on_fail:+$check_on_fail}
		fail "$desc"
	fi
}

# still_running <pid>: the process <pid> has not ended (a zombie, ended and
# not yet reaped, has).
still_running() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# during_io <pid> <description> <command...>: one test case for a fault
# under IO: the command (the fault) succeeds, and the process <pid> (a
# background fio) is still running once it has, so the fault met IO in
# flight. IO that ended first, as on a fast host, would leave the cases
# after it ("the IO fails over") nothing to show: the case fails then.
during_io() {
	local pid=$1 desc=$2
	shift 2
	if ! "$@"; then
		${check_on_fail:+$check_on_fail}
		fail "$desc"
	elif ! still_running "$pid"; then
		diag "$desc: the IO had ended by then, so the fault met none: give it more to do"
		fail "$desc"
	else
		ok "$desc"
	fi
}

# Stop the test here: the remaining cases cannot run.
bail() {
	echo "Bail out! $*"
	_mismatches_seen
	exit $KSFT_FAIL
}

# Data mismatches: what a read gave back is not what was written. No test
# may excuse one (a rerun, an expected IO failure, a skip): each is logged
# in MISMATCH_LOG of the guest that saw it, on_guest brings the log of the
# guest it ran on back into the caller's, and ktap_finish fails the test
# if the client's holds any. data_mismatch <what>: logs one and prints it.
MISMATCH_LOG=/tmp/rtrs-rs-mismatches
data_mismatch() {
	echo "$(hostname): $*" >>"$MISMATCH_LOG"
	echo "# DATA MISMATCH: $*"
}
# _mismatches_seen: whether this run logged any mismatch, each printed.
_mismatches_seen() {
	[ -s "$MISMATCH_LOG" ] && sed 's/^/# data mismatch in this run: /' "$MISMATCH_LOG"
}
MISMATCH_MARK=RTRS-RS-MISMATCH
_mismatch_count() { cat "$MISMATCH_LOG" 2>/dev/null | wc -l; }
# on_guest_epilogue <status> <lines before>: the end of every script that
# on_guest runs: prints the mismatches logged since, marked, and returns
# the script's status.
on_guest_epilogue() {
	tail -n +$(($2 + 1)) "$MISMATCH_LOG" 2>/dev/null | sed "s/^/$MISMATCH_MARK /"
	return "$1"
}

# fio_status <fio output> <fio status>: 0 if fio succeeded, 2 if it read
# back data other than it wrote (a verify failure: fio ends the job with
# EILSEQ, err=84), 1 for any other failure (an IO error, a timeout). A
# mismatch is logged with data_mismatch.
fio_status() {
	local line
	[ "$2" = 0 ] && return 0
	line=$(grep -m1 -E '^verify: bad |: verify failed at |verify type mismatch|err= *84([^0-9]|$)' <<<"$1")
	if [ -n "$line" ] || grep -q '^3;[^;]*;[^;]*;[^;]*;84;' <<<"$1"; then
		data_mismatch "fio: ${line:-verify failed (EILSEQ)}"
		return 2
	fi
	return 1
}

# Exit with the kselftest status of the cases reported so far. A data
# mismatch anywhere in the run fails the test, whatever its case made of it.
ktap_finish() {
	_mismatches_seen && exit $KSFT_FAIL
	if [ "$ktap_n" != "$ktap_planned" ]; then
		diag "planned $ktap_planned test cases, ran $ktap_n"
		exit $KSFT_FAIL
	fi
	[ "$ktap_failed" = 0 ] || exit $KSFT_FAIL
	[ "$ktap_skipped" != "$ktap_n" ] || [ "$ktap_n" = 0 ] || exit $KSFT_SKIP
	exit $KSFT_PASS
}

# wait_for <seconds> <command...>: retry the command until it succeeds, with
# a growing pause (0.1 s to 1 s) between tries. Fails after <seconds>, times
# SLOWDOWN on a slow kernel: what a test waits for comes that much later.
wait_for() {
	local limit=$(($1 * ${SLOWDOWN:-1})) start=$SECONDS pause=0.1
	shift
	while ! "$@"; do
		((SECONDS - start < limit)) || return 1
		sleep $pause
		case $pause in 0.1) pause=0.2 ;; 0.2) pause=0.5 ;; *) pause=1 ;; esac
	done
}

# The peer channel: the rtrs.peer console port, served by the server's agent
# (scripts/guest/agent). One request at a time; a lock directory serialises
# callers from background jobs.
# _peer_lock <guest>: one request at a time on the channel to <guest>.
_peer_lock() {
	local holder dir=/tmp/peer-$1.lock
	while ! mkdir "$dir" 2>/dev/null; do
		holder=$(cat "$dir/pid" 2>/dev/null)
		if [ -n "$holder" ] && ! kill -0 "$holder" 2>/dev/null; then
			rm -rf "$dir"
			continue
		fi
		sleep 0.05
	done
	echo $BASHPID >"$dir/pid"
}

# on_guest [-t <seconds>] <guest> <script>: run <script> on guest <guest>
# (server, server2, client2, ...: scripts/rtrsvm.py names them) with this
# library sourced, print its output, return its status. Only the first
# client, where the tests run, has these channels. The script is killed
# after <seconds> (default 120) and then the status is 124; 255 means the
# guest did not answer at all (or there is no such guest).
on_guest() {
	local tmo=120 id script line rc=255 verb tag data g port wpid kpid wst out
	if [ "$1" = -t ]; then
		tmo=$2
		shift 2
	fi
	tmo=$((tmo * ${SLOWDOWN:-1}))
	g=$1
	shift
	port=$(cat "/run/rtrs-peer/$g" 2>/dev/null) || {
		echo "# on_guest: no channel to $g"
		return 255
	}
	id=$(cat /proc/sys/kernel/random/uuid)
	# The script's own status is kept; after it, the mismatches its guest
	# logged while it ran come back as marked lines (on_guest_epilogue).
	script=$(printf '. %s/lib.sh\n_mm=$(_mismatch_count)\n%s\non_guest_epilogue $? "$_mm"\n' \
		"$SELFTESTS" "$*" | base64 -w0)
	_peer_lock "$g"
	# A write blocks while the guest's QEMU is gone: it is bounded by a
	# killer forked before the port opens, so that it never holds the
	# port (which opens once at a time; busybox's timeout would leave a
	# watcher holding it). Nothing else forks while the port is open
	# but what is waited for. The killer waits in a builtin (a read of a
	# FIFO nobody writes), so that it has no child to leave behind, and
	# it is ended with SIGKILL: a bash subshell that a catchable signal
	# reaches before it has reset the traps it inherited runs the
	# caller's EXIT trap (bash 5.2), which is the test's cleanup. Its
	# output is not the caller's: in "$(on_guest ...)" the substitution
	# ends only when every holder of its pipe has.
	mkfifo "/tmp/peer-$g.lock/timer"
	(
		read -r -t "$tmo" _ <>"/tmp/peer-$g.lock/timer"
		kill -KILL "$(cat "/tmp/peer-$g.lock/wpid" 2>/dev/null)" 2>/dev/null
	) </dev/null >/dev/null 2>&1 &
	kpid=$!
	# Not a job of the caller's: bash would report its SIGKILL ("Killed").
	disown $kpid
	exec 7<>"$port"
	(printf 'RUN %s %s %s\n' "$id" "$tmo" "$script" >&7) &
	wpid=$!
	echo $wpid >"/tmp/peer-$g.lock/wpid"
	wait $wpid
	wst=$?
	kill -KILL $kpid 2>/dev/null
	if [ $wst != 0 ]; then
		exec 7>&-
		rm -rf "/tmp/peer-$g.lock"
		echo "# on_guest: $g does not take the request"
		return 255
	fi
	while IFS=' ' read -r -t $((tmo + 15)) verb tag data <&7; do
		[ "$tag" = "$id" ] || continue
		case "$verb" in
		OUT)
			out=$(printf %s "$data" | base64 -d; echo x)
			out=${out%x}
			if [[ $out == *"$MISMATCH_MARK"* ]]; then
				grep "^$MISMATCH_MARK" <<<"$out" | cut -d' ' -f2- | tee -a "$MISMATCH_LOG" |
					sed 's/^/# DATA MISMATCH: /'
				out=$(grep -v "^$MISMATCH_MARK" <<<"$out")$'\n'
			fi
			printf %s "$out"
			;;
		DONE)
			rc=$data
			break
			;;
		esac
	done
	exec 7>&-
	rm -rf "/tmp/peer-$g.lock"
	return "$rc"
}

# on_server [-t <seconds>] <script>: on_guest of the (first) server.
on_server() {
	if [ "$1" = -t ]; then
		on_guest -t "$2" server "${@:3}"
	else
		on_guest server "$@"
	fi
}

# The shape of the VMs (rtrs.topo): how many servers and clients, and how
# many links each client has to each server.
topo_servers() { cut -d, -f1 /run/rtrs-topo; }
topo_clients() { cut -d, -f2 /run/rtrs-topo; }
topo_links() { cut -d, -f3 /run/rtrs-topo; }
# topo_guests: every guest's name, servers first.
topo_guests() {
	local i
	echo server
	for ((i = 2; i <= $(topo_servers); i++)); do echo "server$i"; done
	echo client
	for ((i = 2; i <= $(topo_clients); i++)); do echo "client$i"; done
}
# _topo_index <name>: server3 -> 2, client -> 0.
_topo_index() { local n=${1#server}; n=${n#client}; echo $((${n:-1} - 1)); }
# link_ip [-6] <server> <client> <link>: the address of link <link>
# (0, 1, ...) between <server> and <client> on the side named first
# (link_ip server client2 0) or, with the names swapped, the client's
# (link_ip client2 server 0); as scripts/rtrsvm.py's link_addrs.
link_ip() {
	local v6= a=$1 b=$2 k=$3 s c p side i
	[ "$1" = -6 ] && { v6=1; a=$2 b=$3 k=$4; }
	case $a in server*) s=$a c=$b side=1 ;; *) s=$b c=$a side=2 ;; esac
	p=$(($(_topo_index "$s") * $(topo_clients) + $(_topo_index "$c")))
	if [ -n "$v6" ]; then
		# As the kernel writes it (%pI6c): the longest run of zeros is ::.
		if [ "$k" = 0 ]; then
			[ $p = 0 ] && echo "2001:db8::$side" || echo "2001:db8:$(printf %x $p)::$side"
		else
			echo "2001:db8:$(printf %x $p):$(printf %x "$k")::$side"
		fi
	elif [ $p = 0 ] && [ "$k" = 0 ]; then
		echo "192.0.2.$side"
	elif [ $p = 0 ] && [ "$k" = 1 ]; then
		echo "198.51.100.$side"
	else
		i=$((p * 4 + k - 2))
		echo "203.0.113.$((4 * i + side))"
	fi
}
# link_dev <guest> <peer> <link>: the netdev of link <link> toward <peer> on
# <guest> (NICs go by peer, then link).
link_dev() { echo "eth$(($(_topo_index "$2") * $(topo_links) + $3))"; }

# Soft RoCE on the links of this guest: rxe<i> on eth<i>, each added once
# and waited on until its port is ACTIVE.
rxe_port_active() { rdma link show "$1/1" 2>/dev/null | grep -q "state ACTIVE"; }

# eth_indexes: 0 1 ...: the indexes of this guest's link NICs.
eth_indexes() { ls /sys/class/net | sed -n 's/^eth\([0-9]*\)$/\1/p' | sort -n | xargs; }

rxe_up_local() {
	local i
	for i in $(eth_indexes); do
		rdma link show "rxe$i/1" >/dev/null 2>&1 ||
			rdma link add "rxe$i" type rxe netdev "eth$i" || return 1
		wait_for 30 rxe_port_active "rxe$i" || return 1
	done
}

# rxe_counters: the non-zero counters of both guests' rxe ports
# (retransmits, timeouts, sequence errors), as diagnostic lines.
rxe_counters_local() {
	local i
	for i in $(eth_indexes); do
		echo "rxe$i: $(rdma statistic show link "rxe$i/1" 2>&1 | tr ' ' '\n' |
			paste - - | awk '$2 ~ /^[0-9]+$/ && $2 != 0 { printf "%s=%s ", $1, $2 }')"
	done
}
rxe_counters() {
	rxe_counters_local | sed 's/^/# client /'
	on_server rxe_counters_local | sed 's/^/# server /'
}

# rxe_up: both guests, and both of the server's addresses answer: a first
# connection right after boot otherwise may time out (the C client's too).
rxe_up() {
	rxe_up_local && on_server rxe_up_local &&
		wait_for 30 ping -c 1 -W 1 "$SERVER_IP0" >/dev/null &&
		wait_for 30 ping -c 1 -W 1 "$SERVER_IP1" >/dev/null
}

# cm_id_states <ip>: the states of this guest's RDMA CM IDs whose
# destination is <ip>, one per line; nothing if there are none.
cm_id_states() {
	rdma resource show cm_id 2>/dev/null | grep -F "dst-addr $1:" |
		grep -o 'state [A-Z_]*' | cut -d' ' -f2
}

# link_silence <netdev> on|off: this guest drops every packet it would send
# on <netdev> (netem loss 100%), or stops doing so. Run it in both guests
# for a link that is silent both ways, without any port or link event.
link_silence() {
	if [ "$2" = on ]; then
		tc qdisc replace dev "$1" root netem loss 100%
	else
		_netem_off "$1"
	fi
}

# _netem_off <netdev>: no netem qdisc left on <netdev> (there may have been
# none); fails if one is.
_netem_off() {
	tc qdisc del dev "$1" root 2>/dev/null
	! tc qdisc show dev "$1" | grep -q netem
}

# link_delay <netdev> <ms>|off: this guest delays every packet it sends on
# <netdev> by <ms> (netem), or stops doing so.
link_delay() {
	if [ "$2" = off ]; then
		_netem_off "$1"
	else
		tc qdisc replace dev "$1" root netem delay "$2ms"
	fi
}

# add_path_cycle <session>: on a session mapped over link 0 alone, as an
# operator extends it: add_path of the server's link-1 address without a
# source, wait for it to connect, remove_path it, then add_path with the
# source, wait again, and remove it. Fails at the first step that does.
add_path_cycle() {
	local cls=/sys/class/rtrs-client/$1 p
	connected_to() {
		for p in "$cls"/paths/*@ip:"$SERVER_IP1"; do
			[ "$(cat "$p/state" 2>/dev/null)" = connected ] && return 0
		done
		return 1
	}
	gone() { ! ls -d "$cls"/paths/*@ip:"$SERVER_IP1" >/dev/null 2>&1; }
	echo "ip:$SERVER_IP1" >"$cls/add_path" && wait_for 60 connected_to &&
		echo 1 >"$(ls -d "$cls"/paths/*@ip:"$SERVER_IP1")/remove_path" && wait_for 30 gone &&
		echo "ip:$CLIENT_IP1@ip:$SERVER_IP1" >"$cls/add_path" && wait_for 60 connected_to &&
		echo 1 >"$cls/paths/ip:$CLIENT_IP1@ip:$SERVER_IP1/remove_path" && wait_for 30 gone
}

# Modules: the C ones live in /lib/modules (modprobe), ours in $MODDIR.
# paths_connected <session> <n>: the client's session has <n> paths, each
# connected (a session that is gone has none).
paths_connected() {
	local states
	states=$(cat /sys/class/rtrs-client/"$1"/paths/*/state 2>/dev/null)
	[ "$(grep -c . <<<"$states")" = "$2" ] && [ "$(grep -cx connected <<<"$states")" = "$2" ]
}

# reconnect_path <path dir>: the client's path
# (/sys/class/rtrs-client/<session>/paths/<path>) is connected, or a write
# of its reconnect file made it so: the write fails while the path is
# still closing, and else reconnects it at once, without the reconnect
# delay. For wait_for, where a case is about the path coming back, not
# about the delay.
# srv_writes <session> <path>: the writes the server took on a path of a
# session (its stats/rdma, as C's), <path> named client@server.
srv_writes() {
	on_server "set -- \$(cat /sys/class/rtrs-server/$1/paths/$2/stats/rdma); echo \$3"
}

# failed_over <session>: the requests the client's paths of <session> took
# over from a path that broke, all paths together (the last column of each
# one's stats/rdma, "failovered"). A fault "during IO" that moved none met
# no request in flight, and proved nothing of failover.
failed_over() {
	cat /sys/class/rtrs-client/"$1"/paths/*/stats/rdma 2>/dev/null | awk '{n += $6} END {print n + 0}'
}

reconnect_path() {
	[ "$(cat "$1/state" 2>/dev/null)" = connected ] || echo 1 >"$1/reconnect" 2>/dev/null
	[ "$(cat "$1/state" 2>/dev/null)" = connected ]
}

mod_loaded() { [ -d "/sys/module/$(echo "$1" | tr - _)" ]; }

# The rnbd and rtrs modules, C or ours, in the order they unload.
RNBD_RTRS_MODULES="rnbd_client rnbd_server rtrs_client rtrs_server rtrs_core"

# The rnbd/rtrs modules loaded here, on one line.
rnbd_rtrs_loaded() {
	local m left=
	for m in $RNBD_RTRS_MODULES; do
		mod_loaded $m && left="$left $m"
	done
	echo "${left# }"
}

# One rmmod of each rnbd/rtrs module loaded here, in dependency order,
# whatever it answers.
_rmmod_rnbd_rtrs() {
	local m
	for m in $RNBD_RTRS_MODULES; do
		mod_loaded $m && rmmod $m 2>/dev/null
	done
	true
}

# unload_rnbd_rtrs [-w <seconds>]: unloads whatever rnbd/rtrs modules, C or
# ours, are loaded here; with -w, tries again for up to <seconds> while one
# is still loaded (a module stays busy for a moment after its last user:
# a device just closed, a session just gone). Fails, with a diagnostic on
# stderr naming them, if any is still loaded: a stack loaded next would
# run on them (modprobe of a loaded name succeeds). A cleanup that must go
# on regardless ends its line with `; true`.
unload_rnbd_rtrs() {
	local left
	if [ "$1" = -w ]; then
		wait_for "$2" eval '_rmmod_rnbd_rtrs; [ -z "$(rnbd_rtrs_loaded)" ]'
	else
		_rmmod_rnbd_rtrs
	fi
	left=$(rnbd_rtrs_loaded)
	[ -z "$left" ] && return 0
	echo "# unload_rnbd_rtrs: still loaded on the $(hostname): $left" >&2
	return 1
}

# The path of the C module <name> of the running kernel.
c_module() { modinfo -n "$1"; }

# NVMe-oF over RDMA, the kernel's, for comparisons (scripts/bench,
# scripts/io-count). Server: nvmet_export <address> exports /dev/nullb0
# (which must exist) as subsystem rtrs-bench on <address>:4420;
# nvmet_unexport undoes it. Client: nvme_rdma_connect <address> connects
# and waits for /dev/nvme0n1; nvme_rdma_disconnect undoes it.
NVMET=/sys/kernel/config/nvmet
NVME_NQN=rtrs-bench
nvmet_export() {
	local s=$NVMET/subsystems/$NVME_NQN
	modprobe nvmet-rdma && mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" && echo -n /dev/nullb0 >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/enable" && mkdir "$NVMET/ports/1" &&
		echo rdma >"$NVMET/ports/1/addr_trtype" && echo ipv4 >"$NVMET/ports/1/addr_adrfam" &&
		echo "$1" >"$NVMET/ports/1/addr_traddr" && echo 4420 >"$NVMET/ports/1/addr_trsvcid" &&
		ln -s "$s" "$NVMET/ports/1/subsystems/$NVME_NQN"
}
nvmet_unexport() {
	local s=$NVMET/subsystems/$NVME_NQN
	rm -f "$NVMET/ports/1/subsystems/$NVME_NQN"
	rmdir "$NVMET/ports/1" 2>/dev/null
	echo 0 >"$s/namespaces/1/enable" 2>/dev/null
	rmdir "$s/namespaces/1" "$s" 2>/dev/null
	rmmod nvmet_rdma nvmet 2>/dev/null
	return 0
}
nvme_rdma_connect() {
	modprobe nvme-rdma &&
		echo "transport=rdma,traddr=$1,trsvcid=4420,nqn=$NVME_NQN" >/dev/nvme-fabrics &&
		wait_for 60 test -b /dev/nvme0n1
}
nvme_rdma_disconnect() {
	local c
	for c in /sys/class/nvme/nvme*; do [ -e "$c/delete_controller" ] && echo 1 >"$c/delete_controller"; done
	wait_for 30 eval '! test -e /dev/nvme0n1'
	rmmod nvme_rdma nvme_fabrics 2>/dev/null
	return 0
}

# Messages that mean the kernel is unhappy, since the runner's marker of
# the running test (what earlier tests left in the log, such as the
# runner's own deliberate warning, is theirs); the runner also scans the
# consoles for them after every test. A guest booted during the test has
# no marker: its boot is judged too, but for a debug kernel's word that it
# checks RCU with lockdep.
dmesg_bad() {
	dmesg | tac | sed '/rtrs-rs: selftest .*: begin$/q' |
		grep -E 'WARNING:|BUG:|Oops|KASAN|lockdep|Call Trace' | grep -v 'RCU lockdep checking is enabled\.'
}

# Kernel log since a marker: kmsg_mark <tag> writes one, kmsg_since <tag>
# prints what came after the last one.
kmsg_mark() { echo "rtrs-rs: mark $1" >/dev/kmsg; }
kmsg_since() { dmesg | sed -n "/rtrs-rs: mark $1\$/,\$p"; }

# RNBD stacks, so that one test body runs on every pairing of C and Rust.
# A stack names the RNBD and the RTRS it runs on:
#   c        the C rnbd on the C rtrs
#   rtrs     the C rnbd on our rtrs (and rtrs-core)
#   rnbd     our rnbd on our rtrs
#   rnbd-c   our rnbd on the C rtrs
# _stack_load <client|server> <stack> [rtrs params]: loads it, after unloading
# whatever rnbd/rtrs modules are loaded, and fails unless the modules then
# loaded are the stack's (stack_is): a module left over, or one that
# modprobe took from elsewhere, would make a case about one stack run on
# another.
_stack_load() {
	local side=$1 stack=$2
	shift 2
	case $stack in
	c | rtrs | rnbd | rnbd-c) ;;
	*) echo "# _stack_load: no stack $stack" >&2; return 1 ;;
	esac
	unload_rnbd_rtrs -w 10 || return 1
	case $stack in
	c) modprobe "rtrs-$side" "$@" && modprobe "rnbd-$side" ;;
	rtrs) insmod "$MODDIR/rtrs-core.ko" && insmod "$MODDIR/rtrs-$side.ko" "$@" &&
		insmod "$(c_module "rnbd-$side")" ;;
	rnbd) insmod "$MODDIR/rtrs-core.ko" && insmod "$MODDIR/rtrs-$side.ko" "$@" &&
		insmod "$MODDIR/rnbd-$side.ko" ;;
	rnbd-c) modprobe "rtrs-$side" "$@" && insmod "$MODDIR/rnbd-$side.ko" ;;
	esac || return 1
	stack_is "$side" "$stack"
}

# srv_stack_load <stack> [rtrs-server params]: on the server guest, exports
# a memory-backed /dev/nullb0 (1 GiB) over RNBD with <stack>.
srv_stack_load() {
	mod_loaded null_blk || modprobe null_blk nr_devices=1 gb=1 memory_backed=1 || return 1
	_stack_load server "$@"
}

# clt_stack_load <stack>: the client side, as above.
clt_stack_load() { _stack_load client "$@"; }

# The end of an RNBD test, whatever state it left: force-unmap every rnbd
# device, unload the stacks on both sides and the server's null_blk.
rnbd_cleanup() {
	local d
	for d in /sys/block/rnbd*/rnbd/unmap_device; do
		[ -e "$d" ] && echo force >"$d"
	done
	unload_rnbd_rtrs -w 30
	on_server 'unload_rnbd_rtrs -w 30; rmmod null_blk 2>/dev/null; true'
}

# rnbd_unmap_all [<seconds>]: unmaps every rnbd device normally; fails if
# a write is refused or a /dev/rnbd* node is left after <seconds> (30).
rnbd_unmap_all() {
	local d
	for d in /sys/block/rnbd*/rnbd/unmap_device; do
		[ -e "$d" ] && { echo normal >"$d" || return 1; }
	done
	wait_for "${1:-30}" eval '! ls /dev/rnbd* >/dev/null 2>&1'
}

# Whether the loaded module <name> is ours: out-of-tree modules carry the
# O taint flag; the in-tree C ones do not. (modinfo resolves a name through
# modules.dep, so it would name the C file whichever is loaded.)
mod_is_ours() { grep -q O "/sys/module/$(echo "$1" | tr - _)/taint" 2>/dev/null; }

# modules_are <module>=<c|ours|none>...: each module is loaded from the
# kernel's tree (c), is ours (ours), or is not loaded (none). Prints a
# diagnostic on stderr for each that is not as said, and fails then.
modules_are() {
	local a m want got rc=0
	for a in "$@"; do
		m=${a%%=*} want=${a#*=}
		if ! mod_loaded "$m"; then
			got=none
		elif mod_is_ours "$m"; then
			got=ours
		else
			got=c
		fi
		[ "$got" = "$want" ] && continue
		echo "# $(hostname): $m is $got, not $want" >&2
		rc=1
	done
	return $rc
}

# stack_is <client|server> <stack>: the rtrs-core, rtrs-<side> and
# rnbd-<side> loaded here are those of <stack> (see _stack_load).
stack_is() {
	local s=$1
	case $2 in
	c) modules_are rtrs_core=c "rtrs_$s=c" "rnbd_$s=c" ;;
	rtrs) modules_are rtrs_core=ours "rtrs_$s=ours" "rnbd_$s=c" ;;
	rnbd) modules_are rtrs_core=ours "rtrs_$s=ours" "rnbd_$s=ours" ;;
	rnbd-c) modules_are rtrs_core=c "rtrs_$s=c" "rnbd_$s=ours" ;;
	*)
		echo "# stack_is: no stack $2" >&2
		return 1
		;;
	esac
}

# The modules a stack loaded, one line each, for the log.
stack_files() {
	local m
	for m in rtrs_core rtrs_client rtrs_server rnbd_client rnbd_server; do
		mod_loaded $m || continue
		if mod_is_ours $m; then echo "$m: rtrs-rs (Rust)"; else echo "$m: in-tree C"; fi
	done
}

# fio_verify <dev> <fio options>: fio with verification on the block
# device <dev>; prints its summary lines as KTAP diagnostics. Returns 0 if
# every block read back as written, 2 on a data mismatch (fio_status: it
# fails the test whatever the case expected), 1 on any other failure.
fio_verify() {
	local dev=$1 out rc
	shift
	# A missing /dev node would make fio write a regular file there and pass.
	if ! [ -b "$dev" ]; then
		echo "# fio_verify: $dev is not a block device"
		return 1
	fi
	# fio is told to stop after FIO_TIMEOUT seconds (600 unless set): IO
	# that is only slow fails its case. IO that never completes keeps fio
	# waiting in the kernel, and the test ends at its time bound.
	out=$(timeout "${FIO_TIMEOUT:-600}" fio --name=verify --filename="$dev" --ioengine=libaio --direct=1 \
		--verify=crc32c --verify_fatal=1 --do_verify=1 "$@" 2>&1)
	rc=$?
	echo "$out" | grep -E 'IOPS=|err=|verify:|error|bad' | sed 's/^/# /'
	fio_status "$out" $rc
}

# Durability sets (rnbd_durability.sh, rnbd_raid1_servers.sh): three sets
# of 64 blocks of 4 KiB written through O_DIRECT, each block with a fio
# verify header of its offset and a checksum: A from <base> on, then
# fsync() (a REQ_PREFLUSH); B from <base> + 1 MiB with O_DSYNC (FUA writes
# and a flush); C from <base> + 2 MiB with neither, last.
# dur_set <dev> <set> <base MiB> [fio options]: fio on the set; with
# --verify_only, the set reads back. Fails on a missing node, where fio
# would write a regular file and pass.
dur_set() {
	local dev=$1 s=$2 off=$3
	shift 3
	[ -b "$dev" ] || return 1
	case $s in B) off=$((off + 1)) ;; C) off=$((off + 2)) ;; esac
	fio --name="set$s" --filename="$dev" --ioengine=psync --direct=1 --rw=write --bs=4k \
		--offset=${off}M --size=256k --verify=crc32c --verify_fatal=1 "$@" >/dev/null 2>&1
}
# dur_write <dev> [base MiB]: A, B and C; prints "A=<rc> B=<rc> C=<rc>" of
# fio's exit codes.
dur_write() {
	local a b c
	dur_set "$1" A "${2:-0}" --do_verify=0 --end_fsync=1
	a=$?
	dur_set "$1" B "${2:-0}" --do_verify=0 --sync=dsync
	b=$?
	dur_set "$1" C "${2:-0}" --do_verify=0
	c=$?
	echo "A=$a B=$b C=$c"
}
# dur_read <dev> [base MiB]: which sets read back as written, "A B C", a
# set that did not as "-".
dur_read() {
	local s out=
	for s in A B C; do
		if dur_set "$1" $s "${2:-0}" --verify_only=1; then out="$out $s"; else out="$out -"; fi
	done
	echo "${out# }"
}

# loop_vda <block size> [wipe]: /dev/loop0 over this server's /dev/vda
# (which outlives the guest's QEMU), buffered, with <block size> logical
# blocks: a disk whose volatile write cache is the guest's page cache,
# which a flush writes back (loop has a write cache and no FUA) and the
# machine's death loses. The kernel's periodic writeback is held off (until
# dirty pages fill 90% of the memory), so that what no flush covered stays
# in the cache. With wipe, vda's first 4 MiB are zeroed first, on vda: the
# sets an earlier run left there would read back as written.
loop_vda() {
	echo 0 >/proc/sys/vm/dirty_writeback_centisecs && echo 360000 >/proc/sys/vm/dirty_expire_centisecs &&
		echo 90 >/proc/sys/vm/dirty_background_ratio && echo 90 >/proc/sys/vm/dirty_ratio || return 1
	losetup -d /dev/loop0 2>/dev/null
	if [ "$2" = wipe ]; then
		dd if=/dev/zero of=/dev/vda bs=1M count=4 conv=fsync 2>/dev/null || return 1
	fi
	modprobe loop && losetup -b "$1" /dev/loop0 /dev/vda && test -b /dev/loop0
}
# loop_vda_off: no loop0 left, and the kernel's writeback as it boots with.
loop_vda_off() {
	losetup -d /dev/loop0 2>/dev/null
	echo 500 >/proc/sys/vm/dirty_writeback_centisecs && echo 3000 >/proc/sys/vm/dirty_expire_centisecs &&
		echo 10 >/proc/sys/vm/dirty_background_ratio && echo 20 >/proc/sys/vm/dirty_ratio
}

# Fault injection (Documentation/fault-injection/): failslab and
# fail_page_alloc. faults_off: neither fails anything, both count sleeping
# allocations and single pages (for /proc/<pid>/fail-nth too). fault_on
# <failslab|fail_page_alloc> <module> <interval>: one failure, at the
# <interval>-th allocation (counting on) made with <module>'s code on the
# stack. fault_fired <kind>: that failure happened.
faults_off() {
	local f d
	for f in failslab fail_page_alloc; do
		d=/sys/kernel/debug/$f
		[ -d $d ] || continue
		# verbose 1: one line per failure, no stack (a call trace fails
		# the test); no address filter, every call counted.
		echo 0 >$d/probability && echo 0 >$d/times && echo N >$d/ignore-gfp-wait &&
			echo 1 >$d/verbose && echo 1 >$d/interval && echo 0 >$d/require-start &&
			echo 0xffffffffffffffff >$d/require-end || return 1
		[ $f = failslab ] || echo 0 >$d/min-order || return 1
	done
}
fault_on() {
	local d=/sys/kernel/debug/$1 range
	# The module's text: from its first function to past its last one
	# (/proc/modules' size would take in freed init sections, and what
	# was loaded after them).
	range=$(grep "\[$(echo "$2" | tr - _)\]\$" /proc/kallsyms | awk '$2 ~ /^[tT]$/ {print $1}' |
		sort | sed -n '1p;$p' | xargs)
	set -- "$1" "$2" "$3" $range
	[ $# = 5 ] && [ "$4" != 0000000000000000 ] || return 1
	faults_off && echo "0x$4" >$d/require-start && printf '0x%x\n' $((0x$5 + 4096)) >$d/require-end &&
		echo 32 >$d/stacktrace-depth && echo "$3" >$d/interval && echo 1 >$d/times &&
		echo 100 >$d/probability
}
fault_fired() { [ "$(cat "/sys/kernel/debug/$1/times")" = 0 ]; }

# fio_loop <tag> <MiB> <dev>: verified fio runs on <dev>, back to back,
# until /tmp/<tag>-stop exists; run it in the background. Run n writes <MiB>
# of 4k blocks at QD16 from offset (n % 32) * <MiB> and reads them back.
# Per run it appends to /tmp/<tag>-max its longest IO in ms (the larger of
# read and write clat max) and to /tmp/<tag>-ios its count of 4k IOs, and
# writes the number of runs done to /tmp/<tag>-runs; a run that failed adds
# a line to /tmp/<tag>-fails. With FIO_SLOW_MS set, each IO that took that
# long or longer adds a line to /tmp/<tag>-slow: the time it completed
# (ms since the epoch), its latency in ms, and 0 for a read, 1 for a write.
# It clears those files first.
fio_loop() {
	local tag=$1 mib=$2 dev=$3 n=0 out rc lat=()
	rm -f "/tmp/$tag-stop" "/tmp/$tag-fails" "/tmp/$tag-runs" "/tmp/$tag-max" "/tmp/$tag-ios" \
		"/tmp/$tag-slow" "/tmp/$tag-lat"_*
	[ -n "$FIO_SLOW_MS" ] && lat=(--write_lat_log="/tmp/$tag-lat" --log_unix_epoch=1)
	while [ ! -e "/tmp/$tag-stop" ]; do
		# A missing /dev node would make fio write a regular file there
		# and pass: a run without the device is a failed run.
		if ! [ -b "$dev" ]; then
			echo "run $n: $dev is not a block device" >>"/tmp/$tag-fails"
			n=$((n + 1))
			echo $n >"/tmp/$tag-runs"
			sleep 1
			continue
		fi
		out=$(fio --name="$tag" --filename="$dev" --ioengine=libaio --direct=1 \
			--rw=randwrite --bs=4k --iodepth=16 --size="${mib}M" --offset=$((n % 32 * mib))M \
			--verify=crc32c --verify_fatal=1 --do_verify=1 --output-format=terse "${lat[@]}" 2>&1)
		rc=$?
		if [ -n "$FIO_SLOW_MS" ]; then
			# One line per IO: epoch ms, clat in ns, direction, size.
			awk -F', ' -v ms="$FIO_SLOW_MS" '$2 >= ms * 1000000 {print $1, int($2 / 1000000), $3}' \
				"/tmp/$tag-lat_clat".*.log >>"/tmp/$tag-slow" 2>/dev/null
			rm -f "/tmp/$tag-lat"_*
		fi
		if ! fio_status "$out" $rc >/dev/null; then
			echo "run $n: status $rc: $(echo "$out" | grep -m3 -E 'err|verify|bad' | xargs)" >>"/tmp/$tag-fails"
		fi
		# terse v3: fields 6 and 47 are KiB read and written, 15 and 56
		# the read and write clat max in us.
		echo "$out" | grep '^3;' | awk -F';' '{m = $15 > $56 ? $15 : $56; print int(m / 1000)}' >>"/tmp/$tag-max"
		echo "$out" | grep '^3;' | awk -F';' '{print ($6 + $47) / 4}' >>"/tmp/$tag-ios"
		n=$((n + 1))
		echo $n >"/tmp/$tag-runs"
	done
}

# rnbd_fio_matrix <label> <dev> <offset MiB>: four verified fio runs of
# MATRIX_MIB (2; the soak/ versions of the tests that run it: 4) on the
# mapped <dev> from <offset> on, one test case each, that together cover
# the RNBD issue's matrix: 4k random at QD64 (libaio), 64k sequential at
# QD1 (libaio), the largest IO random at QD64 (io_uring), and 512 B to the
# largest mixed at QD1 (io_uring).
rnbd_fio_matrix() {
	local label=$1 dev=$2 off=$3 max mib=${MATRIX_MIB:-2}
	max=$(($(cat "/sys/block/${dev#/dev/}/queue/max_hw_sectors_kb") / 4 * 4))
	check "$label: 4k random read/write, libaio, QD64, verified" \
		fio_verify "$dev" --rw=randrw --bs=4k --iodepth=64 --size=${mib}M --offset=${off}M
	check "$label: 64k sequential writes, libaio, QD1, verified" \
		fio_verify "$dev" --rw=write --bs=64k --iodepth=1 --size=${mib}M --offset=$((off + mib))M
	check "$label: ${max}k random writes, io_uring, QD64, verified" \
		fio_verify "$dev" --rw=randwrite --bs=${max}k --iodepth=64 --size=${mib}M \
		--offset=$((off + 2 * mib))M --ioengine=io_uring
	check "$label: 512 B to ${max}k mixed, io_uring, QD1, verified" \
		fio_verify "$dev" --rw=randrw --bsrange=512-${max}k --blockalign=512 --iodepth=1 \
		--size=${mib}M --offset=$((off + 3 * mib))M --ioengine=io_uring
}

# sysfs_tree <dir>: "<mode> <path>" of everything below <dir>, directories
# ending in /, sorted: what a drop-in must have, down to the file modes.
sysfs_tree() {
	local f
	(cd "$1" && find . -mindepth 1 | while read -r f; do
		if [ -d "$f" ] && ! [ -L "$f" ]; then
			echo "$(stat -c %a "$f") ${f#./}/"
		else
			echo "$(stat -c %a "$f") ${f#./}"
		fi
	done) | sort
}

# try_write <dir> <file> <value>: writes <value> to <dir>/<file>; prints
# "<file> <value>: ok" or the error ("... : Invalid argument").
try_write() {
	local err
	if err=$( (printf '%s\n' "$3" >"$1/$2") 2>&1); then
		echo "$2 $3: ok"
	else
		echo "$2 $3: ${err##*: }"
	fi
}

# host_request "kill <guest>" | "start <guest>" | "link <i> <down|up>":
# asks the runner (scripts/run-tests) to kill a guest's QEMU (server,
# client2, ...), as in a power cut, or to boot it again on the same links
# and disk (/dev/vda on a server), or to pull the cable of this guest's link
# <i> or plug it in again (the NICs at both ends lose their carrier). The
# runner acts when it reads the line; the test waits on the effect.
host_request() { echo "# host request: $*"; }

# The server guest answers on link 0: it is up (after a boot, its agent and
# the peer channel follow within seconds).
server_pings() { ping -c 1 -W 1 "$SERVER_IP0" >/dev/null 2>&1; }

# carrier_is <netdev> <0|1>: whether this guest's <netdev> has a carrier.
carrier_is() { [ "$(cat "/sys/class/net/$1/carrier" 2>/dev/null)" = "$2" ]; }

# kmem: "<unreclaimable slab KiB> <vmalloc + per-CPU KiB>" of this guest.
kmem() {
	awk '/^SUnreclaim:/ {u = $2} /^VmallocUsed:/ {v = $2} /^Percpu:/ {p = $2}
		END {print u, v + p}' /proc/meminfo
}

# kmemleak_clean: kmemleak runs here (booted with kmemleak=on), a scan
# works and reports no unreferenced object; prints what it reports.
kmemleak_clean() {
	local k=/sys/kernel/debug/kmemleak
	[ -w $k ] && echo scan >$k || { echo "# kmemleak is off"; return 1; }
	if grep -q 'unreferenced object' $k; then
		sed 's/^/# /' $k | head -40
		return 1
	fi
}
