#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# A malicious RTRS server against our rtrs-client and against C's: the
# test module rtrs-test-evil-srv (rtrs/tests/rtrs_test_evil_srv.rs) on the
# server guest speaks the server side of RTRS over raw rdma_cm and verbs,
# wrongly on purpose per scenario: broken CON_RSPs (magic, version, an
# errno, queue depth 0, 2 GiB chunks, a header too small for any request),
# broken INFO_RSPs (no descriptor, more than the client has room for, zero
# and too large lengths, overlapping, short, another type), no answer to
# the connection request or to INFO_REQ, IO responses for requests never
# sent or answered twice, RKEY_RSPs for chunks the client does not own, a
# read answered with more data than the client's buffer holds, silence
# from the first IO on, one IO never answered while heartbeats are, and a
# read answered as invalidated by a server that invalidated nothing;
# and in RTRS 2.1 (rtrs/proto/ext.rs): a good 2.1 server, a 2.0 CON_RSP
# with 2.1's flags, read responses (READ_RSP) for a request past the queue
# depth, twice, for a write, with a new rkey the server never said it
# sends, or too short, and FENCE_ACKs for fences never sent. For each,
# rtrs-test-clt opens a session of one path to it and, if it opens, runs
# one round of verified IO: the open must fail with the errno of the
# table, or the IO go as the table says, and the client log the line the
# table names (and, where the IO goes well, no error); the evil server
# must have played its scenario (ctl/result counts its acts; the good
# ones, none); the session must be gone once rtrs-test-clt is; no kernel
# warning. The rows where ours and C differ are in
# Documentation/reliability.md.
#
# Not run against C's client, because what they do is C's bug and a
# kernel warning or worse (the runner fails any WARNING): con_qd0
# (WARN_ON(!queue_depth) in create_con_cq_qp()), con_hdr_small
# (rtrs_clt_write_req() writes the user message and header into a buffer
# of max_hdr_size bytes without checking: a heap overflow), rsp_unknown,
# rsp_idle, rsp_twice (WARN_ON in process_io_rsp() and complete_rdma_req()),
# rkey_unknown, rkey_other (WARN_ON in rtrs_clt_rkey_rsp_done()); and
# where C's client waits for ever, because the server answers heartbeats
# but not the IO: read_too_much (the client's device refuses the write
# past its buffer and the IO's answer never comes) and rsp_dropped. Ours
# closes the path after io_deadline_s: for those two scenarios the test
# sets it to IO_DEADLINE_S seconds (make check: 5; soak/: 50, the
# default), and puts the default back after them. Nor the scenarios of
# RTRS 2.1 (good_21 to fence_ack_unasked): C's client offers 2.0, which
# the evil server answers as a 2.0 server, without the act (con_v20_ext
# aside, which C's client would take for 2.0 with new rkeys).
#
# silent_accept and silent_info wait out the client's 30 s for the
# connection, io_silent its heartbeats' 35 s: make check leaves them out,
# and soak/ (LONG=Y) runs them.
. "$(dirname "$0")/lib.sh"

evil=/sys/class/rtrs-test-evil-srv/ctl
ctl=/sys/class/rtrs-test/ctl

