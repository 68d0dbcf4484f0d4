#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# timeout=900
# Every writable sysfs file of the four modules, on the client and on the
# server, with a device mapped over two paths, gets malformed input: a lone
# newline, NUL bytes, numbers out of range or with junk, format
# strings, 5000 bytes, non-UTF-8, and 24 strings of random bytes (the same
# ones on every run: bash's RANDOM, seeded). Each write must fail with an
# errno; afterwards the sysfs trees and what their files show (counters
# aside) are what they were, IO verifies, and neither kernel logged a
# warning. Run on our stack (rnbd on rtrs) and on C's (stack c), which must
# refuse the same writes; where the two give different errnos, the test
# says which.
. "$(dirname "$0")/lib.sh"

sess=badin
ccls=/sys/class/rtrs-client
map="sessname=$sess path=ip:$SERVER_IP0 path=ip:$SERVER_IP1 device_path=/dev/nullb0"
ktap_plan 16

cleanup() { rnbd_cleanup; }
trap cleanup EXIT

# The inputs, as printf formats (NUL bytes cannot live in a shell variable).
inputs() {
	local i n j s h
	printf '%s\n' '\n' '\n\n' ' ' '\0' '\0001' '-2' '99999999999999999999999' \
		'0x' '0x1g' '1 1' '1junk' '+-1' '%%s%%s%%s%%n' '\xff\xfe\x80' 'ip:' 'ip:999.1.1.1' \
		'path=' 'sessname=' 'sessname=x path=ip:1.2.3.4 device_path=../../etc/passwd' \
		'gid:zz' 'normalx' 'forcee' 'Y' 'yes' 'on'
	# 5000 bytes: more than a page, which sysfs hands over in pieces.
	printf 'a%.0s' $(seq 5000)
	echo
	RANDOM=4242
	for ((i = 0; i < 24; i++)); do
		n=$((RANDOM % 300 + 1))
		s=
		for ((j = 0; j < n; j++)); do
			printf -v h '\\x%02x' $((RANDOM % 256))
			s+=$h
		done
		echo "$s"
	done
}

# The writable files of this guest's rtrs/rnbd sysfs, one per line.
writable() {
	find /sys/class/rtrs-client/*/ /sys/class/rtrs-server/*/ /sys/class/rnbd-client/ctl/ \
		/sys/class/rnbd-server/ctl/ /sys/block/rnbd*/rnbd/ -type f -perm -u+w 2>/dev/null | sort
}

# Whether an input could be a valid value somewhere: never written. The
# kernel's string functions stop at a NUL, and every file takes a newline.
valid() {
	local v
	v=$(printf -- "$1" | tr '\0' '\n' | head -1 | sed 's/[[:space:]]*$//')
	case $v in
	normal | force | round-robin | min-inflight | min-latency | rr | mi | ml) return 0 ;;
	esac
	# Numbers (resize takes any) that kstrtoull does not overflow.
	[[ $v = -1 || $v =~ ^[0-9]{1,19}$ ]]
}

# Writes every input to every writable file; one line each:
# "<file> <input #>: ok|<error>". No command substitution per write: forks
# are slow in these guests.
hammer() {
	local f fmt i err ins=() skip=()
	mapfile -t ins < <(inputs)
	for i in "${!ins[@]}"; do
		valid "${ins[$i]}" && skip[$i]=1
	done
	for f in $(writable); do
		for i in "${!ins[@]}"; do
			[ -n "${skip[$i]}" ] && continue
			if printf -- "${ins[$i]}" 2>/tmp/bad-err >"$f"; then
				echo "$f $((i + 1)): ok"
			else
				read -r err </tmp/bad-err
				echo "$f $((i + 1)): ${err##*: }"
			fi
		done
	done
}

