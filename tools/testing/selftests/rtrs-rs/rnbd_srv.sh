#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=1200
# Our rnbd-server under the unmodified C rnbd-client, on our rtrs-server
# (stack rnbd) and on the C one (stack rnbd-c), against the C server (stack
# c) as the reference: map a null_blk rw, verified IO (and
# rnbd_fio_matrix), a discard that reads back as zeros, a
# second session maps it ro; the server's sysfs tree (names, modes, what the
# files show, a bad force_close write) must be the C server's; the ro
# mapping refuses writes; a second rw mapping from another session is
# refused (EPERM), a migration one is not; an unknown device is refused
# (ENOENT) with a log line; unmap removes the server's entry; force_close
# drops a session's device; dev_search_path with %SESSNAME% finds a device
# in the session's directory; unloading rnbd-server with a session mapping a
# device, and unloading everything afterwards, is clean.
#
# STACKS: the server stacks whose flow runs. make check: ours on our
# rtrs-server, "rnbd", after the C server's sysfs is recorded with the
# same two mappings as the reference; soak/: "c rnbd rnbd-c", where the
# whole flow on the C server, the control, records the reference.
. "$(dirname "$0")/lib.sh"

sess=rnbd-srv
ctl=/sys/class/rnbd-client/ctl
srvdevs=/sys/class/rnbd-server/ctl/devices
ref=/tmp/rnbd-srv-ref
ours=/tmp/rnbd-srv-ours
read -ra stacks <<<"${STACKS:-rnbd}"
ktap_plan $((${#stacks[@]} * 19 + 1))

trap rnbd_cleanup EXIT

# The device path clients map: /dev/nullb0, or relative to a
# dev_search_path.
dp=/dev/nullb0
map() { # <sessname> [options]: map $dp over link 0
	local s=$1
	shift
	echo "sessname=$s path=ip:$SERVER_IP0 device_path=$dp $*" >"$ctl/map_device"
}
# The client's devices/ link for session <s>, and its disk, e.g. rnbd1.
clt_link() { echo "$ctl/devices/${dp//\//!}@$1"; }
clt_dev() { basename "$(readlink -f "$(clt_link "$1")")"; }
mapped() { [ -L "$(clt_link "$1")" ] && [ -b "/dev/$(clt_dev "$1")" ]; }
unmap() { echo normal >"/sys/block/$(clt_dev "$1")/rnbd/unmap_device"; }
unmapped() { ! [ -e "$(clt_link "$1")" ]; }
# map_refused <error text> <sessname> [options]: the map fails with it.
map_refused() {
	local want=$1 out
	shift
	if out=$( (map "$@") 2>&1); then
		diag "map $* succeeded"
		return 1
	fi
	diag "map $*: ${out##*: }"
	[[ $out == *"$want"* ]]
}
rd() { fio --name=rd --filename="$1" --rw=read --bs=4k --size=64k --direct=1 --ioengine=psync >/dev/null 2>&1; }
wr() { fio --name=wr --filename="$1" --rw=write --bs=4k --size=64k --direct=1 --ioengine=psync >/dev/null 2>&1; }

# Non-zero bytes in the first MiB of <dev>.
nonzero() { dd if="$1" bs=64k count=16 2>/dev/null | tr -d '\0' | wc -c; }
# Fills the first MiB of <dev>, discards it, and reads zeros back (a
# memory-backed null_blk with discard=1 frees what is discarded).
discard_zeroes() {
	fio --name=fill --filename="$1" --rw=write --bs=64k --size=1M --direct=1 \
		--ioengine=psync --buffer_pattern=0xaa >/dev/null 2>&1 || return 1
	[ "$(nonzero "$1")" = 1048576 ] || { diag "the pattern did not land"; return 1; }
	blkdiscard -o 0 -l 1048576 "$1" || return 1
	[ "$(nonzero "$1")" = 0 ]
}

# On the server: the tree below ctl/, what the files show, a bad write.
srv_record() {
	local d=/sys/class/rnbd-server/ctl f
	sysfs_tree "$d"
	for f in "$d"/devices/nullb0/sessions/*/*; do
		printf '== %s\n' "${f#"$d"/}"
		cat "$f"
	done
	echo "block_dev -> $(basename "$(readlink "$d/devices/nullb0/block_dev")")"
	try_write "$d/devices/nullb0/sessions/$1" force_close 0
}
# srv_reload_rnbd <stack> [params]: on the server, rnbd-server of <stack>
# again, with [params], and the stack is <stack> again.
srv_reload_rnbd() {
	local st=$1
	shift
	rmmod rnbd_server || return 1
	case $st in
	c | rtrs) modprobe rnbd-server "$@" ;;
	*) insmod "$MODDIR/rnbd-server.ko" "$@" ;;
	esac && stack_is server "$st"
}
srv_entry() { on_server "test -e $srvdevs/nullb0/sessions/$1"; }
srv_logged() { on_server "kmsg_since $1 | grep -q '$2'"; }

# One stack on the server, the C rnbd-client on the client.
run_stack() {
	local st=$1 out=$2 dev ro

	on_server "srv_stack_load $st" || bail "$st: cannot load the server stack"
	clt_stack_load c || bail "cannot load the C client stack"
	on_server "diag \"\$(stack_files | tr '\n' ' ')\""

	check "$st: map rw, the disk appears" eval "map $sess && wait_for 60 mapped $sess"
	dev=/dev/$(clt_dev $sess)
	check "$st: fio writes 4 MiB randrw and verifies it" \
		fio_verify "$dev" --rw=randrw --bs=32k --iodepth=4 --size=4M
	rnbd_fio_matrix "$st" "$dev" 64
	check "$st: a discard reaches the disk: written data reads back as zeros" discard_zeroes "$dev"
	check "$st: a second session maps it ro" eval "map $sess-ro access_mode=ro && wait_for 60 mapped $sess-ro"
	ro=/dev/$(clt_dev $sess-ro)

	on_server "$(declare -f srv_record); srv_record $sess" >"$out" 2>&1
	on_server 'grep -H . /sys/module/rnbd_server/parameters/*' >>"$out" 2>&1
	if [ "$st" = c ]; then
		check "c: the reference server sysfs has both sessions" \
			eval "grep -q 'sessions/$sess-ro/read_only' '$out' && grep -q 'sessions/$sess/access_mode' '$out'"
	else
		check "$st: server sysfs tree, files and a bad write are the C server's" diff -u "$ref" "$out"
	fi

	check "$st: the ro mapping refuses writes and reads" eval "! wr $ro && rd $ro"

	on_server "kmsg_mark $st-rw2"
	check "$st: a second rw mapping from another session is refused with EPERM, and logged" \
		eval "map_refused 'Operation not permitted' $sess-rw2 && srv_logged $st-rw2 'with RW permissions failed'"

	check "$st: a migration mapping from another session is allowed, and unmapped" \
		eval "map $sess-mig access_mode=migration && wait_for 60 mapped $sess-mig &&
			on_server 'grep -qx migration $srvdevs/nullb0/sessions/$sess-mig/access_mode' &&
			unmap $sess-mig && wait_for 30 unmapped $sess-mig && wait_for 30 eval '! srv_entry $sess-mig'"

	on_server "kmsg_mark $st-enoent"
	check "$st: an unknown device is refused with ENOENT, and logged" \
		eval "map_refused 'No such file or directory' $sess-x device_path=/dev/rnbd-srv-none &&
			srv_logged $st-enoent 'failed to open the block device'"

	check "$st: unmapping the ro mapping removes its server entry" \
		eval "unmap $sess-ro && wait_for 30 unmapped $sess-ro && wait_for 30 eval '! srv_entry $sess-ro'"

	check "$st: force_close drops the device of a session, its IO fails" \
		eval "on_server 'echo 1 >$srvdevs/nullb0/sessions/$sess/force_close' &&
			wait_for 30 eval '! srv_entry $sess' && ! rd $dev"

	check "$st: unmap; the device is gone from the server's sysfs" \
		eval "unmap $sess && wait_for 30 unmapped $sess && wait_for 30 on_server '! test -e $srvdevs/nullb0'"

	# Devices in a per-session namespace: dev_search_path with %SESSNAME%.
	on_server "$(declare -f srv_reload_rnbd); mkdir -p /tmp/rnbd-srv/$sess && ln -sf /dev/nullb0 /tmp/rnbd-srv/$sess/disk &&
		srv_reload_rnbd $st dev_search_path=/tmp/rnbd-srv/%SESSNAME%" ||
		bail "$st: cannot reload rnbd-server with dev_search_path"
	dp=disk
	check "$st: dev_search_path with %SESSNAME% maps 'disk' of the session's directory" \
		eval "map $sess && wait_for 60 mapped $sess &&
			on_server 'grep -qx /tmp/rnbd-srv/%SESSNAME% /sys/module/rnbd_server/parameters/dev_search_path &&
				grep -qx disk $srvdevs/nullb0/sessions/$sess/mapping_path' &&
			fio_verify /dev/\$(clt_dev $sess) --rw=randrw --bs=4k --iodepth=4 --size=1M"

	check "$st: rmmod rnbd_server while a session has the device mapped" \
		on_server 'wait_for 30 rmmod rnbd_server && ! mod_loaded rnbd_server && ! dmesg_bad'
	echo force >"/sys/block/$(clt_dev $sess)/rnbd/unmap_device"
	dp=/dev/nullb0

	check "$st: client unloaded; the server stack unloads cleanly" \
		eval "unload_rnbd_rtrs && on_server 'wait_for 30 eval \"unload_rnbd_rtrs; ! mod_loaded rtrs_server\" && ! dmesg_bad'"
}

# The reference, where the flow on the C server does not record it: the C
# server's sysfs with the same two mappings, rw and ro, as run_stack makes
# them before it records (what it shows does not change with IO).
record_ref() {
	on_server "srv_stack_load c" && clt_stack_load c || bail "c: cannot load the C stacks"
	map $sess && wait_for 60 mapped $sess && map $sess-ro access_mode=ro && wait_for 60 mapped $sess-ro ||
		bail "c: the reference's mappings failed"
	on_server "$(declare -f srv_record); srv_record $sess" >"$ref" 2>&1
	on_server 'grep -H . /sys/module/rnbd_server/parameters/*' >>"$ref" 2>&1
	grep -q "sessions/$sess-ro/read_only" "$ref" && grep -q "sessions/$sess/access_mode" "$ref" ||
		bail "c: the reference server sysfs lacks a session"
	unmap $sess-ro && unmap $sess && wait_for 30 unmapped $sess-ro && wait_for 30 unmapped $sess &&
		unload_rnbd_rtrs -w 30 && on_server 'unload_rnbd_rtrs -w 30' || bail "c: cannot unmap and unload"
}

rxe_up || bail "rxe did not come up"
unload_rnbd_rtrs
# A null_blk still held by an rnbd-server would stay, without discard.
on_server 'unload_rnbd_rtrs -w 30 && { rmmod null_blk 2>/dev/null; ! mod_loaded null_blk; } &&
	modprobe null_blk nr_devices=1 gb=1 memory_backed=1 discard=1' ||
	bail "server: cannot load null_blk with discard"

[ "${stacks[0]}" = c ] || record_ref
for st in "${stacks[@]}"; do
	if [ "$st" = c ]; then run_stack c "$ref"; else run_stack "$st" "$ours"; fi
done

check "no kernel warnings on either side" eval "! dmesg_bad && on_server '! dmesg_bad'"
ktap_finish
