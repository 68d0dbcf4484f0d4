#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=600
# The operator's way: the host ran `make install INSTALL_MOD_PATH=<stage>`
# (make check does), and the staged tree came into the guests with the
# selftests (/opt/rtrs-rs/stage). Each guest puts it beside its kernel's
# modules and runs depmod, as make install does on a real machine; then
# only modprobe and the sysfs writes of the README: modprobe rnbd_server
# and rnbd_client load ours with their dependencies, a device maps over two
# paths and verifies IO, modprobe -r unloads them. Then the install is
# undone (its files removed, depmod again) and modprobe loads C's modules,
# and modprobe -r unloads those the same way. (kmod's modprobe -r tries a
# module's dependencies in the reverse of modules.dep's order: rtrs_core
# first, still in use by rtrs_client then, so it stays until `modprobe -r
# rtrs_core`, for C's modules as for ours.)
. "$(dirname "$0")/lib.sh"

stage=/opt/rtrs-rs/stage/lib/modules/$(uname -r)/updates
ktap_plan 10

# uninstall: what install put there, gone, and depmod again.
uninstall() {
	rm -rf "/lib/modules/$(uname -r)/updates" && depmod -a
}
cleanup() {
	[ -e /sys/block/rnbd0/rnbd/unmap_device ] && echo force >/sys/block/rnbd0/rnbd/unmap_device
	modprobe -r rnbd_client 2>/dev/null
	uninstall
	on_server "modprobe -r rnbd_server 2>/dev/null; $(declare -f uninstall); uninstall; rmmod null_blk 2>/dev/null; true"
	unload_rnbd_rtrs
	true
}
trap cleanup EXIT
# ours <module...>: each is loaded and is ours.
ours() { local m; for m; do mod_loaded "$m" && mod_is_ours "$m" || return 1; done; }
install_here() {
	[ -d "$stage" ] && unload_rnbd_rtrs && mkdir -p "/lib/modules/$(uname -r)" &&
		cp -a "$stage" "/lib/modules/$(uname -r)/" && depmod -a
}

rxe_up || bail "rxe did not come up"
check "the staged install goes in on both guests, depmod runs" eval '
	install_here && on_server "$(declare -f install_here); stage=$stage; install_here"'
check "modinfo names the installed rnbd-client, not the in-tree one" \
	eval 'modinfo -n rnbd_client | grep -q "/updates/rnbd/rnbd-client.ko"'
check "server: modprobe rnbd_server loads ours, with rtrs-server and rtrs-core" \
	on_server "modprobe null_blk nr_devices=1 gb=1 memory_backed=1 && modprobe rnbd_server &&
		$(declare -f ours); ours rnbd_server rtrs_server rtrs_core"
check "client: modprobe rnbd_client loads ours, with rtrs-client and rtrs-core" \
	eval 'modprobe rnbd_client && ours rnbd_client rtrs_client rtrs_core'
check "the README's map_device: a device over two paths" eval '
	echo "sessname=inst path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0" \
		>/sys/class/rnbd-client/ctl/map_device && wait_for 60 test -b /dev/rnbd0'
check "verified IO" fio_verify /dev/rnbd0 --rw=randrw --bs=4k --iodepth=16 --size=4M
# unload_modprobe: modprobe -r rnbd_client, then rtrs_core if it stayed;
# prints "rtrs_core stayed" or "rtrs_core went" for the comparison.
unload_modprobe() {
	modprobe -r rnbd_client && ! mod_loaded rnbd_client && ! mod_loaded rtrs_client || return 1
	if mod_loaded rtrs_core; then
		echo "rtrs_core stayed"
		modprobe -r rtrs_core && ! mod_loaded rtrs_core
	else
		echo "rtrs_core went"
	fi
}
check "unmap, and modprobe -r unloads ours" eval '
	echo normal >/sys/block/rnbd0/rnbd/unmap_device && wait_for 30 test ! -e /dev/rnbd0 &&
	ours_unload=$(unload_modprobe)'
diag "ours: modprobe -r rnbd_client: ${ours_unload:-failed}"
check "uninstalled: modprobe loads the C modules again" eval '
	uninstall && modprobe rnbd_client && mod_loaded rnbd_client && ! mod_is_ours rnbd_client &&
	! mod_is_ours rtrs_client && ! mod_is_ours rtrs_core'
check "modprobe -r unloads C's as it unloads ours" eval '
	c_unload=$(unload_modprobe) && diag "C: modprobe -r rnbd_client: $c_unload" &&
	[ "$c_unload" = "$ours_unload" ]'
check "no kernel warning on either side" eval '! dmesg_bad && ! on_server dmesg_bad'
ktap_finish