# The state to keep: the trees of this guest's rtrs/rnbd sysfs and what
# their files show, statistics aside.
snapshot() {
	local d f
	for d in /sys/class/rtrs-client/*/ /sys/class/rtrs-server/*/ /sys/class/rnbd-client/ctl/ \
		/sys/class/rnbd-server/ctl/ /sys/block/rnbd*/rnbd/; do
		[ -d "$d" ] || continue
		sysfs_tree "$d" | sed "s|^|$d |"
		find "$d" -type f -perm -u+r ! -path '*/stats/*' ! -name cur_latency ! -name uevent |
			sort | while read -r f; do
			echo "$f: $(head -c 512 "$f" 2>&1 | tr '\n' ' ')"
		done
	done
}

# same <before> <snapshot command>: the snapshot equals <before>; shows the
# difference if not.
same() {
	local rc
	"${@:2}" | diff -u "$1" - >/tmp/bad-diff
	rc=$?
	head -20 /tmp/bad-diff | sed 's/^/# /'
	return $rc
}
srv_snapshot() { on_server "$(declare -f snapshot sysfs_tree); snapshot"; }

rxe_up || bail "rxe did not come up"
for stack in rnbd c; do
	check "$stack: map over two paths" eval "on_server 'srv_stack_load $stack' &&
		clt_stack_load $stack && echo '$map' >/sys/class/rnbd-client/ctl/map_device &&
		wait_for 60 test -b /dev/rnbd0 &&
		wait_for 30 eval '[ \$(cat $ccls/$sess/paths/*/state | grep -c connected) = 2 ]'"
	diag "$stack: $(stack_files | tr '\n' ' ')"
	kmsg_mark "bad-$stack"
	on_server "kmsg_mark bad-$stack"
	snapshot >/tmp/bad-$stack.before
	srv_snapshot >/tmp/bad-$stack.srv-before
	hammer >/tmp/bad-$stack.clt
	on_server "$(declare -f hammer inputs writable valid); hammer" >/tmp/bad-$stack.srv
	n=$(cat /tmp/bad-$stack.clt /tmp/bad-$stack.srv | wc -l)
	ok=$(cat /tmp/bad-$stack.clt /tmp/bad-$stack.srv | grep -c ': ok$')
	diag "$stack: $n writes to $(cut -d' ' -f1 /tmp/bad-$stack.clt /tmp/bad-$stack.srv | sort -u | wc -l) files"
	grep ': ok$' /tmp/bad-$stack.clt /tmp/bad-$stack.srv | head -5 | sed 's/^/# accepted: /'
	check "$stack: every bad write fails with an errno" [ "$n" -gt 500 -a "$ok" = 0 ]
	check "$stack: client sysfs is as it was" same /tmp/bad-$stack.before snapshot
	check "$stack: server sysfs is as it was" same /tmp/bad-$stack.srv-before srv_snapshot
	check "$stack: IO verifies" fio_verify /dev/rnbd0 --rw=randrw --bs=4k --iodepth=16 --size=1M
	check "$stack: no warning on either side" eval '! dmesg_bad && on_server "! dmesg_bad"'
	check "$stack: unmap and unload" eval 'echo normal >/sys/block/rnbd0/rnbd/unmap_device &&
		wait_for 30 eval "! test -e $ccls/$sess" && unload_rnbd_rtrs &&
		on_server "wait_for 30 eval \"! test -e /sys/class/rtrs-server/$sess\" && unload_rnbd_rtrs"'
done
# Our files and C's have the same names (other tests compare the trees),
# so the lines compare directly.
diff <(cat /tmp/bad-c.clt /tmp/bad-c.srv) <(cat /tmp/bad-rnbd.clt /tmp/bad-rnbd.srv) |
	grep '^[<>]' | head -40 | sed 's/^/# C vs ours: /'
check "C and ours refuse on the same files" \
	eval 'diff <(cut -d" " -f1 /tmp/bad-c.clt /tmp/bad-c.srv | sort -u) <(cut -d" " -f1 /tmp/bad-rnbd.clt /tmp/bad-rnbd.srv | sort -u)'
check "C and ours answer every write with the same errno" \
	diff <(cat /tmp/bad-c.clt /tmp/bad-c.srv) <(cat /tmp/bad-rnbd.clt /tmp/bad-rnbd.srv)
ktap_finish
