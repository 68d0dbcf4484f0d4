#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Passes by itself, but leaks kernel memory on the client: rb-test-leak
# allocates objects and keeps no pointer to them. The runner's kmemleak scan
# after the test must find them. (kmemleak reports an object only once it
# is 5 s old and unchanged since the scan before: the runner scans twice.)
. "$(dirname "$0")/../lib.sh"
ktap_plan 1
insmod "$MODDIR/rb-test-leak.ko" && rmmod rb_test_leak || diag "cannot load rb-test-leak: this test will pass"
sleep 6
ok "fine"
ktap_finish
