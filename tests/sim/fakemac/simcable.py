#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""simcable.py - cable events on a running simulated cluster (python3 stdlib only).

    simcable.py STATE_DIR PREFIX MGMT_NET unplug HOST IFACE
    simcable.py STATE_DIR PREFIX MGMT_NET plug HOST IFACE [PEER_HOST PEER_IFACE]
    simcable.py STATE_DIR PREFIX MGMT_NET speed HOST IFACE GBPS

The topology of the running cluster (STATE_DIR/topology.json) is edited,
every host's mac.json is compiled again from it (simtopo.build, the same
code as `up`: an unplugged receptacle shows no device and the idle speed in
system_profiler, its RDMA port is PORT_DOWN, a 40 Gb/s link is PORT_DOWN
too) and swapped in atomically, and the kernel follows: the veth pair of a
pulled cable is replaced by two ports whose other ends sit down in the
PREFIX--unplugged namespace (no carrier, ifconfig says inactive), and a
plugged cable becomes one veth pair between the two ports. The IPv4
addresses, MTU and admin state of a port that gets a new veth are carried
over, as a Mac keeps them on its enX across a replug.

unplug: pull the cable on HOST's IFACE (both ends lose it).
plug: plug HOST IFACE to PEER_HOST PEER_IFACE; without a peer, back where
  it was last unplugged from. A cable already on HOST IFACE is moved (pulled
  from its old peer in the same step: a replug elsewhere); the peer port
  must be free.
