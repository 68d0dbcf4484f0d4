#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rust-bindings' sysfs and module parameters, through rb-test-sysfs.ko
# (rust-bindings/tests/rb_test_sysfs.rs): parameters set by insmod, read in
# sysfs and by the module, rejected with the right errno; the class, device,
# directories, attributes and links with their modes; attribute writes and
# their errnos; items created and removing themselves, many times and
# concurrently with readers; rmmod with items left; nothing left behind and
# every sysfs object's data freed (the module counts them); rmmod while
# writers add and remove items.
# timeout=900
. "$(dirname "$0")/lib.sh"

ko=$MODDIR/rb-test-sysfs.ko
mod=rb_test_sysfs
params=/sys/module/$mod/parameters
ctl=/sys/class/rb-test/ctl
devpath=/devices/virtual/rb-test/ctl
events=/tmp/rb-sysfs-uevents
loops=200

ktap_plan 64

uevent_pid=
cleanup() {
	[ -n "$uevent_pid" ] && kill "$uevent_pid" 2>/dev/null
	mod_loaded $mod && rmmod $mod
	rm -f "$events" /tmp/rb-sysfs-*.err /tmp/rb-sysfs-*.n /tmp/rb-sysfs-stop
}
trap cleanup EXIT

[ -f "$ko" ] || bail "$ko is missing"
mod_loaded $mod && rmmod $mod

# write_err <file> <value>: write "<value>\n" with one write(2) and print the
# error message of the failing call (the errno's strerror), or "ok".
write_err() {
	local err
	if err=$({ printf '%s\n' "$2" >"$1"; } 2>&1); then
		echo ok
	else
		echo "${err##*: }"
	fi
}

# expect <what> <expected> <actual>: one check of equal strings, with both
# shown when they differ.
expect() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		fail "$1"
		diag "expected '$2', got '$3'"
	fi
}

# insmod_err <args...>: insmod with parameters that must be refused; prints
# insmod's message for the errno (kmod: EINVAL is "Invalid parameters",
# others their strerror), or "loaded".
insmod_err() {
	local out
	if out=$(insmod "$ko" "$@" 2>&1); then
		rmmod $mod
		echo loaded
	else
		echo "${out##*: }"
	fi
}

mode() { stat -c %a "$1" 2>/dev/null; }

# --- parameters refused at insmod -------------------------------------------
expect "insmod count=abc fails with EINVAL" "Invalid parameters" "$(insmod_err count=abc)"
check "the kernel names the bad value" eval "dmesg | grep -q \"\\\`abc' invalid for parameter \\\`count'\""
expect "insmod port=70000 (ushort) fails with ERANGE" "Numerical result out of range" \
	"$(insmod_err port=70000)"
expect "insmod enable=maybe fails with EINVAL" "Invalid parameters" "$(insmod_err enable=maybe)"
expect "insmod label= (empty, custom set) fails with EINVAL" "Invalid parameters" "$(insmod_err label=)"
long=$(printf 'x%.0s' $(seq 33))
expect "insmod label=<33 chars> (custom set) fails with EINVAL" "Invalid parameters" \
	"$(insmod_err label="$long")"
check "nothing of the module is left" eval "! mod_loaded $mod && [ ! -e /sys/class/rb-test ]"

# --- parameters set at insmod -----------------------------------------------
rm -f "$events"
uevent sh -c "echo \"\$ACTION \$DEVPATH\" >>$events" &
uevent_pid=$!
# The listener must be bound before the module sends its uevents: wait for
# one of our own (a synthetic "change" of a device that always exists).
wait_for 10 eval "echo change >/sys/class/mem/null/uevent; grep -qs 'change /devices/virtual/mem/null' $events" ||
	diag "the uevent listener does not see events"

check "insmod enable count=-42 limit=0x10 port=8080 label=hello" \
	insmod "$ko" enable count=-42 limit=0x10 port=8080 label=hello
p() { cat "$params/$1" 2>/dev/null; }
expect "enable (bool given without a value) is Y" Y "$(p enable)"
expect "count (int) is -42" -42 "$(p count)"
expect "limit (uint, given in hex) is 16" 16 "$(p limit)"
expect "port (ushort) is 8080" 8080 "$(p port)"
expect "label (string) is hello" hello "$(p label)"
expect "the module reads the same values" \
	"$(printf 'enable=Y\ncount=-42\nlimit=16\nport=8080\nlabel=hello')" "$(cat $ctl/params)"
expect "parameter modes: enable 644 count 644 limit 444 port 444 label 644" \
	"644 644 444 444 644" \
	"$(mode $params/enable) $(mode $params/count) $(mode $params/limit) $(mode $params/port) $(mode $params/label)"