# scenario ; outcome: ours ; client line: ours ; C ; C (extended regexes;
# an empty line regex: no error to be logged). An outcome is `refused <errno>`
# (rtrs_clt_open failed), `io ok` (a verified round of IO) or `io failed`;
# a C outcome `skip` means not run (above).
scenarios='
good;io ok;;io ok;
con_magic;refused -104;Invalid RTRS connection response;refused -104;Invalid RTRS magic
con_version;refused -104;Invalid RTRS connection response;refused -104;Unsupported major RTRS version: 3, expected 2
con_errno;refused -104;Invalid RTRS message: errno -5;refused -104;Invalid RTRS message: errno
con_qd0;refused -104;Invalid RTRS connection response: queue depth 0;skip;
con_chunk_huge;refused -104;Incorrect sg vector, not fully mapped;refused -104;RDMA immediate size
con_hdr_small;io failed;user message size is 24 and header length 4, but max size is 8;skip;
info_sg0;refused -104;Incorrect sg vector, not fully mapped;refused -104;Incorrect sg_cnt 0, is not multiple
info_sg_over;refused -104;Path info response recv failed;refused -104;Path info response recv failed
info_zero_len;refused -104;Incorrect sg vector, not fully mapped;refused -104;Incorrect \[0\]\.len 0
info_too_large;refused -104;Incorrect sg vector, not fully mapped;refused -104;Incorrect total_len 2097152
info_overlap;io ok;;io ok;
info_short;refused -104;Path info response is malformed;refused -104;Path info response is malformed: size 4
info_type;refused -104;Path info response is malformed;refused -104;Path info response is malformed: type
silent_accept;refused -110;failed: err=-110;refused -110;failed: err=-110
silent_info;refused -110;failed: err=-110;refused -110;failed: err=-110
rsp_unknown;io failed;response for request 19 of 16;skip;
rsp_idle;io failed;response for request [0-9]+, which is not in flight;skip;
rsp_twice;io failed;response for request [0-9]+, which is not in flight;skip;
rkey_unknown;io failed;rkey response for unknown chunk 65535;skip;
rkey_other;io failed;rkey response for chunk [0-9]+ came as the answer to [0-9]+;skip;
read_too_much;io failed;IO [0-9]+ unanswered for [0-9]+ ms, closing the path;skip;
io_silent;io failed;HB missed max reached;io failed;HB missed max reached
rsp_dropped;io failed;IO [0-9]+ unanswered for [0-9]+ ms, closing the path;skip;
inval_claim;io ok;response for request [0-9]+ claims an invalidation of rkey 0x[0-9a-f]+ it did not make;io ok;
good_21;io ok;RTRS 2.1 with fences and read responses;skip;
con_v20_ext;io failed;rkey response is malformed;skip;
read_rsp_unknown;io failed;read response for request 19 refused: NoSuchRequest;skip;
read_rsp_twice;io failed;read response for request [0-9]+( refused: Not(InFlight|ARead)|, which is not in flight);skip;
read_rsp_write;io failed;read response for request [0-9]+ refused: NotARead;skip;
read_rsp_rkey;io failed;read response for request [0-9]+ refused: Rkey;skip;
read_rsp_short;io failed;read response is malformed: size 8;skip;
fence_ack_unasked;io ok;RTRS 2.1 with fences and read responses;skip;
'
# The scenarios that wait for a timer of 30 s or more, in make soak only
# (LONG=Y).
if [ "${LONG:-N}" != Y ]; then
	scenarios=$(echo "$scenarios" | grep -Ev '^(silent_accept|silent_info|io_silent);')
