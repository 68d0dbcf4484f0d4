#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# Failover without a stall: our RNBD on our RTRS on both sides, two paths,
# round-robin, and a server with 16 chunks (sess_queue_depth=16): the disk
# has 15 tags, one chunk stays spare for failover, and under round-robin
# the IO piles up on the path that goes silent. Under verified random
# writes at QD16, both guests drop every packet of the second link (netem
# loss 100%), three times:
#
# - With RTRS 2.1 (the default between our modules), the client asks the
#   server on path 0 to close path 1 and answer its IO (a fence); once the
#   server has, the IO fails over on its own chunks.
# - With RTRS 2.1 and a disk that completes each IO seconds after the
#   client's probe fails the path, the server answers the fence only once
#   path 1's IO is done (slow_disk below).
# - With the client pinned to 2.0 (proto_ext=N), as against a C server,
#   the IO fails over at once on other chunks, and the chunks it leaves
#   stay fenced while a write of path 1 may still land in them: until the
#   server must have closed the path by itself, 35 s on. Past those, IO
#   at QD16 verifies and finds them free again.
#
# Each time every write verifies, and no IO waits for the 35 s the server
# takes to close the path by itself, nor for the client's heartbeats: the
# client notices the silence by its silence probe (silence_ms), and the
# IO fails over within 10 s of the path's
# close; no IO takes 10 s (the bounds asserted; `scripts/bench-failover`
# measures the real numbers); when the link is back, path 1 reconnects
# and carries IO.
#
# Knobs, from the environment: SILENT_MIB, the MiB each silent run writes
# (make check: 6, which the writes and their verify take 15 to 20 s for,
# the silence coming 3 s in; soak/: 24), and RECONNECT, how path 1 comes back once
# its link is: through its reconnect file as soon as its close is done
# (make check: sysfs), or by itself after the reconnect delay, 30 s
# (soak/: delay).
. "$(dirname "$0")/lib.sh"

sess=rs-fo
ccls=/sys/class/rtrs-client
p0=ip:$CLIENT_IP0@ip:$SERVER_IP0
p1=ip:$CLIENT_IP1@ip:$SERVER_IP1
out=/tmp/failover.json
ktap_plan 31

cleanup() {
	wait
	link_silence eth1 off
	on_server 'link_silence eth1 off'
	rnbd_cleanup
}
trap cleanup EXIT

state_is() { [ "$(cat "$ccls/$sess/paths/$1/state" 2>/dev/null)" = "$2" ]; }
writes_of() { set -- $(cat "$ccls/$sess/paths/$1/stats/rdma"); echo "$3"; }
# The longest completion latency of a fio JSON report, in ms.
clat_max_ms() {
	awk '/"clat_ns"/ { f = 1 } f && /"max"/ { gsub(/[^0-9]/, ""); if ($0 + 0 > m) m = $0 + 0; f = 0 }
		END { printf "%d\n", m / 1000000 }' "$1"
}

# ms_between <mark> <regex 1> <regex 2>: milliseconds from the first
# kernel log line since <mark> that matches <regex 1> to the first after it
# that matches <regex 2>; empty if either is missing.
ms_between() {
	kmsg_since "$1" | awk -v a="$2" -v b="$3" '
		{ t = substr($0, index($0, "[") + 1); t = substr(t, 1, index(t, "]") - 1) + 0 }
		!t0 && $0 ~ a { t0 = t; next }
		t0 && $0 ~ b { printf "%d\n", (t - t0) * 1000; exit }'
}

