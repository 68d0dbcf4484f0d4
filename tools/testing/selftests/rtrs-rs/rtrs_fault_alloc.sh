#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# Allocations that fail, our stack on both sides (rnbd over rtrs, two
# paths). The kernel's fault injection (Documentation/fault-injection/):
# - map_device written with /proc/self/fail-nth set to 1, 2, 3, ...: the
#   n-th allocation of the writing task fails, wherever it is (sysfs, our
#   modules, rdma_cm), until a map no longer meets a failure;
# - failslab and fail_page_alloc with their stack-trace filter on the text
#   of rtrs-client, then of rtrs-server, then of rnbd-client and of
#   rnbd-server, failing one allocation of theirs in any context (CM
#   handlers, completions, work) at a different point each round while a
#   device is mapped, written, read back and unmapped.
# Every round ends as it may (round_ok, errnos_only): the map refused with
# ENOMEM (or, for a session the server could not set up, ECONNRESET), or
# the device mapped, every block of its IO verified, and unmapped; nothing
# is left behind (no session on either side, no device); no warning; and
# once the fault is off, a map with verified IO and an unmap succeed. Leaks are kmemleak's
# to find where it runs (make soak boots with it on).
#
# Knobs, from the environment (scripts/run-tests --env): ROUNDS, rounds per
# module and kind of fault (1; soak/rtrs_fault_alloc.sh runs 40), and the
# fail-nth maps are ROUNDS * 8 points spread over a map's allocations;
# IO_MIB, the verified IO of a round (1; soak/: 2), and twice that where
# the stack must work with no fault on.
. "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-1}
IO_MIB=${IO_MIB:-1}
sess=fault
ctl=/sys/class/rnbd-client/ctl
ccls=/sys/class/rtrs-client
DBG=/sys/kernel/debug
ktap_plan 15

cleanup() {
	faults_off
	on_server faults_off
	rnbd_cleanup
}
trap cleanup EXIT

map_line="sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0"
# clean_up: whatever a round left, gone: the device unmapped, no session on
# either side.
clean_up() {
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	wait_for 60 eval "! test -e $ccls/$sess && ! test -b /dev/rnbd0" &&
		on_server "wait_for 60 eval '! ls /sys/class/rtrs-server/* >/dev/null 2>&1'"
}
# round_io <MiB>: a map, <MiB> of verified IO and an unmap; prints how it
# ended: "ok" (mapped, every block verified, unmapped), "map: <error>"
# (the write to map_device failed; the error as write(2) reports it), "no
# device", "io: error" (fio failed without a mismatch), "io: mismatch", or
# "unmap: <error>".
round_io() {
	local err rc
	err=$( (echo "$map_line" >$ctl/map_device) 2>&1) || { echo "map: ${err##*: }"; return; }
	wait_for 60 test -b /dev/rnbd0 || { echo "no device"; return; }
	FIO_TIMEOUT=120 fio_verify /dev/rnbd0 --rw=randrw --bs=4k --iodepth=16 --size=${1}M >/dev/null
	rc=$?
	[ $rc = 2 ] && { echo "io: mismatch"; return; }
	[ $rc = 0 ] || { echo "io: error"; return; }
	err=$( (echo normal >/sys/block/rnbd0/rnbd/unmap_device) 2>&1) || { echo "unmap: ${err##*: }"; return; }
	echo ok
}
# works: with no fault on, a map, verified IO and an unmap succeed.
works() {
	local out
	out=$(round_io $((2 * IO_MIB)) 2>&1 | tail -1)
	[ "$out" = ok ] || { diag "with no fault: $out"; return 1; }
	clean_up
}

rxe_up && on_server srv_stack_load rnbd && clt_stack_load rnbd || bail "cannot load our stacks"
for f in failslab fail_page_alloc; do
	[ -d $DBG/$f ] || bail "this kernel has no $f (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC)"
done
# fail-nth counts only the allocations the attributes let through: sleeping
# ones too, and single pages.
faults_off && on_server faults_off || bail "cannot reset fault injection"
check "a map with verified IO works before any fault" works

