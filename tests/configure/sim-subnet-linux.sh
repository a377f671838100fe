#!/bin/sh
# SPDX-License-Identifier: MIT
# Per-cable subnets next to a VPN on Linux hosts (linux-pair, lx1 eth1 --
# lx2 eth1, the real ip on each): a tunnel wg0 on lx2 whose route to
# 192.168.0.0/16 is in a table of its own (51820, as wg-quick does) is
# found through `ip -j -4 route show table all`, the cable moves to
# 10.254.0.0/16 (10.254.0.1/30 and 10.254.0.2/30, the kernel's view), the
# peers answer, and the tunnel's route is left alone.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
sim_require
sim_up linux-pair || { ok 1 "linux-pair: cluster up"; done_testing; exit 1; }
cfg=$(sim_ssh_config)
slow="--connect-timeout 60 --command-timeout 300"

sim_exec lx2 sh -c 'ip tuntap add dev wg0 mode tun && ip link set wg0 up &&
    ip route add 192.168.0.0/16 dev wg0 table 51820'
ok $? "lx2: a tunnel wg0 routing 192.168.0.0/16 in table 51820"

"$JACCL_CONFIG" --hosts "$(sim_hosts)" -F "$cfg" $slow --json > "$t/plan.json" 2> "$t/err"
ok $? "configure (printed) succeeds"
python3 - "$t/plan.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
got = sorted((h["host"], a["iface"], a["ip"]) for h in d["plan"] for a in h["addresses"])
assert got == [("lx1", "eth1", "10.254.0.1"), ("lx2", "eth1", "10.254.0.2")], got
assert d["subnet"]["numbering"] == "moved" and d["subnet"]["range"] == "10.254.0.0/16", d["subnet"]
assert "route via wg0" in d["subnet"]["reason"], d["subnet"]
PY
ok $? "the route of table 51820 moves the cable to 10.254.0.1 and .2, and --json says why"
grep -q "^jaccl-config: lx2: mlx's subnets (192.168.0.0 on) overlap 192.168.0.0/16 (lx2: route via wg0)" "$t/err"
ok $? "the note is lx2's"

"$JACCL_CONFIG" --hosts "$(sim_hosts)" -F "$cfg" $slow --auto-setup --state-dir "$t/st" \
    --output-hostfile "$t/hf.json" < /dev/null > "$t/out" 2> "$t/err2"
ok $? "--auto-setup succeeds"
is "$(sim_exec lx1 ip -4 -o addr show dev eth1 | awk '{ print $4 }') $(sim_exec lx2 ip -4 -o addr show dev eth1 | awk '{ print $4 }')" \
    "10.254.0.1/30 10.254.0.2/30" "the kernel has 10.254.0.1/30 and 10.254.0.2/30 on the cable"
sim_exec lx2 ping -c1 -W3 -I eth1 10.254.0.1 > /dev/null 2>&1
ok $? "lx1 answers on 10.254.0.1 through the cable"
is "$(sim_exec lx2 ip -4 route show table 51820)" "192.168.0.0/16 dev wg0 scope link linkdown " \
    "the tunnel's route left as it was"
"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$t/st" > /dev/null 2>&1
ok $? "restore"
is "$(sim_exec lx1 ip -4 -o addr show dev eth1)" "" "restore: no address left on lx1's cable"
done_testing