# silent_run <label> <offset MiB>: verified writes at QD16 while link 1
# goes silent 3 s in; four cases: the writes verify, the IO failed over
# soon after the path closed, no IO waited 10 s, path 0 up and path 1 not.
# The client notices the silence when rxe breaks the QP (a REG_MR it runs
# again) or when its probe goes unanswered (silence_ms); C's waits for the
# heartbeats (35 s) when rxe does not break the QP.
silent_run() {
	local label=$1 off=$2 pid rc max t0
	kmsg_mark "fo-$label"
	fio --name=failover --filename=/dev/rnbd0 --ioengine=libaio --direct=1 --rw=randwrite --bs=4k \
		--iodepth=16 --size=${SILENT_MIB:-6}M --offset=${off}M --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--output-format=json >"$out" 2>/tmp/failover.err &
	pid=$!
	sleep 3
	check "$label: link 1 goes silent under IO" eval 'kill -0 $pid && link_silence eth1 on &&
		on_server "link_silence eth1 on"'
	t0=$SECONDS
	wait $pid
	rc=$?
	diag "$label: fio ended $((SECONDS - t0)) s after the silence began: rc $rc $(head -c 300 /tmp/failover.err)"
	check "$label: every write of the run verifies, none failed" [ $rc = 0 ]
	max=$(clat_max_ms "$out")
	fo=$(ms_between "fo-$label" "$p1: reconnecting the path" \
		"$p1: ([0-9]+ IOs failed over on other chunks|the server closed the path and answered its IO)")
	diag "$label: longest IO: $max ms; failed over $fo ms after the path closed"
	check "$label: no IO waited for the server's close (failed over ${fo:-?} ms after the path closed, under 10 s)" \
		[ "${fo:-99999}" -lt 10000 ]
	check "$label: no IO waited for the heartbeats (longest ${max:-?} ms, under 10 s)" \
		eval '[ -n "$max" ] && [ "$max" -lt 10000 ]'
	check "$label: path 0 stays connected, path 1 does not" \
		eval 'state_is "$p0" connected && ! state_is "$p1" connected'
	silent_since=$t0
}

# back <label>: the link carries packets again; path 1 reconnects and
# carries IO.
back() {
	local w1 off=$2
	check "$1: link 1 carries packets again" eval 'link_silence eth1 off && on_server "link_silence eth1 off"'
	if [ "${RECONNECT:-sysfs}" = delay ]; then
		check "$1: path 1 reconnects by itself" wait_for 150 state_is "$p1" connected
	else
		check "$1: path 1 reconnects through sysfs once its link is back" \
			wait_for 150 reconnect_path "$ccls/$sess/paths/$p1"
	fi
	w1=$(writes_of "$p1")
	check "$1: IO verifies and uses path 1 again" eval 'fio_verify /dev/rnbd0 --rw=randwrite --bs=4k \
		--iodepth=16 --size=4M --offset=${off}M && [ "$(writes_of "$p1")" -gt "$w1" ]'
}

