#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# topology=servers=2 clients=2 links=2 smp=1
# The harness of the tests that need more than the VM pair
# (scripts/rtrsvm.py's Topology): two servers and two clients, every client
# linked to every server by two links. Each guest answers on its channel,
# has the NICs and addresses lib.sh's link_dev and link_ip name (IPv4 and
# IPv6), and reaches each of its peers over each link; a client other than
# the first, killed, is gone until booted again, and then answers again on
# the same addresses. It tests the harness, not our modules, and make
# check's tests of more than the pair use what it proves (rnbd_raid1_servers
# two servers, rnbd_many_clients three clients and a client killed and
# booted again): make soak runs it.
. "$(dirname "$0")/../lib.sh"

ktap_plan 8

# at <guest> <script>: run it there (here for client).
at() {
	local g=$1
	shift
	if [ "$g" = client ]; then (eval "$*"); else on_guest -t "${AT_TIMEOUT:-120}" "$g" "$*"; fi
}
# addrs_ok <guest>: each of its NICs holds the addresses link_ip names.
addrs_ok() {
	local g=$1 peers p k dev
	case $g in server*) peers="client client2" ;; *) peers="server server2" ;; esac
	for p in $peers; do
		for k in 0 1; do
			dev=$(link_dev "$g" "$p" $k)
			at "$g" "ip -4 addr show dev $dev | grep -q ' $(link_ip "$g" "$p" $k)/' &&
				ip -6 addr show dev $dev | grep -q ' $(link_ip -6 "$g" "$p" $k)/'" || {
				diag "$g: $dev lacks the addresses of link $k to $p"
				return 1
			}
		done
	done
}
# reach <client>: it pings both servers over each link, IPv4 and IPv6.
reach() {
	local c=$1 s k
	for s in server server2; do
		for k in 0 1; do
			at "$c" "ping -c 1 -W 2 $(link_ip "$s" "$c" $k) >/dev/null &&
				ping -6 -c 1 -W 2 $(link_ip -6 "$s" "$c" $k) >/dev/null" || {
				diag "$c cannot reach $s over link $k"
				return 1
			}
		done
	done
}

check "the shape is 2 servers, 2 clients, 2 links: $(topo_guests | xargs)" \
	[ "$(topo_guests | xargs)" = "server server2 client client2" ]
names_ok() {
	local g
	for g in server server2 client2; do [ "$(on_guest $g hostname)" = $g ] || return 1; done
}
all_addrs_ok() {
	local g
	for g in server server2 client client2; do addrs_ok $g || return 1; done
}
check "every guest answers on its channel, under its name" names_ok
check "every guest has its links' addresses" all_addrs_ok
check "each client reaches each server over each link" eval 'reach client && reach client2'
host_request kill client2
check "client2, killed, is gone: the server no longer reaches it" \
	wait_for 60 on_server "! ping -c 1 -W 1 $(link_ip client2 server 0) >/dev/null"
host_request start client2
check "client2, booted again, answers" wait_for 300 eval 'AT_TIMEOUT=5 at client2 true'
check "and has its addresses and links again" eval 'addrs_ok client2 && reach client2'
check "no kernel warning on any guest" eval '! dmesg_bad && ! on_server dmesg_bad &&
	! on_guest server2 dmesg_bad && ! on_guest client2 dmesg_bad'
ktap_finish
