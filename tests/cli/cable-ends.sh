#!/bin/sh
# SPDX-License-Identifier: MIT
# A cable needs two real ends: a Mac whose networksetup output puts a
# Thunderbolt port on en0 (its management interface) or on lo0 never gets
# that interface planned as a cable, and the cable is reported instead;
# the other cables of the saved four Mac Studios stay as they were. And on
# three Linux hosts cabled by MAC, an interface of h0 that holds a LAN's /24
# is never a cable, whatever h1 claims about the MAC h0 sees there.
. "${top_srcdir:-.}/tests/lib/tap.sh"

b=$t/b
cp -r "$top_srcdir/data/examples/studio-mesh4" "$b"
ns=$b/m3-ultra-1/networksetup-listallhardwareports.txt
# Thunderbolt 2 (en3, cabled) on en0, Thunderbolt 4 (en4, cabled) on lo0
python3 - "$ns" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("Hardware Port: Thunderbolt 2\nDevice: en3", "Hardware Port: Thunderbolt 2\nDevice: en0")
s = s.replace("Hardware Port: Thunderbolt 4\nDevice: en4", "Hardware Port: Thunderbolt 4\nDevice: lo0")
open(p, "w").write(s)
PY
grep -q "Device: lo0" "$ns"
ok $? "the crafted output maps Thunderbolt 4 to lo0"

"$JACCL_CONFIG" probe --from "$b" --json >"$t/p.json" 2>/dev/null </dev/null
python3 - "$t/p.json" >"$t/ifs" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["hosts"][0]
print(" ".join(sorted(p["iface"] or "-" for p in h["ports"])))
PY
! grep -qw en0 "$t/ifs" && ! grep -qw lo0 "$t/ifs"
ok $? "probe: no port of m3-ultra-1 on en0 or lo0 ($(cat "$t/ifs"))"
"$JACCL_CONFIG" --from "$b" --dot >"$t/dot" 2>"$t/err" </dev/null
! grep -Eq '"(en0|lo0)/|/(en0|lo0)"' "$t/dot"
ok $? "DOT: no cable on en0 or lo0"
grep -q 'en5/' "$t/dot"
ok $? "DOT: the untouched cables are still drawn"
grep -q "networksetup puts Thunderbolt 2 on the management interface or a loopback (en0)" \
    "$t/p.json"
ok $? "probe: a note names the refused mapping"
grep -q "m3-ultra-1: warning: Thunderbolt 2: the cable to m3-ultra-4 .* has no network interface" \
    "$t/err"
ok $? "configure: the cable is reported, not used"

v=$t/v
cp -r "$top_srcdir/tests/captures-linux/veth-triangle" "$v"
python3 - "$v/h0/ip-j-addr.txt" <<'PY'
import json, sys
p = sys.argv[1]
j = json.load(open(p))
for i in j:
    if i["ifname"] == "eth1":
        i.setdefault("addr_info", []).append({"family": "inet", "local": "10.50.0.1",
                                              "prefixlen": 24})
json.dump(j, open(p, "w"))
PY
"$JACCL_CONFIG" --from "$top_srcdir/tests/captures-linux/veth-triangle" --dot >"$t/v0" \
    2>/dev/null </dev/null
grep -q 'a -- b \[label="eth1/eth1"\]' "$t/v0"
ok $? "Linux by MAC: h0 eth1 -- h1 eth1 is a cable as captured"
"$JACCL_CONFIG" --from "$v" --dot >"$t/v1" 2>"$t/verr" </dev/null
! grep -q 'a -- b' "$t/v1" && grep -q 'a -- c \[label="eth2/eth2"\]' "$t/v1"
ok $? "Linux by MAC: with a /24 on h0 eth1, no cable there; the others stay"
grep -q "h1: warning: eth1 sees h0 eth1, which does not see it back; cable not used" "$t/verr"
ok $? "Linux by MAC: and the claim of the other end is reported, not used"
done_testing