# --- parameters changed at runtime ------------------------------------------
expect "write enable=N" ok "$(write_err $params/enable N)"
expect "write count=7" ok "$(write_err $params/count 7)"
expect "write label=world" ok "$(write_err $params/label world)"
expect "the module reads the new values" \
	"$(printf 'enable=N\ncount=7\nlimit=16\nport=8080\nlabel=world')" "$(cat $ctl/params)"
expect "write count=abc fails with EINVAL" "Invalid argument" "$(write_err $params/count abc)"
expect "write enable=maybe fails with EINVAL" "Invalid argument" "$(write_err $params/enable maybe)"
expect "write an empty label fails with EINVAL" "Invalid argument" "$(write_err $params/label '')"
expect "write a 33-character label fails with EINVAL" "Invalid argument" \
	"$(write_err $params/label "$long")"
expect "write limit (0444) fails with EACCES" "Permission denied" "$(write_err $params/limit 1)"
expect "refused writes changed nothing" \
	"$(printf 'enable=N\ncount=7\nlimit=16\nport=8080\nlabel=world')" "$(cat $ctl/params)"

# --- class, device, directories, attributes ---------------------------------
expect "/sys/class/rb-test/ctl links to $devpath" "$(readlink -f /sys/devices/virtual/rb-test/ctl)" \
	"$(readlink -f $ctl)"
expect "ctl attribute modes: add 644 nr_items 444 live 444 params 444" "644 444 444 444" \
	"$(mode $ctl/add) $(mode $ctl/nr_items) $(mode $ctl/live) $(mode $ctl/params)"
check "ctl/items and ctl/links are directories" test -d $ctl/items -a -d $ctl/links
expect "ctl/items/ctl links back to ctl" "$(readlink -f $ctl)" "$(readlink -f $ctl/items/ctl)"
check "KOBJ_ADD of ctl was sent" wait_for 10 grep -qsx "add $devpath" "$events"
expect "live objects: ctl, items, links" 3 "$(cat $ctl/live)"

# --- items ---------------------------------------------------------------
item=$ctl/items/a1
expect "add a1" ok "$(write_err $ctl/add a1)"
expect "item attribute modes: name 444 value 644 remove 200" "444 644 200" \
	"$(mode $item/name) $(mode $item/value) $(mode $item/remove)"
expect "a1/name reads a1" a1 "$(cat $item/name)"
expect "ctl/links/a1 links to ctl/items/a1" "$(readlink -f $item)" "$(readlink -f $ctl/links/a1)"
expect "nr_items 1, live 4" "1 4" "$(cat $ctl/nr_items) $(cat $ctl/live)"
expect "write value 500" ok "$(write_err $item/value 500)"
expect "value reads 500" 500 "$(cat $item/value)"
expect "write value 1001 (out of range) fails with EINVAL" "Invalid argument" \
	"$(write_err $item/value 1001)"
expect "write value abc fails with EINVAL" "Invalid argument" "$(write_err $item/value abc)"
expect "value still reads 500" 500 "$(cat $item/value)"
expect "read remove (0200) fails with EACCES" "Permission denied" \
	"$(cat $item/remove 2>&1 >/dev/null | sed 's/.*: //')"
expect "add a1 again fails with EEXIST" "File exists" "$(write_err $ctl/add a1)"
expect "add a/b fails with EINVAL" "Invalid argument" "$(write_err $ctl/add a/b)"
expect "add '' fails with EINVAL" "Invalid argument" "$(write_err $ctl/add '')"
expect "write remove 2 fails with EINVAL" "Invalid argument" "$(write_err $item/remove 2)"
expect "write remove 1: the item removes itself" ok "$(write_err $item/remove 1)"
check "a1 and its link are gone" test ! -e $item -a ! -e $ctl/links/a1
expect "nr_items 0, live 3: a1 was freed" "0 3" "$(cat $ctl/nr_items) $(cat $ctl/live)"

# Two writers with the remove file open race to remove one item, 20 times:
# each time one wins and the other fails with ENODEV (it lost the
# kernfs_remove_self arbitration, or found the file removed).
fd_write_err() { # <fd>
	local err
	if err=$({ printf '1\n' >&"$1"; } 2>&1); then
		echo ok
	else
		echo "${err##*: }"
	fi
}
race() { # <name>: prints the two writers' results, sorted
	local f=$ctl/items/$1/remove pid1 pid2
	[ "$(write_err $ctl/add "$1")" = ok ] || return 1
	exec 5>"$f" 6>"$f"
	fd_write_err 5 >/tmp/rb-sysfs-race1.err &
	pid1=$!
	fd_write_err 6 >/tmp/rb-sysfs-race2.err &
	pid2=$!
	wait $pid1 $pid2
	exec 5>&- 6>&-
	sort /tmp/rb-sysfs-race1.err /tmp/rb-sysfs-race2.err | tr '\n' ,
}
races=$(for i in $(seq 20); do race r$i; echo; done | sort | uniq -c | sed 's/^ *//')
diag "racing removals (count results): $(echo $races); $(cat $ctl/lost_removals) lost in remove_self"
expect "20 racing removals: one wins, the other fails with ENODEV" \
	"20 No such device,ok," "$races"