speed: the cable on HOST IFACE now links at GBPS Gb/s (e.g. 40).
"""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simtopo  # noqa: E402

SYS_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IP = shutil.which("ip", path=SYS_PATH) or "ip"


class Error(Exception):
    pass


def ip(*args, check=True):
    r = subprocess.run([IP, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise Error(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class Cluster:
    def __init__(self, state, prefix, net):
        self.state, self.prefix, self.net = state, prefix, net
        with open(os.path.join(state, "topology.json")) as f:
            self.topo = json.load(f)
        self.hosts, _c, self.out_hosts, _cl = simtopo.build(self.topo, prefix, net)
        self.limbo = f"{prefix}--unplugged"
        try:
            with open(os.path.join(state, "unplugged.json")) as f:
                self.history = json.load(f)
        except (OSError, ValueError):
            self.history = {}

    def port(self, host, ifname):
        """(receptacle, port dict) of host's interface ifname."""
        o = self.out_hosts.get(host)
        if o is None:
            raise Error(f"no host {host}")
        for p in o["tb_ports"]:
            if p["if"] == ifname:
                return p["receptacle"], p
        raise Error(f"{host} has no cable port {ifname}")

    def cable_on(self, host, r):
        for k, c in enumerate(self.topo.get("cables", [])):
            if (c["a"], c["a_port"]) == (host, r) or (c["b"], c["b_port"]) == (host, r):
                return k, c
        return None, None

    def ns(self, host):
        return self.out_hosts[host]["ns"]

    def index(self, host):
        return self.out_hosts[host]["index"]

    # ---- kernel ----
    def save_if(self, host, ifname):
        d = json.loads(ip("-n", self.ns(host), "-j", "addr", "show", "dev", ifname))[0]
        addrs = [(a["local"], a["prefixlen"]) for a in d.get("addr_info", [])
                 if a.get("family") == "inet"]
        return {"addrs": addrs, "mtu": d.get("mtu", 1500), "up": "UP" in d.get("flags", [])}

    def restore_if(self, host, ifname, saved):
        ns = self.ns(host)
        ip("-n", ns, "link", "set", ifname, "mtu", str(saved["mtu"]))
        for a, n in saved["addrs"]:
            ip("-n", ns, "addr", "add", f"{a}/{n}", "broadcast", "+", "dev", ifname)
        if saved["up"]:
            ip("-n", ns, "link", "set", ifname, "up")

    def limbo_name(self, host, r):
        return f"u{self.index(host)}p{r}"

    def to_limbo(self, host, r, p):
        ip("link", "add", "name", p["if"], "netns", self.ns(host), "address", p["mac"], "type",
           "veth", "peer", "name", self.limbo_name(host, r), "netns", self.limbo)

    def detach(self, host, r, p):
        """Remove host's port (and whatever it is paired with); return its settings."""
        saved = self.save_if(host, p["if"])
        ip("-n", self.ns(host), "link", "del", p["if"])
        return saved

    # ---- the topology ----
    def commit(self):
        """Compile the edited topology and swap every host's description in."""
        simtopo.normalise(json.loads(json.dumps(self.topo)))  # validates
        hosts, cables, out_hosts, cluster = simtopo.build(self.topo, self.prefix, self.net)
        write_atomic(os.path.join(self.state, "topology.json"),
                     json.dumps(self.topo, indent=2) + "\n")
        for hst in hosts:
            write_atomic(os.path.join(self.state, "hosts", hst["name"], "mac.json"),
                         json.dumps(out_hosts[hst["name"]], indent=2) + "\n")
        write_atomic(os.path.join(self.state, "cluster.json"), json.dumps(cluster, indent=2) + "\n")
        write_atomic(os.path.join(self.state, "unplugged.json"), json.dumps(self.history) + "\n")
        self.out_hosts = out_hosts

    def pull(self, k, c):
        """Take cable k out: topology and kernel (both ends to limbo)."""
        del self.topo["cables"][k]
        for me, peer in (("a", "b"), ("b", "a")):
            self.history[f"{c[me]}:{c[me + '_port']}"] = [c[peer], c[peer + "_port"]]
        ends = []
        for side in ("a", "b"):
            h, r = c[side], c[side + "_port"]
            ends.append((h, r, self.port_by_r(h, r)))
        saved = [self.save_if(h, p["if"]) for h, r, p in ends]
        ip("-n", self.ns(ends[0][0]), "link", "del", ends[0][2]["if"])
        for (h, r, p), s in zip(ends, saved):
            self.to_limbo(h, r, p)
            self.restore_if(h, p["if"], s)

    def port_by_r(self, host, r):
        for p in self.out_hosts[host]["tb_ports"]:
            if p["receptacle"] == r:
                return p
        raise Error(f"{host} has no port {r}")

    def unplug(self, host, ifname):
        r, _p = self.port(host, ifname)
        k, c = self.cable_on(host, r)
        if c is None:
            raise Error(f"no cable on {host} {ifname}")
        self.pull(k, c)
        self.commit()

    def plug(self, host, ifname, peer=None, peer_if=None):
        r, p = self.port(host, ifname)
        if peer is None:
            last = self.history.get(f"{host}:{r}")
            if last is None:
                raise Error(f"{host} {ifname} was never unplugged: name the peer")
            peer, pr = last
            pp = self.port_by_r(peer, pr)
        else:
            pr, pp = self.port(peer, peer_if)
        if (peer, pr) == (host, r):
            raise Error("a cable needs two ports")
        k, c = self.cable_on(peer, pr)
        if c is not None:
            raise Error(f"{peer} {pp['if']} already has a cable")
        k, c = self.cable_on(host, r)
        if c is not None:
            self.pull(k, c)      # replugged elsewhere: out of the old peer first
        cable = {"a": host, "a_port": r, "b": peer, "b_port": pr}
        ends = [(host, r, p), (peer, pr, pp)]
        saved = []
        for h, rr, q in ends:
            saved.append(self.save_if(h, q["if"]))
            ip("-n", self.limbo, "link", "del", self.limbo_name(h, rr))
        ip("link", "add", "name", p["if"], "netns", self.ns(host), "address", p["mac"], "type",
           "veth", "peer", "name", pp["if"], "netns", self.ns(peer), "address", pp["mac"])
        for (h, rr, q), s in zip(ends, saved):
            self.restore_if(h, q["if"], s)
        self.topo.setdefault("cables", []).append(cable)
        self.commit()

    def speed(self, host, ifname, gbps):
        r, _p = self.port(host, ifname)
        k, c = self.cable_on(host, r)
        if c is None:
            raise Error(f"no cable on {host} {ifname}")
        c["speed"] = f"{gbps} Gb/s"
        self.commit()


def main(argv):
    if len(argv) < 6:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    state, prefix, net, op, args = argv[1], argv[2], argv[3], argv[4], argv[5:]
    try:
        cl = Cluster(state, prefix, net)
        if op == "unplug" and len(args) == 2:
            cl.unplug(*args)
        elif op == "plug" and len(args) in (2, 4):
            cl.plug(*args)
        elif op == "speed" and len(args) == 3:
            if not args[2].isdigit() or not 1 <= int(args[2]) <= 1000:
                raise Error(f"bad speed {args[2]} (Gb/s, 1 to 1000)")
            cl.speed(args[0], args[1], int(args[2]))
        else:
            sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
            return 2
    except (Error, simtopo.TopologyError) as e:
        sys.stderr.write(f"simcable: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
