#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=300
# rust-bindings, rdma_cm and verbs, across the two guests: loading
# rb-test-rdma-clt runs its checks against rb-test-rdma-srv (connect with
# private data, SEND/RECV with IMM, RDMA WRITE with IMM and READ of known
# patterns compared byte for byte, MR invalidation and re-keying, pages sent
# from an MR mapped for each under a new key, a READ with
# the stale key that must fail, a rejected handshake). Then the server's rxe
# device is deleted under a live connection: both sides must drop it from
# their event handlers, and unloading must leave no live object.
. "$(dirname "$0")/lib.sh"

ktap_plan 11
cleanup() {
	mod_loaded rb_test_rdma_clt && rmmod rb_test_rdma_clt
	on_server 'mod_loaded rb_test_rdma_srv && rmmod rb_test_rdma_srv; rxe_up_local' >/dev/null
}
trap cleanup EXIT

rxe_up || bail "rxe did not come up"
kmsg_mark rb_rdma
on_server "kmsg_mark rb_rdma; insmod $MODDIR/rb-test-rdma-srv.ko" || bail "cannot load rb-test-rdma-srv"

insmod "$MODDIR/rb-test-rdma-clt.ko"
rc=$?
log=$(kmsg_since rb_rdma | grep rb_test_rdma_clt)
echo "$log" | grep -E ' (not )?ok [0-9]+ - ' | sed 's/^.*rb_test_rdma_clt: /# /'
check "rb-test-rdma-clt loads: all of its checks pass" [ $rc = 0 ]
check "it ran its 14 checks" eval 'echo "$log" | grep -q "all 14 checks passed"'

srv=$(on_server 'kmsg_since rb_rdma | grep rb_test_rdma_srv')
check "server accepted A and B and rejected the bad handshake" eval \
	'[ "$(echo "$srv" | grep -c "accepted a connection")" = 2 ] &&
	 [ "$(echo "$srv" | grep -c "rejecting a request without the handshake")" = 1 ]'
check "server: the client's RDMA WRITE arrived intact" \
	eval 'echo "$srv" | grep -q "client wrote 163840 bytes, 0 differ"'

check "deleting the server's rxe0 under connection B completes" on_server -t 60 'rdma link delete rxe0'
check "server: B is closed from its DEVICE_REMOVAL handler" \
	wait_for 30 eval 'on_server "kmsg_since rb_rdma" | grep -q "closing connection (device removal)"'
check "client: B is closed from its own event handler" \
	wait_for 60 eval 'kmsg_since rb_rdma | grep -q "B: closed, dropping it"'
check "rxe0 comes back on the server" on_server rxe_up_local

check "rmmod rb-test-rdma-clt: no live object left" \
	eval 'rmmod rb_test_rdma_clt && kmsg_since rb_rdma | grep -q "rb_test_rdma_clt: exit, live objects 0"'
check "rmmod rb-test-rdma-srv: no live object left" \
	on_server 'rmmod rb_test_rdma_srv && kmsg_since rb_rdma | grep -q "rb_test_rdma_srv: exit, live objects 0"'

# Everything was released: a second round works the same.
on_server "insmod $MODDIR/rb-test-rdma-srv.ko" || bail "cannot reload rb-test-rdma-srv"
check "a second load of both passes all checks again" insmod "$MODDIR/rb-test-rdma-clt.ko"
ktap_finish
