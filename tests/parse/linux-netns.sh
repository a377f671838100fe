#!/bin/sh
# SPDX-License-Identifier: MIT
# The Linux backend against real Linux hosts: three network namespaces with
# veth "cables" between them (h0-h1, h1-h2, h0-h2), a management bridge in
# a fourth namespace, a bridge with a member and an unplugged interface in
# h2. Every probe command of the Linux backend runs in each namespace as
# the probe would run it; the bundle is replayed and the cables found by
# matching "mac:" peer ids must be exactly the three veth pairs.
. "${top_srcdir:-.}/tests/lib/tap.sh"
need_root "needs root (network namespaces)"
for c in ip ping python3; do
	command -v $c >/dev/null 2>&1 || skip_all "$c not found"
done
cmds=${top_builddir:-.}/tests/parse/probe_cmds
dump=${top_builddir:-.}/tests/parse/inventory_dump
p=jp$$
net=10.231.8
hub=$p-hub
nss="$p-h0 $p-h1 $p-h2"
cleanup() {
	for n in $nss $hub; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$t"
}
trap cleanup EXIT
ip netns add "$hub" || skip_all "cannot create a network namespace"
ip -n "$hub" link add br0 type bridge && ip -n "$hub" link set br0 up
i=0
for n in $nss; do
	ip netns add "$n"
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	ip -n "$n" link set lo up
	ip link add m0 netns "$n" type veth peer name "hub$i" netns "$hub"
	ip -n "$hub" link set "hub$i" master br0 up
	ip -n "$n" addr add "$net.$((10 + i))/24" dev m0
	ip -n "$n" link set m0 up
	i=$((i + 1))
done
cable() { # cable NS_A IF_A NS_B IF_B
	ip link add "$2" netns "$p-$1" type veth peer name "$4" netns "$p-$3"
	ip -n "$p-$1" link set "$2" up
	ip -n "$p-$3" link set "$4" up
}
cable h0 eth1 h1 eth1
cable h1 eth2 h2 eth1
cable h0 eth2 h2 eth2
# h2: a bridge with a member (never a cable) and an unplugged interface.
ip -n "$p-h2" link add br5 type bridge
ip -n "$p-h2" link add dum0 type veth peer name dum0x
ip -n "$p-h2" link set dum0 master br5 up
ip -n "$p-h2" link set br5 up
ip -n "$p-h2" link add eth9 type veth peer name eth9x
ip -n "$p-h2" link set eth9 up
ip -n "$p-h2" addr add 192.168.77.1/24 dev eth9

# Wait (at most ~10 s) until every cable end has its IPv6 link-local address.
for h in h0 h1 h2; do
	for if in eth1 eth2; do
		k=0
		while [ $k -lt 100 ] && ! ip -n "$p-$h" -6 addr show dev $if scope link 2>/dev/null |
		    grep -q 'inet6 fe80'; do
			sleep 0.1
			k=$((k + 1))
		done
	done
done

mkdir -p "$t/b"
tab=$(printf '\t')
i=0
for h in h0 h1 h2; do
	mkdir "$t/b/$h"
	"$cmds" linux > "$t/cmds"
	while IFS=$tab read -r name sh; do
		SSH_CONNECTION="$net.1 40000 $net.$((10 + i)) 22" \
		    ip netns exec "$p-$h" sh -c "$sh" > "$t/b/$h/$name" 2>/dev/null
		echo "$h $name $?" >> "$t/status"
	done < "$t/cmds"
	i=$((i + 1))
done
python3 - "$t/status" "$t/b/manifest.json" <<'PY'
import json, sys
hosts = {}
for line in open(sys.argv[1]):
    h, f, st = line.split()
    hosts.setdefault(h, {})[f] = {"status": int(st)}
json.dump({"version": 1, "hosts": [{"name": h, "outputs": o} for h, o in hosts.items()]},
          open(sys.argv[2], "w"))
PY
[ -n "${JC_DEBUG_DIR:-}" ] && cp -r "$t/b" "$JC_DEBUG_DIR"
if ! "$dump" "$t/b" > "$t/inv.json" 2> "$t/err"; then
	echo "not ok 1 - the Linux bundle replays"
	diag "$(cat "$t/err")"
	echo "1..1"
	exit 1
fi
echo "ok 1 - the Linux bundle replays"
python3 - "$t/inv.json" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
n = 1
failed = 0
def ok(c, d, *diag):
    global n, failed
    n += 1
    print(("ok" if c else "not ok") + f" {n} - {d}")
    if not c:
        failed += 1
        for x in diag: print("# " + str(x))
H = {h["name"]: h for h in inv["hosts"]}
ok(sorted(H) == ["h0", "h1", "h2"], "three hosts")
for name, h in H.items():
    ok(h["os"] == "linux", f"{name}: os linux")
    ok(h["mgmt_iface"] == "m0" and h["mgmt_ip"] and h["mgmt_ip"].startswith("10.231.8."),
       f"{name}: management m0 from SSH_CONNECTION", h["mgmt_ip"], h["mgmt_iface"])
    ok(isinstance(h["rdma_devices"], list), f"{name}: RDMA devices listed from sysfs")
    ifs = {i["name"]: i for i in h["ifaces"] or []}
    ok("m0" in ifs and ifs["m0"]["inet"][0]["prefix"] == 24, f"{name}: m0 /24")
    ports = {p["iface"]: p for p in h["ports"] or []}
    ok("m0" not in ports and "lo" not in ports, f"{name}: management and loopback are not cables")
    for p in ports.values():
        mac = ifs[p["iface"]]["mac"]
        ok(p["id"] == "mac:" + mac, f"{name}: {p['iface']} id is its MAC")
h2 = {p["iface"]: p for p in H["h2"]["ports"]}
ok("br5" not in h2 and "dum0" not in h2, "h2: bridge and its member are not cables")
ok("eth9" in h2 and h2["eth9"]["peer_id"] is None, "h2: unplugged eth9 has no peer")
i2 = {i["name"]: i for i in H["h2"]["ifaces"]}
ok(i2["br5"]["is_bridge"] and i2["br5"]["members"] == ["dum0"], "h2: br5 bridge with dum0")
ok(i2["eth9"]["carrier"] is False, "h2: eth9 no carrier")
owner = {}
for h in H.values():
    for p in h["ports"]:
        owner[p["id"]] = (h["name"], p["iface"])
cables = set()
for h in H.values():
    for p in h["ports"]:
        if p["peer_id"] in owner:
            cables.add(frozenset([(h["name"], p["iface"]), owner[p["peer_id"]]]))
want = {frozenset([("h0", "eth1"), ("h1", "eth1")]), frozenset([("h1", "eth2"), ("h2", "eth1")]),
        frozenset([("h0", "eth2"), ("h2", "eth2")])}
ok(cables == want, "the three veth cables, from neighbour MACs", sorted(map(sorted, cables)))
byid = {p["id"]: p for h in H.values() for p in h["ports"]}
one_sided = [p["id"] for p in byid.values()
             if p["peer_id"] in byid and byid[p["peer_id"]]["peer_id"] != p["id"]]
ok(not one_sided, "every cable seen from both ends", one_sided)
print(f"1..{n}")
sys.exit(1 if failed else 0)
PY
