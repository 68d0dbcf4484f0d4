#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# Paths by IPv6 address and by GID, in every pairing of our RNBD stack and
# C's (client ours and C, server ours and C). C's server refuses a session
# that mixes IPv6 and IPv4 paths (it compares addresses of different
# families as if alike); ours takes it. Each link also carries IPv6
# (2001:db8:0:<link>::1 on the server, ::2 on the client). Per pairing: a
# device mapped over an IPv6 path (with its source address) and an IPv4
# path in one session, then over two IPv6 paths (one without a source),
# each time with verified IO; the client's and the server's path
# directories are named as C names them (ip:%pI6c), in every pairing alike.
# Then a path by the GID of the server's rxe port (gid:<gid>, the GID of its
# IPv6 address): rdma_cm resolves a GID only on ports that can carry AF_IB
# (InfiniBand, not RoCE, so not rxe); our client must fail that map exactly
# as C's does, with no path left behind.
. "$(dirname "$0")/lib.sh"

ctl=/sys/class/rnbd-client/ctl
ccls=/sys/class/rtrs-client
S6_0=2001:db8::1 C6_0=2001:db8::2 S6_1=2001:db8:0:1::1 C6_1=2001:db8:0:1::2
ktap_plan 27

trap rnbd_cleanup EXIT

unmap() { echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 test ! -e /dev/rnbd0; }
# The client's path directories of session <sess>, sorted, on one line.
clt_paths() { ls "$ccls/$1/paths" 2>/dev/null | sort | xargs; }
srv_paths() { on_server "ls /sys/class/rtrs-server/$1/paths 2>/dev/null | sort | xargs"; }
connected() { [ "$(cat "$ccls/$1"/paths/*/state 2>/dev/null | grep -c '^connected$')" = "$2" ]; }
# map_verify <sess> <paths...>: map nullb0 over those paths, wait for the
# device and every path, verify IO on it.
map_verify() {
	local sess=$1 p line="sessname=$1"
	shift
	for p in "$@"; do line="$line path=$p"; done
	echo "$line device_path=/dev/nullb0" >$ctl/map_device && wait_for 60 test -b /dev/rnbd0 &&
		wait_for 60 connected "$sess" $# &&
		fio_verify /dev/rnbd0 --rw=randrw --bs=4k --iodepth=16 --size=1M
}

# gid_case: the map by GID ($out) ended as the first pairing's; if it
# mapped, IO verifies and it unmaps; either way no session is left.
gid_case() {
	[ "$out" = "$first_gid" ] || return 1
	if [ "$out" = ok ]; then
		wait_for 60 test -b /dev/rnbd0 && fio_verify /dev/rnbd0 --rw=randrw --bs=4k --size=1M &&
			unmap || return 1
	fi
	wait_for 30 eval "! test -e $ccls/$sess-gid" && ! test -b /dev/rnbd0
}

rxe_up && on_server 'rxe_up_local' || bail "rxe did not come up"
wait_for 30 ping -c 1 -W 1 "$S6_0" >/dev/null && wait_for 30 ping -c 1 -W 1 "$S6_1" >/dev/null ||
	bail "the server's IPv6 addresses do not answer"
# The server's GID on link 0 for its IPv6 address, as sysfs writes it
# (eight groups of four hex digits).
gid=$(on_server 'grep -h "^2001:0db8:0000:0000:0000:0000:0000:0001$" /sys/class/infiniband/rxe0/ports/1/gids/*' | head -1)
diag "server GID on link 0: ${gid:-none}"
check "the server's rxe0 has a GID for its IPv6 address" [ -n "$gid" ]

first_clt= first_srv= first_gid=
# C's pairing first: the others must name and fail as it does.
for pairing in c:c rnbd:c c:rnbd rnbd:rnbd; do
	cst=${pairing%:*} sst=${pairing#*:}
	name="client $cst, server $sst"
	on_server "srv_stack_load $sst" && clt_stack_load "$cst" || bail "$name: cannot load"
	sess=v6-$cst-$sst

	if [ "$sst" = c ]; then
		# C's server compares a new path's address with the session's
		# others without looking at the family (sockaddr_cmp()): an IPv4
		# path beside an IPv6 one is "the same address", and refused.
		on_server "kmsg_mark mixed-$pairing"
		check "$name: C's server refuses a session of IPv6 and IPv4 paths, nothing is left" eval '
			! map_verify "$sess" "ip:$C6_0@ip:$S6_0" "ip:$SERVER_IP1" &&
			on_server "kmsg_since mixed-$pairing | grep -q \"Path with same addr exists\"" &&
			wait_for 30 eval "! test -e $ccls/$sess" && ! test -b /dev/rnbd0'
	else
		check "$name: mapped over IPv6 (with a source) and IPv4 in one session, IO verified" \
			map_verify "$sess" "ip:$C6_0@ip:$S6_0" "ip:$SERVER_IP1"
		c=$(clt_paths "$sess") s=$(srv_paths "$sess")
		diag "$name: client paths: $c; server paths: $s"
		check "$name: the client names the paths ip:%pI6c@ip:%pI6c as C does" \
			[ "$c" = "ip:$CLIENT_IP1@ip:$SERVER_IP1 ip:$C6_0@ip:$S6_0" ]
		first_srv=${first_srv:-$s}
		check "$name: our server names them alike for either client" [ "$s" = "$first_srv" ]
		check "$name: unmap" unmap
	fi

	check "$name: mapped over two IPv6 paths (one without a source), IO verified" \
		map_verify "$sess" "ip:$S6_0" "ip:$C6_1@ip:$S6_1"
	c=$(clt_paths "$sess")
	first_clt=${first_clt:-$c}
	diag "$name: client paths: $c"
	check "$name: ... named as in the first pairing" [ "$c" = "$first_clt" ]
	check "$name: unmap" unmap

	# A GID path: whatever it does, it does as C's client.
	out=$(try_write $ctl map_device "sessname=$sess-gid path=gid:$gid device_path=/dev/nullb0")
	out=${out##*: }
	diag "$name: map over gid:$gid: $out"
	first_gid=${first_gid:-$out}
	check "$name: a map by GID ends as C's ($first_gid), and leaves no session" gid_case
	rnbd_cleanup
done
ktap_finish
