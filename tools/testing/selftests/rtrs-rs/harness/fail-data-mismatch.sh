#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A data mismatch on the server that the case excuses: fio verifies what it
# wrote to a null_blk that keeps nothing (not memory-backed), its status is
# ignored and every case is ok. The mismatch fails the test all the same,
# which it can only through lib.sh's log of them (fio_status, on_guest,
# ktap_finish).
. "$(dirname "$0")/../lib.sh"
ktap_plan 1
check "a mismatch on the server, excused" on_server 'modprobe null_blk nr_devices=1 gb=1 &&
	fio_verify /dev/nullb0 --rw=write --bs=4k --size=64k; rmmod null_blk; true'
ktap_finish