fi
nscen=$(echo "$scenarios" | grep -c ';')
# Per client of CLIENTS (make check: ours, "rs"; soak/: "rs c", C's as
# the control): 5 cases per scenario, then the unload; the two-path case;
# then the kernel logs.
read -ra clients <<<"${CLIENTS:-rs}"
deadline_s=${IO_DEADLINE_S:-5}
dl_param=/sys/module/rtrs_client/parameters/io_deadline_s
ktap_plan $((${#clients[@]} * (5 * nscen + 1) + 5 + 1))

unload_all() {
	mod_loaded rtrs_test_clt && rmmod rtrs_test_clt
	mod_loaded rtrs_test_evil_srv && rmmod rtrs_test_evil_srv
	unload_rnbd_rtrs
}
cleanup() {
	unload_all
	on_server "$(declare -f unload_all); unload_all"
}
trap cleanup EXIT

show_logs() {
	kmsg_since "$mark" | grep -E 'rtrs|rxe' | tail -15 | sed 's/^/# client dmesg: /'
	on_server "kmsg_since $mark | grep -E 'rtrs|rxe' | tail -10" | sed 's/^/# server dmesg: /'
}
check_on_fail=show_logs

# play <session name>: opens a session to the evil server and, if it
# opens, runs a round of verified IO; prints the outcome.
play() {
	if ! insmod "$MODDIR/rtrs-test-clt.ko" sessname="$1" path=ip:$SERVER_IP0 2>/dev/null; then
		echo "refused $(kmsg_since "$mark" | sed -n 's/.*rtrs_clt_open: \(-[0-9]*\)$/\1/p' | tail -1)"
	elif echo '0 1' >$ctl/run 2>/dev/null; then
		echo "io ok"
	else
		echo "io failed"
	fi
}

# The line the client logged since the mark.
client_logs() { kmsg_since "$mark" | grep -Eq "$1"; }
# An error the client logged since the mark, but for the round's read past
# the disk's end, which the server fails with EINVAL as it must.
client_errors() {
	kmsg_since "$mark" | grep -v 'IO read request failed: error=-22 ' |
		grep -Eq "rtrs_client.*([Ff]ail|[Ee]rr|Invalid|Incorrect|[Uu]nknown)"
}
# No session of the evil scenarios left on the client.
no_session() { wait_for 30 eval '! ls /sys/class/rtrs-client/ 2>/dev/null | grep -q ^evil-'; }
no_warning() { ! kmsg_since "$mark" | grep -Eq 'WARNING:|BUG:|Oops|KASAN|Call Trace'; }

rxe_up || bail "rxe did not come up"
on_server "$(declare -f unload_all); unload_all && insmod $MODDIR/rtrs-test-evil-srv.ko" ||
	bail "server: cannot load rtrs-test-evil-srv"
for clt in "${clients[@]}"; do
	unload_all
	case $clt in
	rs) insmod "$MODDIR/rtrs-core.ko" && insmod "$MODDIR/rtrs-client.ko" &&
		modules_are rtrs_core=ours rtrs_client=ours && dl_default=$(cat $dl_param) ;;
	c) modprobe rtrs-client && modules_are rtrs_core=c rtrs_client=c ;;
	esac || bail "cannot load the $clt rtrs-client"
	while IFS=';' read -r name rs_out rs_re c_out c_re; do
		[ -n "$name" ] || continue
		if [ $clt = rs ]; then want=$rs_out re=$rs_re; else want=$c_out re=$c_re; fi
		if [ "$want" = skip ]; then
			for what in outcome "the client's log" "the server's act" "no session left" \
				"no kernel warning"; do
				skip "c client: $name: $what: not run (see the test's header)"
			done
			continue
		fi
		mark=evil-srv-$clt-$name
		kmsg_mark "$mark"
		case $clt:$name in
		rs:read_too_much | rs:rsp_dropped) echo "$deadline_s" >$dl_param ;;
		rs:*) echo "$dl_default" >$dl_param ;;
		esac
		on_server "kmsg_mark $mark && echo $name >$evil/run" || bail "server: cannot set $name"
		got=$(play "evil-$clt-$name")
		diag "$clt client: $name: $got; server: $(on_server "cat $evil/result")"
		check "$clt client: $name: $want" test "$got" = "$want"
		if [ -z "$re" ]; then
			check "$clt client: $name: the client logs no error" eval '! client_errors'
		elif [ "$want" = "io ok" ]; then
			check "$clt client: $name: the client logs '$re' and no error" \
				eval 'wait_for 15 client_logs "$re" && ! client_errors'
		else
			check "$clt client: $name: the client logs '$re'" wait_for 15 client_logs "$re"
		fi
		if [ "${name%_21}" = good ]; then
			check "$clt client: $name: the server played it straight" \
				on_server "grep -q ' acts 0 ' $evil/result"
		else
			check "$clt client: $name: the server played it" \
				on_server "grep -Eq ' acts [1-9]' $evil/result"
		fi
		mod_loaded rtrs_test_clt && rmmod rtrs_test_clt
		check "$clt client: $name: no session left" no_session
		check "$clt client: $name: no kernel warning" no_warning
	done <<<"$scenarios"
	check "$clt client: the client's modules unload" eval 'unload_all && ! lsmod | grep -q rtrs'
done

# The deadline with a second path: the unanswered IO fails over to it and
# the round verifies; the path was closed by the rule, not at random.
unload_all
insmod "$MODDIR/rtrs-core.ko" && insmod "$MODDIR/rtrs-client.ko" io_deadline_s="$deadline_s" &&
	modules_are rtrs_core=ours rtrs_client=ours || bail "cannot load our rtrs-client"
mark=evil-srv-rs-two-paths
kmsg_mark "$mark"
on_server "kmsg_mark $mark && echo rsp_dropped >$evil/run" || bail "server: cannot set rsp_dropped"
if insmod "$MODDIR/rtrs-test-clt.ko" sessname=evil-rs-two path=ip:$SERVER_IP0 path2=ip:$SERVER_IP1 &&
	echo '0 1' >$ctl/run; then
	got="io ok"
else
	got="io failed"
fi
age=$(kmsg_since "$mark" | sed -n 's/.*IO [0-9]* unanswered for \([0-9]*\) ms, closing the path.*/\1/p' | head -1)
diag "rs client: rsp_dropped over two paths: $got, the path closed after ${age:-?} ms; server: $(on_server "cat $evil/result")"
check "rs client: rsp_dropped over two paths: the IO fails over, io ok" test "$got" = "io ok"
check "rs client: rsp_dropped over two paths: the path closed after the deadline ($deadline_s s) and the next tick" \
	test "${age:-0}" -gt $((deadline_s * 1000)) -a "${age:-0}" -le $((deadline_s * 1000 + 10000))
check "rs client: rsp_dropped over two paths: the server dropped one IO" \
	on_server "grep -q ' acts 1 ' $evil/result"
mod_loaded rtrs_test_clt && rmmod rtrs_test_clt
check "rs client: rsp_dropped over two paths: no session left" no_session
check "rs client: rsp_dropped over two paths: no kernel warning" no_warning
check "no kernel warnings" eval '! dmesg_bad && ! on_server dmesg_bad'
ktap_finish