# slow_disk: RTRS 2.1 with a disk that completes each IO 3.5 s plus the
# client's silence window (silence_ms, 4 times the default on a slow
# kernel) after it came (a null_blk of the server with irqmode=2, whose
# request timeout, 5 s by default, is raised to 60 s): 15 writes go out
# at once, half of them on path 1, and the server silences its side of
# link 1 as soon as it has taken the first of path 1's (its stats/rdma
# counts it), then the client its side. The client's probe fails path 1
# about a window after the silence, and the server answers the fence
# only once path 1's writes are done, about 3.5 s after the client
# asked, within the 5 s the client waits for it; a server that confirmed
# the close first would answer within milliseconds, and a write of the
# old path could then complete after the same write failed over, and
# after a newer one. Every write verifies.
slow_disk() {
	local nb=/sys/kernel/config/nullb/nullb1 ms pid w
	local disk_ms=$((3500 + $(cat /sys/module/rtrs_client/parameters/silence_ms)))
	check "slow disk: the server exports a disk that completes each IO after $disk_ms ms" on_server "
		mkdir $nb && echo 64 >$nb/size && echo 1 >$nb/memory_backed && echo 2 >$nb/irqmode &&
		echo ${disk_ms}000000 >$nb/completion_nsec && echo 1 >$nb/power &&
		wait_for 10 test -b /dev/nullb1 && echo 60000 >/sys/block/nullb1/queue/io_timeout"
	check "slow disk: mapped in the session" eval 'echo "sessname=$sess device_path=/dev/nullb1" \
		>/sys/class/rnbd-client/ctl/map_device && wait_for 30 test -b /dev/rnbd1'
	kmsg_mark fo-slow
	w=$(srv_writes "$sess" "$p1")
	fio --name=slow --filename=/dev/rnbd1 --ioengine=libaio --direct=1 --rw=randwrite --bs=4k \
		--iodepth=15 --size=60k --verify=crc32c --verify_fatal=1 --do_verify=1 >/tmp/slow.out 2>&1 &
	pid=$!
	# Polled on the server, 10 times a second, for a silence that
	# begins within a tenth of a second of the write's arrival.
	check "slow disk: link 1 goes silent under IO" eval 'on_server "
		for i in \$(seq 100); do
			set -- \$(cat /sys/class/rtrs-server/$sess/paths/$p1/stats/rdma)
			[ \$3 -gt $w ] && break
			sleep 0.1
		done
		[ \$3 -gt $w ] && link_silence eth1 on" && kill -0 $pid && link_silence eth1 on'
	check "slow disk: every write verifies" wait $pid
	ms=$(kmsg_since fo-slow | sed -n 's/.*the server closed the path and answered its IO in \([0-9]*\) ms.*/\1/p' |
		head -1)
	diag "slow disk: the server answered the fence after ${ms:-?} ms"
	check "slow disk: the server answered once path 1's IO was done (after ${ms:-?} ms, 1000 or more)" \
		eval '[ -n "$ms" ] && [ "$ms" -ge 1000 ]'
	check "slow disk: unmapped" eval 'echo normal >/sys/block/rnbd1/rnbd/unmap_device &&
		wait_for 30 eval "! test -b /dev/rnbd1"'
	on_server "echo 0 >$nb/power; rmdir $nb"
}

rxe_up || bail "rxe did not come up"
on_server srv_stack_load rnbd sess_queue_depth=16 || bail "cannot load our server stack"
clt_stack_load rnbd || bail "cannot load our client stack"
echo "sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0" \
	>/sys/class/rnbd-client/ctl/map_device || bail "map_device failed"
wait_for 60 test -b /dev/rnbd0 && wait_for 30 eval 'state_is "$p0" connected && state_is "$p1" connected' ||
	bail "the two paths did not come up"
echo round-robin >"$ccls/$sess/mpath_policy"
check "the disk has the server's 16 chunks less the spare as its tags" \
	[ "$(cat /sys/block/rnbd0/queue/nr_requests)" = 15 ]

# RTRS 2.1: fences.
silent_run fence 64
check "fence: the server closed path 1 and answered its IO first" \
	eval 'kmsg_since fo-fence | grep -q "rtrs_client: .*: the server closed the path and answered its IO in"'
back fence 128
slow_disk
back slow 160

# RTRS 2.0: chunk fences. New connections offer 2.0; path 0 reconnects too.
echo N >/sys/module/rtrs_client/parameters/proto_ext
check "2.0: both paths reconnect offering 2.0" eval '
	echo 1 >"$ccls/$sess/paths/$p0/reconnect" && echo 1 >"$ccls/$sess/paths/$p1/reconnect" &&
	state_is "$p0" connected && state_is "$p1" connected'
silent_run chunks 192
check "chunks: path 1's IO failed over on other chunks" \
	eval 'kmsg_since fo-chunks | grep -q "IOs failed over on other chunks"'
# The fences lift 35 s after the close, when a new IO finds no chunk.
sleep $((40 - (SECONDS - silent_since) > 0 ? 40 - (SECONDS - silent_since) : 0))
check "chunks: after the server's heartbeat timeout, IO at QD16 verifies and finds the chunks free" \
	eval 'fio_verify /dev/rnbd0 --rw=randwrite --bs=4k --iodepth=16 --size=4M --offset=256M &&
	kmsg_since fo-chunks | grep -q "fenced chunks free again"'
back chunks 288
echo Y >/sys/module/rtrs_client/parameters/proto_ext
check "unmap_device" eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 eval "! test -e $ccls/$sess"'
ktap_finish