expect "the raced items are gone, live 3" "0 3" "$(cat $ctl/nr_items) $(cat $ctl/live)"

# Two workers create, write, read and remove (self-removal) $loops items in
# all, while a reader reads every attribute it finds.
worker() { # <prefix> <count>
	local i d
	for ((i = 0; i < $2; i++)); do
		d=$ctl/items/$1$i
		[ "$(write_err $ctl/add $1$i)" = ok ] || { echo "add $1$i"; continue; }
		[ "$(write_err $d/value $((i - 500)))" = ok ] || echo "value $1$i"
		[ "$(cat $d/value)" = $((i - 500)) ] || echo "read $1$i"
		[ "$(write_err $d/remove 1)" = ok ] || echo "remove $1$i"
		[ ! -e $d ] || echo "left $1$i"
	done
}
reader() {
	while [ ! -e /tmp/rb-sysfs-stop ]; do
		cat $ctl/items/*/name $ctl/items/*/value $ctl/links/*/value \
			$ctl/nr_items $ctl/live $ctl/params >/dev/null 2>&1
	done
}
rm -f /tmp/rb-sysfs-stop
reader &
rpid=$!
worker w $((loops / 2)) >/tmp/rb-sysfs-w.err 2>&1 &
wpid=$!
worker v $((loops / 2)) >/tmp/rb-sysfs-v.err 2>&1
wait $wpid
touch /tmp/rb-sysfs-stop
wait $rpid
rm -f /tmp/rb-sysfs-stop
errs=$(cat /tmp/rb-sysfs-w.err /tmp/rb-sysfs-v.err)
[ -z "$errs" ] || diag "failed: $(echo $errs | head -c 400)"
check "$loops items created and removed by themselves, with concurrent readers" [ -z "$errs" ]
expect "none left, live 3: every item was freed" "0 3" "$(cat $ctl/nr_items) $(cat $ctl/live)"

# --- rmmod with items left ---------------------------------------------------
for i in 1 2 3 4 5; do write_err $ctl/add k$i >/dev/null; done
expect "5 items left for rmmod, live 8" "5 8" "$(cat $ctl/nr_items) $(cat $ctl/live)"
check "rmmod with items left" rmmod $mod
check "nothing of the class is left" \
	eval "[ ! -e /sys/class/rb-test ] && [ ! -e /sys/devices/virtual/rb-test ] && ! mod_loaded $mod"
expect "the module freed every sysfs object" "$mod: exit: 0 live objects" \
	"$(dmesg | grep -o "$mod: exit: .*" | tail -1)"
check "KOBJ_REMOVE of ctl was sent" wait_for 10 grep -qsx "remove $devpath" "$events"

# --- rmmod under load -------------------------------------------------------
# Writers add and remove items in a loop while rmmod runs: rmmod fails with
# EBUSY while a removal holds the module, and then succeeds; stores that run
# while the module goes away fail, and exit removes what is left.
churn() { # <prefix>: until stopped; counts its rounds in /tmp/rb-sysfs-<prefix>.n
	local i=0
	while [ ! -e /tmp/rb-sysfs-stop ]; do
		printf '%s\n' $1$i >$ctl/add
		printf '1\n' >$ctl/items/$1$i/remove
		i=$((i + 1))
		echo $i >/tmp/rb-sysfs-$1.n
	done 2>/dev/null
}
rounds() { # <prefix>
	local n
	n=$(cat /tmp/rb-sysfs-$1.n 2>/dev/null)
	echo "${n:-0}"
}
rmmod_tries=0
rmmod_try() {
	rmmod_tries=$((rmmod_tries + 1))
	rmmod $mod 2>/dev/null
}
rm -f /tmp/rb-sysfs-stop /tmp/rb-sysfs-*.n
check "insmod again" insmod "$ko"
churn x &
xpid=$!
churn y &
ypid=$!
reader &
rpid=$!
check "two writers add and remove items" wait_for 60 eval '[ $(rounds x) -ge 20 ] && [ $(rounds y) -ge 20 ]'
check "rmmod under load (retried while EBUSY)" wait_for 60 rmmod_try
touch /tmp/rb-sysfs-stop
wait $xpid $ypid $rpid
rm -f /tmp/rb-sysfs-stop
diag "rounds before the module went: x $(rounds x), y $(rounds y); rmmod tries: $rmmod_tries"
check "nothing of the class is left" \
	eval "[ ! -e /sys/class/rb-test ] && [ ! -e /sys/devices/virtual/rb-test ] && ! mod_loaded $mod"
expect "the module freed every sysfs object" "$mod: exit: 0 live objects" \
	"$(dmesg | grep -o "$mod: exit: .*" | tail -1)"
check "no kernel warnings" eval "! dmesg_bad"
ktap_finish
