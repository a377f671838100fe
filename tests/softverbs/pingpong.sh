#!/bin/sh
# SPDX-License-Identifier: MIT
# Two hosts (network namespaces) joined by a veth "cable" en2 with /30
# addresses and a management link en0; a UC ping-pong over the softverbs
# device rdma_en2 (messages of 1 KiB to 512 KiB, every byte checked), then
# the cable is taken down mid-run: the port goes down and nothing arrives;
# once it is back up, traffic flows again. Needs root.
. "$top_srcdir/tests/lib/tap.sh"

need_root "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip_all "needs iproute2 (ip)"
pp="$top_builddir/tests/softverbs/pingpong"
unset SOFTVERBS_IFACES SOFTVERBS_MGMT_IFACE JACCL_IBVERBS_LIB
a="sv$$a"
b="sv$$b"
spid=
cpid=
cleanup() {
	for p in $spid $cpid; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del "$a" 2>/dev/null
	ip netns del "$b" 2>/dev/null
	rm -rf "$t"
}
ip netns add "$a" 2>/dev/null || skip_all "cannot create a network namespace"
trap cleanup EXIT
ip netns add "$b"

ip -n "$a" link add en2 type veth peer name en2 netns "$b" &&
	ip -n "$a" link add en0 type veth peer name en0 netns "$b" &&
	ip -n "$a" addr add 10.233.0.1/30 dev en2 &&
	ip -n "$b" addr add 10.233.0.2/30 dev en2 &&
	ip -n "$a" addr add 10.233.0.5/30 dev en0 &&
	ip -n "$b" addr add 10.233.0.6/30 dev en0 &&
	for n in "$a" "$b"; do
		ip -n "$n" link set lo up &&
		ip -n "$n" link set en0 up &&
		ip -n "$n" link set en2 up || exit 1
	done
ok $? "two hosts, cable en2 10.233.0.1/30 - 10.233.0.2/30, management en0"

# The kernel reports carrier (operstate UP) a moment after "link set up";
# until then the port is down, as a Thunderbolt port is just after plugging.
wait_up() { # wait_up NS IFACE
	i=0
	until ip -n "$1" -o link show "$2" | grep -q 'state UP'; do
		i=$((i + 1))
		[ $i -gt 200 ] && return 1
		sleep 0.05
	done
}
wait_up "$a" en2 && wait_up "$b" en2 && wait_up "$a" en0 && wait_up "$b" en0
ok $? "cable and management links have carrier"

ip netns exec "$a" env SOFTVERBS_DEBUG=1 "$pp" -a 10.233.0.5 -n ${PP_ITERS:-10} -w "$t" > "$t/server" 2>&1 &
spid=$!
ip netns exec "$b" env SOFTVERBS_DEBUG=1 "$pp" -c -a 10.233.0.5 -n ${PP_ITERS:-10} -w "$t" > "$t/client" 2>&1 &
cpid=$!

# wait_files NAME: until both ends created NAME.server and NAME.client
wait_files() {
	i=0
	while [ ! -e "$t/$1.server" ] || [ ! -e "$t/$1.client" ]; do
		i=$((i + 1))
		if [ $i -gt 1200 ] || ! kill -0 $spid 2>/dev/null ||
		    ! kill -0 $cpid 2>/dev/null; then
			return 1
		fi
		sleep 0.05
	done
}

wait_files ready1
ok $? "both ends finished the ping-pong and wait for the cable to go down"
ip -n "$a" link set en2 down
touch "$t/go1.server" "$t/go1.client"
wait_files ready2
ok $? "both ends checked the cable-down behaviour"
ip -n "$a" link set en2 up
touch "$t/go2.server" "$t/go2.client"

wait $spid
sst=$?
wait $cpid
cst=$?
spid=
cpid=
ok $sst "server exits 0"
ok $cst "client exits 0"
if [ $sst -ne 0 ] || [ $cst -ne 0 ]; then
	# where datagrams went missing, if the kernel counted them
	for n in "$a" "$b"; do
		diag "$n: $(ip netns exec "$n" sh -c 'grep "^Udp:" /proc/net/snmp | tail -1')"
		diag "$(ip -n "$n" -s link show en2)"
	done
	grep -h 'softverbs:' "$t/server" "$t/client" | tail -20 | while read -r l; do diag "$l"; done
fi

size=1024
while [ $size -le 524288 ]; do
	grep -q "^pingpong: server: $size bytes: 10 round trips ok" "$t/server" &&
		grep -q "^pingpong: client: $size bytes: 10 round trips ok" "$t/client"
	ok $? "$size-byte messages both ways, contents checked"
	size=$((size * 2))
done
grep -q '^pingpong: server: port down: ok' "$t/server" &&
	grep -q '^pingpong: client: port down: ok' "$t/client"
ok $? "both ports report PORT_DOWN while the cable is down"
grep -q '^pingpong: client: 4 sends completed while down: ok' "$t/client"
ok $? "UC sends still complete successfully (no error completion)"
grep -q '^pingpong: server: no completion while down: ok' "$t/server"
ok $? "the receiver sees nothing while the cable is down"
grep -q '^pingpong: server: traffic after link up: ok' "$t/server"
ok $? "traffic flows again once the cable is back"
sed -n 's/^pingpong: client: \([0-9]* bytes\): [0-9]* round trips ok, /\1: /p' \
	"$t/client" | diag "$(cat)"
grep -h 'error' "$t/server" "$t/client" | while read -r l; do diag "$l"; done
done_testing
