#!/bin/sh
# SPDX-License-Identifier: MIT
# configure --persist on saved probe bundles (no hosts, no root): the
# printed commands end, per host, with one networksetup service per cable
# interface whose hardware port is the one the bundle's own
# `networksetup -listallhardwareports` names for that interface, with the
# address and mask the ifconfig command of the same host sets; the bridge's
# service off; nothing else named. Without --persist not one networksetup
# command (mlx's output). --over ethernet has nothing to make persistent.
. "$top_srcdir/tests/lib/tap.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"

for b in studio-mesh4 mbp-pair studio-mesh4-2cables; do
	dir=$top_srcdir/data/examples/$b
	"$JACCL_CONFIG" --from "$dir" --persist < /dev/null > "$t/p.out" 2> "$t/p.err"
	ok $? "$b: --persist prints the commands"
	python3 - "$dir" "$t/p.out" > "$t/check" 2>&1 <<'PY'
import os, re, shlex, sys
d, out = sys.argv[1], open(sys.argv[2]).read()
bad = []
for sect in re.split(r"\n(?=Setup for )", out.strip()):
    lines = sect.splitlines()
    if not lines or not lines[0].startswith("Setup for "):
        continue
    host = lines[0][len("Setup for "):]
    ports = {}
    port = None
    for l in open(os.path.join(d, host, "networksetup-listallhardwareports.txt")):
        if l.startswith("Hardware Port: "):
            port = l[len("Hardware Port: "):].strip()
        elif l.startswith("Device: ") and port:
            ports[l[len("Device: "):].strip()] = port
    want = []
    for l in lines[2:]:
        w = shlex.split(l)
        if w[:2] == ["sudo", "ifconfig"] and len(w) == 7 and w[3] == "inet":
            svc = "jaccl-config " + ports[w[2]]
            want += [["sudo", "networksetup", "-createnetworkservice", svc, ports[w[2]]],
                     ["sudo", "networksetup", "-setmanual", svc, w[4], w[6]]]
    want.append(["sudo", "networksetup", "-setnetworkserviceenabled", "Thunderbolt Bridge", "off"])
    got = [shlex.split(l) for l in lines[2:] if "networksetup" in l]
    if got != want:
        bad.append(f"{host}: {got} != {want}")
    if any(w[3].startswith("-set") and w[4] != "Thunderbolt Bridge" and
           not w[4].startswith("jaccl-config Thunderbolt ") for w in got):
        bad.append(f"{host}: another service named")
print("\n".join(bad) if bad else "ok")
PY
	is "$(cat "$t/check")" ok \
	    "$b: per cable interface its own port's service, with the ifconfig address and mask, then the bridge's service off"
	"$JACCL_CONFIG" --from "$dir" < /dev/null > "$t/n.out" 2> /dev/null
	grep -q networksetup "$t/n.out"
	ok $((!$?)) "$b: without --persist no networksetup command"
	grep -v networksetup "$t/p.out" | cmp -s - "$t/n.out"
	ok $? "$b: ... and the other lines are exactly those without --persist"
done

"$JACCL_CONFIG" --from "$top_srcdir/data/examples/studio-mesh4" --over ethernet --persist \
    < /dev/null > "$t/e.out" 2> "$t/e.err"
ok $? "--over ethernet --persist runs"
grep -q -- '--persist has no effect with --over ethernet' "$t/e.err"
ok $? "... and says --persist has no effect"
done_testing
