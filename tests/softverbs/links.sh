#!/bin/sh
# SPDX-License-Identifier: MIT
# softverbs devices follow the interfaces of the network namespace: which
# ones become devices (SOFTVERBS_IFACES, SOFTVERBS_MGMT_IFACE), port state
# from up + carrier, GID[1] only while an IPv4 address is there, and
# ibv_alloc_pd refused while the port is down (as Apple's driver does).
# Uses a private network namespace with a veth pair; needs root.
. "$top_srcdir/tests/lib/tap.sh"

need_root "needs root for a network namespace"
command -v ip >/dev/null 2>&1 || skip_all "needs iproute2 (ip)"
info="$top_builddir/tests/softverbs/svinfo"
unset SOFTVERBS_IFACES SOFTVERBS_MGMT_IFACE SOFTVERBS_PD_NEEDS_LINK
ns="sv$$l"
other="sv$$k"	# holds the far end of en0
ip netns add "$ns" 2>/dev/null || skip_all "cannot create a network namespace"
trap 'ip netns del "$ns" 2>/dev/null; ip netns del "$other" 2>/dev/null; rm -rf "$t"' EXIT
ip netns add "$other"

ip -n "$ns" link add en2 address 02:00:00:00:00:02 type veth \
	peer name en3 address 02:00:00:00:00:03 &&
	ip -n "$ns" link add en0 type veth peer name m0 netns "$other" &&
	ip -n "$ns" link set en0 up
ok $? "namespace with en0 (management) and a veth pair en2-en3"

devices() { # devices [VAR=VALUE...]: the device names, on one line
	ip netns exec "$ns" env "$@" "$info" | sed -n 's/^device //p' | tr '\n' ' '
}
port() { # port DEVICE [VAR=VALUE...]: svinfo's lines for one device, in $t/out
	d=$1
	shift
	ip netns exec "$ns" env "$@" "$info" -d "$d" > "$t/out" 2>&1
	cat "$t/out"
}

is "$(devices)" "rdma_en2 rdma_en3 " "by default every interface but lo and en0"
is "$(devices SOFTVERBS_IFACES=en3)" "rdma_en3 " "SOFTVERBS_IFACES=en3"
is "$(devices SOFTVERBS_MGMT_IFACE=en2)" "rdma_en0 rdma_en3 " \
	"SOFTVERBS_MGMT_IFACE=en2 leaves out en2 instead of en0"

port rdma_en2 > /dev/null
grep -qx 'state PORT_DOWN' "$t/out"; ok $? "en2 down: PORT_DOWN"
grep -qx 'gid 0 fe80::ff:fe00:2' "$t/out"; ok $? "GID[0] is fe80:: EUI-64 of 02:00:00:00:00:02"
grep -q '^gid 1' "$t/out"; ok $((! $?)) "no GID[1] without IPv4"
grep -qx 'pd failed' "$t/out"; ok $? "alloc_pd refused while the port is down"
port rdma_en2 SOFTVERBS_PD_NEEDS_LINK=0 > /dev/null
grep -qx 'pd ok' "$t/out"; ok $? "SOFTVERBS_PD_NEEDS_LINK=0 allows it"

ip -n "$ns" link set en2 up
port rdma_en2 > /dev/null
grep -qx 'state PORT_DOWN' "$t/out"; ok $? "en2 up but no carrier (en3 down): PORT_DOWN"

ip -n "$ns" link set en3 up
port rdma_en2 > /dev/null
grep -qx 'state PORT_ACTIVE' "$t/out"; ok $? "en2 up with carrier: PORT_ACTIVE"
grep -qx 'active_mtu 1024' "$t/out"; ok $? "active MTU 1024"
grep -qx 'pd ok' "$t/out"; ok $? "alloc_pd works on an active port"
grep -q '^gid 1' "$t/out"; ok $((! $?)) "still no GID[1] without IPv4"

ip -n "$ns" addr add 10.233.0.1/30 dev en2
port rdma_en2 > /dev/null
grep -qx 'gid 1 ::ffff:10.233.0.1' "$t/out"; ok $? "IPv4 10.233.0.1 gives GID[1] ::ffff:10.233.0.1"
port rdma_en3 > /dev/null
grep -q '^gid 1' "$t/out"; ok $((! $?)) "the other end has no IPv4 and no GID[1]"

ip -n "$ns" addr del 10.233.0.1/30 dev en2
port rdma_en2 > /dev/null
grep -q '^gid 1' "$t/out"; ok $((! $?)) "GID[1] goes away with the address"

ip -n "$ns" link set en3 down
port rdma_en2 > /dev/null
grep -qx 'state PORT_DOWN' "$t/out"; ok $? "peer taken down: PORT_DOWN again"

done_testing