# --- fail-nth: the n-th allocation of the task that writes map_device.
# map_nth <n>: the map written with fail-nth n; prints "ok <left>" (the
# fail-nth count left: 0 if the failure came) or the write's error. The
# subshell's own write sets its fail-nth, the next write is the map, and
# the builtin read gets the count back from the same task.
map_nth() {
	(echo "$1" >/proc/self/fail-nth && echo "$map_line" >$ctl/map_device &&
		read -r left </proc/self/fail-nth && echo "ok $left") 2>&1 | tail -1
}
declare -A outcomes
sweep_nth() {
	local n out used step
	# How many allocations a map makes: what a large fail-nth loses.
	out=$(map_nth 1000000)
	clean_up || return 1
	case $out in ok*) used=$((1000000 - ${out#ok })) ;; *) diag "map: $out"; return 1 ;; esac
	step=$((used / (ROUNDS * 8)))
	step=$((step > 0 ? step : 1))
	diag "a map makes $used allocations in the writing task; failing every ${step}th"
	for ((n = 1; n <= used; n += step)); do
		out=$(map_nth $n)
		case $out in ok*) out="mapped (fail-nth left ${out#ok })" ;; *) out=${out##*: } ;; esac
		outcomes[$out]=$((${outcomes[$out]:-0} + 1))
		clean_up || { diag "fail-nth $n ($out): something was left behind"; return 1; }
	done
	for out in "${!outcomes[@]}"; do diag "fail-nth maps: ${outcomes[$out]} times: $out"; done
}
# A failed allocation of the writing task fails its map with ENOMEM: not
# with another errno that hides it, nor with a kernel-internal code that
# leaked out (ERESTARTSYS, ENOTSUPP: strerror knows them as "Unknown error
# 512", "Unknown error 524"), nor with nothing.
errnos_only() {
	local o rc=0
	[ ${#outcomes[@]} -gt 0 ] || return 1
	for o in "${!outcomes[@]}"; do
		case $o in
		"mapped "* | "Cannot allocate memory") ;;
		*) diag "fail-nth maps: not ENOMEM: $o"; rc=1 ;;
		esac
	done
	return $rc
}
check "map_device with its n-th allocation failing, each n: an errno or success, nothing left" sweep_nth
check "every failed map ended with ENOMEM" errnos_only
check "no kernel warning from the fail-nth maps" eval '! dmesg_bad && ! on_server dmesg_bad'
check "a map with verified IO works after the fail-nth maps" works

# --- failslab and fail_page_alloc, aimed at one module's text (lib.sh's
# fault_on).
# round_ok <side> <outcome>: what a round may end as. A failed allocation
# refuses the map with ENOMEM where the step it broke can say so; on the
# server, one in the session's setup (rnbd-server's connect event, which
# may only accept or refuse) closes the session, and the client's map ends
# as a refused connection does, with ECONNRESET. A device once mapped
# verifies every block (a path that an allocation broke fails over or
# reconnects) and unmaps.
round_ok() {
	case $2 in
	ok | "map: Cannot allocate memory") return 0 ;;
	"map: Connection reset by peer") [ "$1" = server ] ;;
	*) return 1 ;;
	esac
}
# rounds <kind> <side: client|server> <module>: ROUNDS rounds of map,
# verified IO and unmap with one allocation of <module> failing somewhere;
# each must end as round_ok says, and the fault must fire in one at least.
rounds() {
	local kind=$1 side=$2 mod=$3 k fired=0 where out rc=0
	where=$([ "$side" = server ] && echo on_server || echo eval)
	for ((k = 1; k <= ROUNDS; k++)); do
		$where "fault_on $kind $mod $((k * 3 - 2))" || { diag "$mod: cannot aim $kind"; return 1; }
		out=$(round_io $IO_MIB 2>&1 | tail -1)
		$where "fault_fired $kind" && fired=$((fired + 1))
		$where faults_off
		diag "$kind in $mod, interval $((k * 3 - 2)): $out"
		round_ok "$side" "$out" || { diag "$kind in $mod, round $k: not an outcome it may have"; rc=1; }
		clean_up || { diag "$kind in $mod, round $k: something was left behind"; return 1; }
	done
	diag "$kind in $mod: the fault fired in $fired of $ROUNDS rounds"
	[ "$fired" -gt 0 ] && [ $rc = 0 ]
}
for mod in rtrs-client rnbd-client rtrs-server rnbd-server; do
	side=${mod#*-}
	check "failslab in $mod: each round verifies or refuses the map with an errno, the fault fired" \
		rounds failslab "$side" "$mod"
	check "fail_page_alloc in $mod: each round verifies or refuses the map with an errno, the fault fired" \
		rounds fail_page_alloc "$side" "$mod"
done
check "no kernel warning from the failed allocations" eval '! dmesg_bad && ! on_server dmesg_bad'
check "a map with verified IO works after all of it" works
ktap_finish
