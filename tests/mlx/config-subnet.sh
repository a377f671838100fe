#!/bin/sh
# SPDX-License-Identifier: MIT
# Per-cable subnets next to a VPN, on the simulated two-node cluster (h0 en2
# -- h1 en2) with MLX's mlx.distributed_config as the judge. h0 gets a
# tunnel utun3 (a tun device in its namespace, which the fake ifconfig and
# netstat show from the kernel's state):
#  - routes elsewhere (10.8.0.0/16, 192.168.1.0/24): nothing collides, the
#    hostfile and the commands are MLX's, byte for byte;
#  - a route over 192.168.0.0/16: the cables move to 10.254.0.0/16 (the
#    same hostfile and commands as MLX's once 10.254. reads 192.168.), a
#    note says why, --auto-setup puts 10.254.0.1/30 and 10.254.0.2/30 on
#    the cables (the kernel's view), the peers answer, verify passes, a
#    second run changes nothing;
#  - --subnet is honoured, refused over the route, a bad CIDR is a usage
#    error;
#  - set up on MLX's numbering, doctor's subnet-overlap is ok until a route
#    over a cable's subnet comes up, then names it and the free range.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start two-node
st=$t/st

# the hostfile and setup commands of both tools for backend B, ours with
# 10.254. read as 192.168. when MOVED is set
same_as_mlx() { # same_as_mlx B WHAT [moved]
	if [ "${3:-}" = moved ]; then
		sed 's/"10\.254\./"192.168./' "$t/j-$1.json" > "$t/j-$1.json.as-mlx"
		sed 's/ 10\.254\./ 192.168./g' "$t/j-$1.out" > "$t/j-$1.out.as-mlx"
	else
		cp "$t/j-$1.json" "$t/j-$1.json.as-mlx"
		cp "$t/j-$1.out" "$t/j-$1.out.as-mlx"
	fi
	is "$(cat "$t/j-$1.st")" "$(cat "$t/m-$1.st")" "$2, $1: exit status as MLX's"
	cmp -s "$t/m-$1.json" "$t/j-$1.json.as-mlx"
	ok $? "$2, $1: the hostfile MLX writes"
	cmp -s "$t/m-$1.json" "$t/j-$1.json.as-mlx" || diag "$(diff -u "$t/m-$1.json" "$t/j-$1.json")"
	python3 "$MX_PY" commands "$t/m-$1.out" "$t/j-$1.out.as-mlx" > "$t/cmd.diff"
	ok $? "$2, $1: the setup commands MLX prints"
	[ -s "$t/cmd.diff" ] && diag "$(head -30 "$t/cmd.diff")"
}

# addr H IF: the IPv4 address/prefix on H's IF, as the kernel has it
addr() { sim_exec "$1" ip -4 -o addr show dev "$2" | awk '{ print $4 }' | paste -sd' ' -; }

sim_exec h0 sh -c 'ip tuntap add dev utun3 mode tun && ip link set utun3 up &&
    ip addr add 10.8.0.2/32 peer 10.8.0.1 dev utun3 &&
    ip route add 10.8.0.0/16 dev utun3 && ip route add 192.168.1.0/24 dev utun3'
ok $? "h0: a tunnel utun3 with routes to 10.8.0.0/16 and 192.168.1.0/24"

# the fakes show the kernel's tunnel and routes the way macOS prints them
sim_exec h0 ifconfig -a > "$t/ifconfig"
grep -q '^	inet 10.8.0.2 --> 10.8.0.1 netmask 0xffffffff$' "$t/ifconfig"
ok $? "h0's ifconfig -a lists utun3 with its address"
sim_exec h0 netstat -rn -f inet > "$t/netstat"
grep -Eq '^10\.8/16 +utun3 +USc +utun3 ' "$t/netstat" &&
    grep -Eq '^192\.168\.1 +utun3 +USc +utun3 ' "$t/netstat"
ok $? "h0's netstat -rn -f inet: 10.8/16 and 192.168.1 (a /24: class C, no length) via utun3"
# every unicast route of the kernel, every table, is in what the probe read
"$JACCL_CONFIG" probe -F "$MX_CFG" $MX_SLOW --hosts h0 --json > "$t/probe.json" 2> "$t/probe.err"
sim_exec h0 ip -j -4 route show table all > "$t/kernel.json"
python3 - "$t/kernel.json" "$t/probe.json" <<'PY'
import ipaddress, json, sys
kernel = json.load(open(sys.argv[1]))
want = {str(ipaddress.ip_network("0.0.0.0/0" if r["dst"] == "default" else r["dst"], strict=False))
        + " " + ("lo0" if r["dev"] == "lo" else r["dev"])
        for r in kernel if r.get("type", "unicast") == "unicast" and "dev" in r}
got = {r["dest"] + " " + r["iface"] for r in json.load(open(sys.argv[2]))["hosts"][0]["routes"]}
missing = want - got
assert want and not missing, missing
PY
ok $? "h0: every route of its kernel is in the probe's inventory (through the fake netstat)"

# nothing collides: MLX's numbering, byte for byte
for b in jaccl ring; do
	mlx_backend $b
	same_as_mlx $b "routes elsewhere"
done
! grep -q "mlx's subnets" "$t/j-ring.err"
ok $? "routes elsewhere: no note"

sim_exec h0 ip route add 192.168.0.0/16 dev utun3
ok $? "h0: a route over 192.168.0.0/16 through utun3"
for b in jaccl ring; do
	mlx_backend $b
	same_as_mlx $b "VPN over 192.168.0.0/16" moved
