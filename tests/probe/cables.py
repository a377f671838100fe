# SPDX-License-Identifier: MIT
"""Compare the cables a probe found with a simulated cluster's cables.

usage: cables.py INVENTORY.json CLUSTER.json
INVENTORY.json is the output of `jaccl-config probe --json`; CLUSTER.json
the simulated cluster's compiled description. A cable is found when a
port's peer id is the id of a port of another probed host. Prints both sets
when they differ and exits 1.
"""
import json
import sys


def hosts_of(doc):
    return doc["hosts"] if isinstance(doc, dict) else doc


def found(inv):
    owner = {}
    for h in hosts_of(inv):
        for p in h.get("ports") or []:
            if p.get("id"):
                owner[p["id"]] = (h["name"], p.get("iface"))
    cables = set()
    for h in hosts_of(inv):
        for p in h.get("ports") or []:
            peer = p.get("peer_id") or p.get("peer")
            if peer and peer in owner:
                a = (h["name"], p.get("iface"))
                cables.add(tuple(sorted([a, owner[peer]])))
    return cables


def expected(cluster):
    return {tuple(sorted([(c["a"], c["a_if"]), (c["b"], c["b_if"])]))
            for c in cluster["cables"]}


def main():
    inv = json.load(open(sys.argv[1]))
    cluster = json.load(open(sys.argv[2]))
    got, want = found(inv), expected(cluster)
    if got == want:
        print(f"{len(got)} cables, as cabled")
        return 0
    print("found:    " + " ".join(sorted(f"{a[0]}:{a[1]}-{b[0]}:{b[1]}" for a, b in got)))
    print("expected: " + " ".join(sorted(f"{a[0]}:{a[1]}-{b[0]}:{b[1]}" for a, b in want)))
    return 1


sys.exit(main())
