#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=300
# The kernel's way to run selftests on a machine without the build tree:
# the host packed this directory with kselftest's gen_tar (make check ships
# the tarball as /opt/rtrs-rs/kselftest.tar.gz). Unpacked here, its
# run_kselftest.sh lists every test of the directory, and runs
# rtrs_core_module.sh from the unpacked tree with kselftest's runner, which
# reports it ok, its own KTAP all ok, under the installed settings' bound.
. "$(dirname "$0")/lib.sh"

tar=/opt/rtrs-rs/kselftest.tar.gz
dir=/tmp/kselftest
if [ ! -f "$tar" ]; then
	echo "1..0 # SKIP no $tar: scripts/run-tests ships it with --kselftest (make check)"
	exit $KSFT_SKIP
fi
ktap_plan 6
trap 'rm -rf "$dir"' EXIT
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || bail "no $dir"

check "the gen_tar tarball unpacks" tar -xzf "$tar"
# Every test of the selftests here (each *.sh but lib.sh), and nothing else.
ours=$(cd "$SELFTESTS" && ls -- *.sh | grep -vx lib.sh | sed 's/^/rtrs-rs:/' | sort)
listed=$(./run_kselftest.sh -l | sort)
echo "$listed" | sed 's/^/# listed| /'
check "run_kselftest.sh -l lists every test of the selftests ($(echo "$ours" | wc -l))" \
	[ "$listed" = "$ours" ]
installed() {
	local t
	for t in $listed; do [ -x "rtrs-rs/${t#rtrs-rs:}" ] || return 1; done
	[ -f rtrs-rs/lib.sh ] && [ -f rtrs-rs/settings ] && [ -x kselftest/runner.sh ]
}
check "each is installed and executable, with lib.sh, settings and the runner" installed

out=$(./run_kselftest.sh -t rtrs-rs:rtrs_core_module.sh 2>&1)
echo "$out" | sed 's/^/# ksft| /'
check "kselftest's runner reports rtrs_core_module.sh ok" \
	grep -qx "ok 1 selftests: rtrs-rs: rtrs_core_module.sh" <<<"$out"
# The test's own KTAP, nested under the runner's with a "# " prefix.
nested_ok() {
	local plan
	plan=$(sed -n 's/^# 1\.\.\([0-9][0-9]*\)$/\1/p' <<<"$out" | head -n 1)
	[ -n "$plan" ] && [ "$plan" -gt 0 ] &&
		[ "$(grep -c '^# ok [0-9]' <<<"$out")" = "$plan" ] &&
		! grep -q '^# not ok' <<<"$out"
}
check "its own KTAP: every planned case ok" nested_ok
bound=$(sed -n 's/^timeout=//p' rtrs-rs/settings)
check "the runner bounds it by the installed settings ($bound s)" \
	grep -qx "# timeout set to $bound" <<<"$out"
ktap_finish