done
grep -q '"192\.168\.' "$t/j-ring.json"
is "$?" 1 "VPN: no cable address of ours in 192.168.0.0/16"
grep -qxF "jaccl-config: h0: mlx's subnets (192.168.0.0 on) overlap 192.168.0.0/16 (h0: route via utun3); the cables use 10.254.0.0/16 instead" "$t/j-ring.err"
ok $? "VPN: the note names the host, the route and the range"

jc_config --hosts "$MX_HOSTS" --auto-setup --state-dir "$st" --output-hostfile "$t/hf.json" \
    > "$t/auto.out" 2> "$t/auto.err"
ok $? "VPN: --auto-setup succeeds"
is "$(addr h0 en2) $(addr h1 en2)" "10.254.0.1/30 10.254.0.2/30" "VPN: the kernel has 10.254.0.1/30 and 10.254.0.2/30 on the cable"
sim_exec h0 ping -c1 -W3 -I en2 10.254.0.2 > /dev/null 2>&1
ok $? "VPN: h1 answers on 10.254.0.2 through the cable"
is "$(sim_exec h0 ip -4 route show 192.168.0.0/16)" "192.168.0.0/16 dev utun3 scope link linkdown " \
    "VPN: its route left as it was"
JACCL_VERIFY_MB=1 JACCL_VERIFY_MAX_MB=1 "$JACCL_CONFIG" verify -F "$MX_CFG" --connect-timeout 60 \
    --hostfile "$t/hf.json" --fabric tcp --timeout 120 < /dev/null > "$t/verify.out" 2>&1
r=$?
ok $r "VPN: verify passes on the moved cable"
[ $r -eq 0 ] || diag "$(tail -15 "$t/verify.out")"
jc_config --hosts "$MX_HOSTS" --auto-setup --state-dir "$st" --output-hostfile "$t/hf2.json" \
    > "$t/auto2.out" 2> "$t/auto2.err"
is "$(grep -c 'already configured, nothing to change' "$t/auto2.err")" 2 "VPN: a second run changes nothing"
cmp -s "$t/hf.json" "$t/hf2.json"
ok $? "VPN: ... and writes the same hostfile"

# --subnet
jc_config --hosts "$MX_HOSTS" --subnet 172.31.4.0/24 --json > "$t/s.json" 2> "$t/s.err"
ok $? "--subnet 172.31.4.0/24 succeeds"
python3 - "$t/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
got = sorted((h["host"], a["iface"], a["ip"], a["peer_ip"]) for h in d["plan"] for a in h["addresses"])
assert got == [("h0", "en2", "172.31.4.1", "172.31.4.2"), ("h1", "en2", "172.31.4.2", "172.31.4.1")], got
assert d["subnet"] == {"range": "172.31.4.0/24", "numbering": "user", "reason": None}, d["subnet"]
PY
ok $? "--subnet: the cable on 172.31.4.1 and .2, said in --json"
jc_config --hosts "$MX_HOSTS" --subnet 192.168.0.0/24 > "$t/s2.out" 2> "$t/s2.err"
is "$?" 1 "--subnet over the VPN's route: exit 1"
grep -q 'overlaps 192.168.0.0/16 (h0: route via utun3)' "$t/s2.err"
ok $? "--subnet over the VPN's route: the route named"
jc_config --hosts "$MX_HOSTS" --subnet 192.168.0.1/24 > /dev/null 2> "$t/s3.err"
is "$?" 2 "--subnet with host bits: usage error"
grep -q "argument --subnet: '192.168.0.1/24' has host bits set" "$t/s3.err"
ok $? "--subnet with host bits: said"

"$JACCL_CONFIG" restore -F "$MX_CFG" $MX_SLOW --state-dir "$st" > "$t/restore.out" 2>&1
ok $? "restore"

# MLX's numbering set up, then a VPN route over a cable's subnet
sim_exec h0 ip route del 192.168.0.0/16 dev utun3
jc_config --hosts "$MX_HOSTS" --auto-setup --state-dir "$st" --output-hostfile "$t/hf3.json" \
    > "$t/auto3.out" 2> "$t/auto3.err"
ok $? "no collision: --auto-setup succeeds"
is "$(addr h0 en2) $(addr h1 en2)" "192.168.0.1/30 192.168.0.2/30" "no collision: MLX's numbering on the cable"
"$JACCL_CONFIG" doctor -F "$MX_CFG" $MX_SLOW --hosts "$MX_HOSTS" --hostfile "$t/hf3.json" --json > "$t/d1.json" 2> "$t/d1.err"
python3 - "$t/d1.json" <<'PY'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["checks"] if c["name"] == "subnet-overlap"][0]
assert c["status"] == "ok", c
PY
ok $? "doctor: subnet-overlap ok after the setup"
sim_exec h0 ip route add 192.168.0.0/24 dev utun3
"$JACCL_CONFIG" doctor -F "$MX_CFG" $MX_SLOW --hosts "$MX_HOSTS" --hostfile "$t/hf3.json" --json > "$t/d2.json" 2> "$t/d2.err"
is "$?" 8 "doctor after a route over the cable came up: exit 8"
python3 - "$t/d2.json" <<'PY'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["checks"] if c["name"] == "subnet-overlap"][0]
assert c["status"] == "error", c
f = c["findings"]
assert len(f) == 1 and f[0]["host"] == "h0", f
assert f[0]["message"].startswith("192.168.0.0/24 (route via utun3) overlaps 192.168.0.0/30"), f
assert "--subnet 10.254.0.0/16" in f[0]["remedy"], f
PY
ok $? "doctor: the route, the cable's subnet and the free range for --subnet"
"$JACCL_CONFIG" restore -F "$MX_CFG" $MX_SLOW --state-dir "$st" > "$t/restore.out" 2>&1
ok $? "restore"
mlx_done
done_testing
