#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Replay every capture set through the library and compare with EXPECTED.json.

    check_captures.py DUMP SETDIR...

DUMP is the inventory_dump test program; each SETDIR holds host folders
and an EXPECTED.json (see tests/captures/README.md). Prints TAP.
"""
import json
import os
import subprocess
import sys

n = 0
failed = 0


def ok(cond, desc, *diag):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + f" {n} - {desc}")
    if not cond:
        failed += 1
        for d in diag:
            for line in str(d).splitlines():
                print("# " + line)
    sys.stdout.flush()


def netmask_prefix(m):
    v = int(m, 16) if m.lower().startswith("0x") else None
    if v is None:
        v = 0
        for part in m.split("."):
            v = v * 256 + int(part)
    return bin(v).count("1")


PORT_KEYS = [("receptacle", "receptacle"), ("iface", "iface"), ("domain_uuid", "id"),
             ("link", "link"), ("peer_uuid", "peer_id"), ("peer_via_dock", "peer_via_dock"),
             ("bus", "bus"), ("peer_model", "peer_model"),
             ("peer_rdma_service", "peer_rdma_service"), ("devices", "devices")]


def check_host(setname, hname, exp, got):
    where = f"{setname}/{hname}"
    ports = got.get("ports")
    if exp.get("tb_ports") is None:
        ok(ports is None, f"{where}: no Thunderbolt ports (not captured)", f"got {ports}")
    else:
        ok(ports is not None and len(ports) == len(exp["tb_ports"]),
           f"{where}: {len(exp['tb_ports'])} Thunderbolt port(s)", f"got {ports}")
        for i, ep in enumerate(exp["tb_ports"]):
            gp = ports[i] if ports is not None and i < len(ports) else {}
            for ek, gk in PORT_KEYS:
                if ek not in ep:
                    continue
                ok(gp.get(gk, "missing") == ep[ek], f"{where}: port {i} {ek} = {ep[ek]!r}",
                   f"got {gp.get(gk, 'missing')!r}")
    rd = got.get("rdma_devices")
    if "rdma_devices" in exp:
        er = exp["rdma_devices"]
        if er is None:
            ok(rd is None, f"{where}: RDMA devices unknown (not captured)", f"got {rd}")
        else:
            ok(rd is not None and [d["name"] for d in rd] == [d["name"] for d in er],
               f"{where}: RDMA devices {[d['name'] for d in er]}", f"got {rd}")
            ok(rd is not None and [d["state"] for d in rd] == [d["state"] for d in er],
               f"{where}: RDMA states {[d['state'] for d in er]}", f"got {rd}")
    if "hardware_ports" in exp:
        hw = {p["port"]: p["device"] for p in (got.get("hardware_ports") or [])}
        ok(hw == exp["hardware_ports"], f"{where}: hardware ports", f"got {hw}")
    for iname, ei in (exp.get("ifconfig") or {}).items():
        gi = [i for i in (got.get("ifaces") or []) if i["name"] == iname]
        ok(len(gi) == 1, f"{where}: interface {iname} parsed", f"got {got.get('ifaces')}")
        gi = gi[0] if gi else {}
        if "mtu" in ei:
            ok(gi.get("mtu") == ei["mtu"], f"{where}: {iname} mtu {ei['mtu']}", f"got {gi.get('mtu')}")
        if "status" in ei:
            want = {"active": True, "inactive": False}.get(ei["status"])
            ok(gi.get("carrier") == want, f"{where}: {iname} status {ei['status']}",
               f"got carrier {gi.get('carrier')}")
        if ei.get("inet") is not None:
            addrs = [a["addr"] for a in gi.get("inet", [])]
            ok(addrs == ei["inet"], f"{where}: {iname} inet {ei['inet']}", f"got {addrs}")
            if "netmask" in ei and ei["netmask"] is not None:
                pf = [a["prefix"] for a in gi.get("inet", [])]
                want = netmask_prefix(ei["netmask"])
                ok(pf[:1] == [want], f"{where}: {iname} netmask {ei['netmask']} (/{want})",
                   f"got {pf}")
        if "members" in ei:
            ok(gi.get("members") == ei["members"], f"{where}: {iname} members {ei['members']}",
               f"got {gi.get('members')}")


def cables_of(hosts):
    """Cables found by matching peer ids with other hosts' port ids, as unordered pairs."""
    owner = {}
    for h in hosts:
        for p in h.get("ports") or []:
            if p["id"]:
                owner[p["id"]] = (h["name"], p)
    res = set()
    for h in hosts:
        for p in h.get("ports") or []:
            if not p["peer_id"] or p["peer_id"] not in owner:
                continue
            oh, op = owner[p["peer_id"]]
            a = (h["name"], p["iface"], p["receptacle"])
            b = (oh, op["iface"], op["receptacle"])
            speed = p["link"] or op["link"]
            via = p["peer_via_dock"] or (op["peer_id"] == p["id"] and op["peer_via_dock"])
            res.add((frozenset([a, b]), speed, via))
    return res


def main():
    dump = sys.argv[1]
    for setdir in sys.argv[2:]:
        setname = os.path.basename(setdir.rstrip("/"))
        exp = json.load(open(os.path.join(setdir, "EXPECTED.json")))
        r = subprocess.run([dump, setdir], capture_output=True, text=True)
        ok(r.returncode == 0, f"{setname}: replays without error", r.stderr)
        if r.returncode != 0:
            continue
        got = json.loads(r.stdout)
        byname = {h["name"]: h for h in got["hosts"]}
        ok(sorted(byname) == sorted(exp["hosts"]), f"{setname}: hosts {sorted(exp['hosts'])}",
           f"got {sorted(byname)}")
        for hname, eh in exp["hosts"].items():
            if hname in byname:
                check_host(setname, hname, eh, byname[hname])
        want = set()
        for c in exp.get("cables", []):
            a = (c["a"], c.get("a_iface"), c.get("a_receptacle"))
            b = (c["b"], c.get("b_iface"), c.get("b_receptacle"))
            want.add((frozenset([a, b]), c.get("speed"), c.get("via_dock", False)))
        have = cables_of(got["hosts"])
        if all("a_receptacle" in c for c in exp.get("cables", [])):
            ok(have == want, f"{setname}: {len(want)} cable(s) from matching peer ids",
               f"got  {sorted(map(str, have))}", f"want {sorted(map(str, want))}")
        else:
            strip = lambda s: {(frozenset((x[0], x[1]) for x in p), sp, v) for p, sp, v in s}
            ok(strip(have) == strip(want), f"{setname}: {len(want)} cable(s) from matching peer ids",
               f"got {have}", f"want {want}")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
