#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""simtopo.py - compile a simcluster topology (JSON) into per-host state.

    simtopo.py check   TOPOLOGY.json
    simtopo.py compile TOPOLOGY.json STATE_DIR PREFIX MGMT_NET

`check` validates the file and prints one line per host and cable.
`compile` (run by `simcluster.sh up`) writes into STATE_DIR:
    cluster.json          hosts (name, index, namespace, management IP), cables
    hosts.tsv             name <TAB> index <TAB> namespace <TAB> management IP
                          <TAB> personality <TAB> stock (1: a stock Mac, else 0)
    ip-root.batch         `ip -batch` for the root namespace: management bridge,
                          namespaces, one veth pair per cable, stubs for
                          unplugged ports
    hosts/NAME/mac.json   everything the fake macOS commands need for NAME
    hosts/NAME/ip.batch   `ip -n NS -batch` for NAME (lo, en0 address, links up)

Python 3 standard library only.  All identifiers (domain UUIDs, MACs, GUIDs,
switch UIDs, service UUIDs) are derived from host names and port numbers, so a
host looks the same in every topology that uses its name.

Topology format (see README.md for a full example):

  {"name": "...", "description": "...",
   "defaults": {host fields applied to every host},
   "hosts": [{"name": "h0", "model": "Mac15,14", "macos": "26.2",
              "rdma_enabled": true, "tb_ports": 6,
              "tb_map": {"Thunderbolt 1": "en2", ...},     # may be non-monotonic
              "en0_port": "Ethernet" | "Wi-Fi",            # name of en0 in networksetup
              "wifi": "en1" | null,                        # separate Wi-Fi device
              "sudo": "nopasswd" | "password" | "scoped",
              "stock": true | false,                       # default: KC_STOCK (1)
              "shell": "zsh" | "fish" | "bash",            # stock hosts' login shell
              "python": "stub" | "apple",                  # stock hosts' /usr/bin/python3
              "family", "chip", "build", "cpus", "memory_gb", "computer_name"}],
   "cables": [{"a": "h0", "a_port": 1, "b": "h1", "b_port": 3,
               "speed": "80 Gb/s", "via_dock": false,
               "dock_side": "both" | "a" | "b", "dock_name": "..."}]}
"""

import hashlib
import json
import os
import re
import sys
import uuid

# model identifier -> (family, chip, Thunderbolt generation, TB ports, cores "P+E", memory GB)
MODELS = {
    "Mac15,14": ("Mac Studio", "Apple M3 Ultra", 5, 6, (24, 8), 512),
    "Mac16,9": ("Mac Studio", "Apple M4 Max", 5, 4, (12, 4), 128),
    "Mac16,11": ("Mac mini", "Apple M4 Pro", 5, 3, (10, 4), 64),
    "Mac16,10": ("Mac mini", "Apple M4", 4, 3, (4, 6), 32),
    "Mac16,5": ("MacBook Pro", "Apple M4 Max", 5, 3, (12, 4), 128),
    "Mac16,6": ("MacBook Pro", "Apple M4 Max", 5, 3, (12, 4), 128),
    "Mac16,7": ("MacBook Pro", "Apple M4 Pro", 5, 3, (10, 4), 48),
    "Mac16,8": ("MacBook Pro", "Apple M4 Pro", 5, 3, (10, 4), 48),
    "Mac17,6": ("MacBook Pro", "Apple M5 Max", 5, 3, (12, 6), 128),
    "Mac17,7": ("MacBook Pro", "Apple M5 Max", 5, 3, (12, 6), 128),
    "Mac14,13": ("Mac Studio", "Apple M2 Max", 4, 4, (8, 4), 64),
    "Mac14,14": ("Mac Studio", "Apple M2 Ultra", 4, 6, (16, 8), 192),
    "Mac13,1": ("Mac Studio", "Apple M1 Max", 4, 4, (8, 2), 64),
    "Mac13,2": ("Mac Studio", "Apple M1 Ultra", 4, 6, (16, 4), 128),
}

HOST_KEYS = {
    "name", "model", "family", "chip", "macos", "build", "rdma_enabled", "tb_ports",
    "tb_map", "tb_gen", "en0_port", "wifi", "sudo", "cpus", "memory_gb", "computer_name",
    "personality", "system_profiler", "ifconfig_extras", "pmset_sleep", "firewall_state",
    "stock", "shell", "python", "other_managers",
}
# what other tools leave on a Mac (exo #2279: its daemon, its location)
MGR_KEYS = {"daemons", "location", "locations", "services"}
DAEMON_KEYS = {"label", "loaded", "pid", "program", "interval"}
LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
SVC_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,62}$")
SHELLS = ("zsh", "fish", "bash")
PYTHONS = ("stub", "apple")
LINUX_KEYS = {"name", "personality", "ports", "ifnames", "sudo"}
SP_MODES = ("normal", "garbage", "truncated", "empty", "error")
CABLE_KEYS = {"a", "a_port", "b", "b_port", "speed", "via_dock", "dock_side", "dock_name",
              "dock_vendor"}
NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
LINUX_IF_RE = re.compile(r"^[a-z][a-z0-9]{0,14}$")
IFACE_RE = re.compile(r"^en([0-9]|[1-9][0-9])$")
SPEED_RE = re.compile(r"^([0-9]+) Gb/s$")
RDMA_SERVICE_KEY = "\u02c7" * 6 + "AD"   # how system_profiler shows the rdma XDomain key
NS_UUID = uuid.UUID("5b0c2f4e-8a51-4c36-9d3a-6b7e2f1c0a11")


class TopologyError(Exception):
    pass


def h(*parts):
    return hashlib.sha256("/".join(str(p) for p in parts).encode()).hexdigest()


def det_uuid(*parts):
    d = hashlib.sha256(("simcluster/" + "/".join(str(p) for p in parts)).encode()).digest()
    return str(uuid.UUID(bytes=d[:16], version=4)).upper()


def det_mac(first_byte, *parts):
    d = h(*parts)
    return ":".join([f"{first_byte:02x}"] + [d[i:i + 2] for i in range(0, 10, 2)])


def other_managers(name, m, stock):
    """The other tools' traces on a host, checked and filled in: LaunchDaemons
    ({"label", "loaded", "pid"}; their plists need a stock host's own
    /Library), the active location and the locations there are, network
    services of another tool (on the first Thunderbolt port)."""
    if not isinstance(m, dict) or set(m) - MGR_KEYS:
        raise TopologyError(f"{name}: other_managers takes {sorted(MGR_KEYS)}")
    daemons = []
    for d in m.get("daemons", []):
        if not isinstance(d, dict) or set(d) - DAEMON_KEYS or \
                not LABEL_RE.match(str(d.get("label", ""))):
            raise TopologyError(f"{name}: a daemon is {{\"label\", \"loaded\", \"pid\"}}")
        if not stock:
            raise TopologyError(f"{name}: a daemon's plist needs a stock host (its own /Library)")
        pid = d.get("pid")
        if pid is not None and (not isinstance(pid, int) or isinstance(pid, bool) or pid < 1):
            raise TopologyError(f"{name}: a daemon's pid is a number")
        daemons.append({"label": d["label"], "loaded": bool(d.get("loaded", True)), "pid": pid,
                        "program": d.get("program", "/usr/local/bin/" + d["label"]),
                        "interval": int(d.get("interval", 1791))})
    loc = m.get("location", "Automatic")
    locs = m.get("locations", ["Automatic"] + ([loc] if loc != "Automatic" else []))
    for x in [loc] + list(locs):
        if not isinstance(x, str) or not SVC_RE.match(x):
            raise TopologyError(f"{name}: bad location {x!r}")
    if loc not in locs:
        raise TopologyError(f"{name}: the location {loc!r} is not in locations")
    svcs = m.get("services", [])
    for x in svcs:
        if not isinstance(x, str) or not SVC_RE.match(x):
            raise TopologyError(f"{name}: bad service name {x!r}")
    return {"daemons": daemons, "location": loc, "locations": list(locs),
            "services": list(svcs)}


def tmpdir(name):
    """A per-user TMPDIR as macOS makes them: /var/folders/XX/<24 chars>0000gn/T/
    (the 0000gn tail is what uid 501's folders end with)."""
    alphabet = "0123456789_abcdefghijklmnopqrstuvwxyz"
    d = hashlib.sha256(f"simcluster/tmpdir/{name}".encode()).digest()
    s = "".join(alphabet[b % len(alphabet)] for b in d[:26])
    return f"/var/folders/{s[:2]}/{s[2:]}0000gn/T/"


def darwin_version(macos):
    m = re.match(r"^([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?$", macos)
    if not m:
        raise TopologyError(f"bad macos version {macos!r} (want e.g. \"26.2\")")
    major, minor = int(m.group(1)), int(m.group(2) or 0)
    if major >= 26:
        dmajor = major - 1
    elif 11 <= major <= 15:
        dmajor = major + 9
    else:
        raise TopologyError(f"unsupported macos version {macos!r}")
    return dmajor, minor


def speed_gbps(speed):
    m = SPEED_RE.match(speed)
    if not m:
        raise TopologyError(f"bad speed {speed!r} (want e.g. \"80 Gb/s\")")
    return int(m.group(1))


def stock_default():
    """KC_STOCK (simcluster.sh): whether a Mac host without a "stock" key is a
    stock Mac (admin user, zsh, Apple's PATH, real sudo, ...; see README.md)."""
    v = os.environ.get("KC_STOCK", "1")
    if v not in ("0", "1"):
        raise TopologyError(f"KC_STOCK must be 0 or 1, not {v!r}")
    return v == "1"


def load(path):
    try:
        with open(path) as f:
            topo = json.load(f)
    except (OSError, ValueError) as e:
        raise TopologyError(f"{path}: {e}")
    if not isinstance(topo, dict) or not isinstance(topo.get("hosts"), list):
        raise TopologyError(f"{path}: want an object with a \"hosts\" list")
    return topo


def check_name(i, name, by_name):
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise TopologyError(f"host #{i}: bad or missing name {name!r} "
                            "(lower case letter, then [a-z0-9-], at most 20)")
    if name in by_name:
        raise TopologyError(f"duplicate host name {name}")


def normalise_linux(i, raw, defaults, by_name):
    """A plain Linux host: sshd, eth0 for management, one NIC per port."""
    hst = {k: v for k, v in defaults.items() if k in LINUX_KEYS and k != "name"}
    hst.update(raw)
    unknown = set(hst) - LINUX_KEYS
    if unknown:
        raise TopologyError(f"host #{i}: unknown keys for a linux host {sorted(unknown)}")
    name = hst.get("name")
    check_name(i, name, by_name)
    ifnames = hst.get("ifnames")
    n = hst.get("ports", len(ifnames) if isinstance(ifnames, list) else 2)
    if not isinstance(n, int) or not 1 <= n <= 16:
        raise TopologyError(f"{name}: ports must be 1..16")
    if ifnames is None:
        ifnames = [f"eth{r}" for r in range(1, n + 1)]
    if not isinstance(ifnames, list) or len(ifnames) != n:
        raise TopologyError(f"{name}: ifnames must be a list of {n} interface names")
    for ifname in ifnames:
        if (not isinstance(ifname, str) or not LINUX_IF_RE.match(ifname)
                or ifname in ("eth0", "lo")):
            raise TopologyError(f"{name}: bad interface name {ifname!r} "
                                "([a-z][a-z0-9]*, at most 15, not eth0 or lo)")
    if len(set(ifnames)) != n:
        raise TopologyError(f"{name}: ifnames has duplicates")
    hst.setdefault("sudo", "nopasswd")
    if hst["sudo"] not in ("nopasswd", "password"):
        raise TopologyError(f"{name}: sudo must be \"nopasswd\" or \"password\"")
    hst.update({"personality": "linux", "ports": n, "ifnames": ifnames, "tb_ports": n,
                "tb_gen": 4, "rdma_enabled": False, "index": i, "model": "Linux",
                "family": "Linux"})
    return hst


def normalise(topo):
    """Validate and fill defaults. Returns (hosts, cables) as lists of dicts."""
    defaults = topo.get("defaults", {})
    if not isinstance(defaults, dict):
        raise TopologyError("\"defaults\" must be an object")
    hosts = []
    by_name = {}
    for i, raw in enumerate(topo["hosts"]):
        if not isinstance(raw, dict):
            raise TopologyError(f"host #{i}: want an object")
        if raw.get("personality", defaults.get("personality", "mac")) == "linux":
            hst = normalise_linux(i, raw, defaults, by_name)
            by_name[hst["name"]] = hst
            hosts.append(hst)
            continue
        hst = dict(defaults)
        hst.update(raw)
        hst.setdefault("personality", "mac")
        hst.setdefault("system_profiler", "normal")
        if hst["personality"] != "mac":
            raise TopologyError(f"host #{i}: personality must be \"mac\" or \"linux\"")
        if hst["system_profiler"] not in SP_MODES:
            raise TopologyError(f"host #{i}: system_profiler must be one of {', '.join(SP_MODES)}")
        unknown = set(hst) - HOST_KEYS
        if unknown:
            raise TopologyError(f"host #{i}: unknown keys {sorted(unknown)}")
        name = hst.get("name")
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise TopologyError(f"host #{i}: bad or missing name {name!r} "
                                "(lower case letter, then [a-z0-9-], at most 20)")
        if name in by_name:
            raise TopologyError(f"duplicate host name {name}")
        model = hst.get("model")
        if not isinstance(model, str):
            raise TopologyError(f"{name}: missing model")
        known = MODELS.get(model)
        if known is None and not ("family" in hst and "chip" in hst and "tb_ports" in hst):
            raise TopologyError(f"{name}: unknown model {model}: give family, chip and tb_ports")
        family, chip, gen, nports, cores, mem = known or ("", "", 5, 0, (8, 4), 64)
        hst.setdefault("family", family)
        hst.setdefault("chip", chip)
        hst.setdefault("tb_gen", gen)
        hst.setdefault("tb_ports", nports)
        hst.setdefault("cpus", cores[0] + cores[1])
        hst.setdefault("cores", list(cores))
        hst.setdefault("memory_gb", mem)
        hst.setdefault("macos", "26.2")
        hst.setdefault("rdma_enabled", hst["tb_gen"] >= 5)
        hst.setdefault("sudo", "nopasswd")
        hst.setdefault("stock", stock_default())
        hst.setdefault("shell", "zsh")
        hst.setdefault("python", "stub")
        hst.setdefault("computer_name", name)
        hst.setdefault("ifconfig_extras", True)
        hst.setdefault("pmset_sleep", 0)
        hst.setdefault("firewall_state", 0)
        if not isinstance(hst["pmset_sleep"], int) or isinstance(hst["pmset_sleep"], bool) \
                or not 0 <= hst["pmset_sleep"] <= 1440:
            raise TopologyError(f"{name}: pmset_sleep must be minutes, 0..1440")
        if hst["firewall_state"] not in (0, 1, 2) or isinstance(hst["firewall_state"], bool):
            raise TopologyError(f"{name}: firewall_state must be 0, 1 or 2")
        if not isinstance(hst["ifconfig_extras"], bool):
            raise TopologyError(f"{name}: ifconfig_extras must be true or false")
        if hst["tb_gen"] not in (3, 4, 5):
            raise TopologyError(f"{name}: tb_gen must be 3, 4 or 5")
        if not isinstance(hst["rdma_enabled"], bool):
            raise TopologyError(f"{name}: rdma_enabled must be true or false")
        if not isinstance(hst["stock"], bool):
            raise TopologyError(f"{name}: stock must be true or false")
        if hst["sudo"] not in ("nopasswd", "password", "scoped"):
            raise TopologyError(f"{name}: sudo must be \"nopasswd\", \"password\" or \"scoped\"")
        if hst["sudo"] == "scoped" and not hst["stock"]:
            raise TopologyError(f"{name}: sudo \"scoped\" needs a stock host (real sudo)")
        if hst["shell"] not in SHELLS:
            raise TopologyError(f"{name}: shell must be one of {', '.join(SHELLS)}")
        if hst["python"] not in PYTHONS:
            raise TopologyError(f"{name}: python must be one of {', '.join(PYTHONS)}")
        hst["other_managers"] = other_managers(name, hst.get("other_managers", {}),
                                               hst["stock"])
        n = hst["tb_ports"]
        if not isinstance(n, int) or not 1 <= n <= 8:
            raise TopologyError(f"{name}: tb_ports must be 1..8")
        laptop = hst["family"] == "MacBook Pro" or hst["family"] == "MacBook Air"
        hst.setdefault("en0_port", "Wi-Fi" if laptop else "Ethernet")
        if hst["en0_port"] not in ("Ethernet", "Wi-Fi"):
            raise TopologyError(f"{name}: en0_port must be \"Ethernet\" or \"Wi-Fi\"")
        tb_map = hst.get("tb_map")
        if tb_map is None:
            first = 1 if hst["en0_port"] == "Wi-Fi" else 2
            tb_map = {f"Thunderbolt {r}": f"en{first + r - 1}" for r in range(1, n + 1)}
        if not isinstance(tb_map, dict):
            raise TopologyError(f"{name}: tb_map must be an object")
        want = {f"Thunderbolt {r}" for r in range(1, n + 1)}
        if set(tb_map) != want:
            raise TopologyError(f"{name}: tb_map keys must be exactly {sorted(want)}")
        ifs = list(tb_map.values())
        for ifname in ifs:
            if not isinstance(ifname, str) or not IFACE_RE.match(ifname) or ifname == "en0":
                raise TopologyError(f"{name}: bad Thunderbolt interface {ifname!r} (en1..en99)")
        if len(set(ifs)) != len(ifs):
            raise TopologyError(f"{name}: tb_map maps two ports to one interface")
        hst["tb_map"] = tb_map
        if "wifi" not in hst:
            hst["wifi"] = None if (hst["en0_port"] == "Wi-Fi" or "en1" in ifs) else "en1"
        if hst["wifi"] is not None:
            if not IFACE_RE.match(str(hst["wifi"])) or hst["wifi"] in ifs or hst["wifi"] == "en0":
                raise TopologyError(f"{name}: bad wifi interface {hst['wifi']!r}")
            if hst["en0_port"] == "Wi-Fi":
                raise TopologyError(f"{name}: en0 is already Wi-Fi; set wifi to null")
        hst["darwin"] = darwin_version(hst["macos"])
        hst["index"] = i
        by_name[name] = hst
        hosts.append(hst)
    if not hosts:
        raise TopologyError("no hosts")

    cables = []
    used = {}
    for k, raw in enumerate(topo.get("cables", [])):
        if not isinstance(raw, dict):
            raise TopologyError(f"cable #{k}: want an object")
        c = dict(raw)
        unknown = set(c) - CABLE_KEYS
        if unknown:
            raise TopologyError(f"cable #{k}: unknown keys {sorted(unknown)}")
        for end in ("a", "b"):
            hn, port = c.get(end), c.get(end + "_port")
            if hn not in by_name:
                raise TopologyError(f"cable #{k}: unknown host {hn!r}")
            if not isinstance(port, int) or not 1 <= port <= by_name[hn]["tb_ports"]:
                raise TopologyError(f"cable #{k}: {hn} has no Thunderbolt port {port!r}")
            if (hn, port) in used:
                raise TopologyError(f"cable #{k}: {hn} port {port} already used by cable "
                                    f"#{used[hn, port]}")
            used[hn, port] = k
        if c["a"] == c["b"]:
            raise TopologyError(f"cable #{k}: both ends on {c['a']}")
        ga, gb = by_name[c["a"]]["tb_gen"], by_name[c["b"]]["tb_gen"]
        c.setdefault("speed", "80 Gb/s" if min(ga, gb) >= 5 else "40 Gb/s")
        speed_gbps(c["speed"])
        c.setdefault("via_dock", False)
        if not isinstance(c["via_dock"], bool):
            raise TopologyError(f"cable #{k}: via_dock must be true or false")
        c.setdefault("dock_side", "both")
        if c["dock_side"] not in ("both", "a", "b"):
            raise TopologyError(f"cable #{k}: dock_side must be both, a or b")
        fast = speed_gbps(c["speed"]) >= 80
        c.setdefault("dock_name", "Thunderbolt 5 Dock" if fast else "Thunderbolt 4 Dock")
        c.setdefault("dock_vendor", "Generic Dock Vendor")
        c["index"] = k
        cables.append(c)
    return hosts, cables


def build(topo, prefix, mgmt_net):
    hosts, cables = normalise(topo)
    by_name = {x["name"]: x for x in hosts}

    # per (host, port): cable end info
    ends = {}
    for c in cables:
        for me, peer in (("a", "b"), ("b", "a")):
            ends[c[me], c[me + "_port"]] = (c, peer, me)

    def port_if(hn, r):
        if by_name[hn]["personality"] == "linux":
            return by_name[hn]["ifnames"][r - 1]
        return by_name[hn]["tb_map"][f"Thunderbolt {r}"]

    def port_mac(hn, r):
        if by_name[hn]["personality"] == "linux":
            return det_mac(0x02, hn, "eth", r)
        return det_mac(0x36, hn, "tb", r)

    def port_guid(hn, r):
        # As on real Macs: the first byte counts up with the en number from
        # a per-host base, then 5 per-host bytes, then Apple's vendor id
        # 0x05AC byte-swapped ("8096a9d9edbaac05", "8196a9d9edbaac05", ...).
        ens = [int(v[2:]) for v in by_name[hn]["tb_map"].values()]
        d = h(hn, "guid")
        first = (int(d[0:2], 16) & 0xF0) + int(port_if(hn, r)[2:]) - min(ens)
        return f"{first & 0xFF:02x}{d[2:12]}ac05"

    def bus_uuid(hn, r):
        return det_uuid(hn, "bus", r)

    def rdma_active(c):
        a, b = by_name[c["a"]], by_name[c["b"]]
        return (a["rdma_enabled"] and b["rdma_enabled"] and not c["via_dock"]
                and speed_gbps(c["speed"]) >= 80)

    def peer_item(peer, peer_port):
        p = by_name[peer]
        if p["personality"] == "linux":
            # approximation: a Linux XDomain host (thunderbolt-net) by its host name
            return {
                "_name": peer,
                "device_id_key": "0x1",
                "device_name_key": peer,
                "domain_uuid_key": bus_uuid(peer, peer_port),
                "services_title": [{
                    "_name": "service_ip",
                    "protocol_id_key": 1,
                    "protocol_revision_key": 1,
                    "protocol_version_key": 1,
                    "service_uuid_key": det_uuid(peer, "service", "ip", peer_port),
                }],
                "vendor_id_key": "0x8086",
                "vendor_name_key": "Linux",
            }
        services = [{
            "_name": "service_ip",
            "protocol_id_key": 1,
            "protocol_revision_key": 1,
            "protocol_version_key": 1,
            "service_uuid_key": det_uuid(peer, "service", "ip", peer_port),
        }]
        if p["rdma_enabled"]:
            services.append({
                "_name": "unknown_xd_service",
                "protocol_id_key": 64087,
                "protocol_revision_key": 0,
                "protocol_version_key": 1,
                "service_key_key": RDMA_SERVICE_KEY,
                "service_uuid_key": det_uuid(peer, "service", "rdma", peer_port),
            })
        return {
            "_name": p["family"],
            "device_id_key": "0xA",
            "device_name_key": p["model"],
            "domain_uuid_key": bus_uuid(peer, peer_port),
            "services_title": services,
            "vendor_id_key": "0x0A27",
            "vendor_name_key": "Apple Inc.",
        }

    def dock_item(c, inner):
        d = h("dock", c["a"], c["a_port"], c["b"], c["b_port"])
        link = {"current_speed_key": c["speed"], "link_status_key": "0x2",
                "receptacle_status_key": "receptacle_connected"}
        fast = speed_gbps(c["speed"]) >= 80
        return {
            "_items": [inner],
            "_name": c["dock_name"],
            "device_id_key": "0x" + d[:4].upper(),
            "device_name_key": c["dock_name"],
            "device_revision_key": "0x1",
            "mode_key": "usb_four_v2" if fast else "usb_four",
            "receptacle_2_tag": dict(link),
            "receptacle_upstream_ambiguous_tag": dict(link),
            "route_string_key": "1",
            "switch_uid_key": "0x" + d[4:20].upper(),
            "switch_version_key": "62.1",
            "vendor_id_key": "0x" + d[20:24].upper(),
            "vendor_name_key": c["dock_vendor"],
        }

    out_hosts = {}
    for hst in hosts:
        name, i = hst["name"], hst["index"]
        if hst["personality"] == "linux":
            ports = []
            for r in range(1, hst["ports"] + 1):
                end = ends.get((name, r))
                port = {"port": r, "receptacle": r, "if": port_if(name, r),
                        "mac": port_mac(name, r), "cabled": bool(end), "peer": None,
                        "peer_if": None, "peer_receptacle": None, "speed": None}
                if end:
                    c, peer_end, _ = end
                    port.update({"peer": c[peer_end], "peer_receptacle": c[peer_end + "_port"],
                                 "peer_if": port_if(c[peer_end], c[peer_end + "_port"]),
                                 "speed": c["speed"]})
                ports.append(port)
            out_hosts[name] = {
                "name": name, "index": i, "ns": f"{prefix}-{name}", "personality": "linux",
                "model": "Linux", "rdma_enabled": False, "sudo": hst["sudo"],
                "mgmt": {"if": "eth0", "ip": f"{mgmt_net}.{10 + i}", "prefix": 24,
                         "mac": det_mac(0x02, name, "eth0")},
                "tb_ports": ports,
            }
            continue
        idle_speed = "Up to 120 Gb/s" if hst["tb_gen"] >= 5 else "Up to 40 Gb/s"
        sw_base = "05AC" + h(name, "switch")[:11].upper()
        tb_ports = []
        buses = []
        for r in range(1, hst["tb_ports"] + 1):
            ifname = port_if(name, r)
            mac = port_mac(name, r)
            port = {
                "receptacle": r, "if": ifname, "mac": mac, "guid": port_guid(name, r), "bus": r - 1,
                "domain_uuid": bus_uuid(name, r), "cabled": False, "peer": None,
                "peer_if": None, "peer_receptacle": None, "speed": None, "via_dock": False,
                "dock_visible": False, "rdma_active": False, "cable": None,
            }
            bus = {
                "_name": f"thunderboltusb4_bus_{r - 1}",
                "device_name_key": hst["family"],
                "domain_uuid_key": bus_uuid(name, r),
                "receptacle_1_tag": {
                    "current_speed_key": idle_speed,
                    "link_status_key": "0x100",
                    "receptacle_id_key": str(r),
                    "receptacle_status_key": "receptacle_no_devices_connected",
                },
                "route_string_key": "0",
                "switch_uid_key": "0x" + sw_base + str(r - 1),
                "vendor_name_key": "Apple Inc.",
            }
            end = ends.get((name, r))
            if end:
                c, peer_end, me = end
                peer, pport = c[peer_end], c[peer_end + "_port"]
                dock_visible = c["via_dock"] and c["dock_side"] in ("both", me)
                port.update({
                    "cabled": True, "peer": peer, "peer_if": port_if(peer, pport),
                    "peer_receptacle": pport, "speed": c["speed"], "via_dock": c["via_dock"],
                    "dock_visible": dock_visible, "rdma_active": rdma_active(c),
                    "cable": c["index"],
                })
                bus["receptacle_1_tag"] = {
                    "current_speed_key": c["speed"],
                    "link_status_key": "0x2",
                    "micro_version_key": "0.0.0",
                    "receptacle_id_key": str(r),
                    "receptacle_status_key": "receptacle_connected",
                }
                item = peer_item(peer, pport)
                bus["_items"] = [dock_item(c, item) if dock_visible else item]
            tb_ports.append(port)
            buses.append(bus)
        buses.reverse()   # system_profiler lists the highest bus first

        mgmt_mac = det_mac(0x02, name, "en0")
        wifi = None
        if hst["wifi"]:
            wifi = {"if": hst["wifi"], "mac": det_mac(0x02, name, "wifi")}
        hw_ports = []
        if hst["en0_port"] == "Ethernet":
            hw_ports.append(["Ethernet", "en0", mgmt_mac])
        hw_ports.append(["Thunderbolt Bridge", "bridge0", tb_ports[0]["mac"]])
        if hst["en0_port"] == "Wi-Fi":
            hw_ports.append(["Wi-Fi", "en0", mgmt_mac])
        elif wifi:
            hw_ports.append(["Wi-Fi", wifi["if"], wifi["mac"]])
        for p in tb_ports:
            hw_ports.append([f"Thunderbolt {p['receptacle']}", p["if"], p["mac"]])

        dmajor, dminor = hst["darwin"]
        minor = int(hst["macos"].split(".")[1]) if "." in hst["macos"] else 0
        build_id = hst.get("build") or (
            f"{dmajor}{chr(ord('A') + minor)}{10 + int(h('build', hst['macos'])[:4], 16) % 90}")
        out_hosts[name] = {
            "name": name,
            "index": i,
            "ns": f"{prefix}-{name}",
            "personality": "mac",
            "system_profiler": hst["system_profiler"],
            "model": hst["model"],
            "family": hst["family"],
            "chip": hst["chip"],
            "tb_gen": hst["tb_gen"],
            "cpus": hst["cpus"],
            "cores": hst.get("cores", [hst["cpus"], 0]),
            "memory_gb": hst["memory_gb"],
            "macos": hst["macos"],
            "build": build_id,
            "darwin": f"{dmajor}.{dminor}.0",
            "computer_name": hst["computer_name"],
            "platform_uuid": det_uuid(name, "platform"),
            "serial": h(name, "serial")[:10].upper().replace("0", "K").replace("1", "L"),
            "rdma_enabled": hst["rdma_enabled"],
            "sudo": hst["sudo"],
            "stock": hst["stock"],
            "shell": hst["shell"],
            "python": hst["python"],
            # the ssh user of a stock Mac: the first admin account, and the
            # per-user temporary folder launchd gives its sessions
            "user": ({"name": "admin", "uid": 501, "gid": 20, "home": "/Users/admin",
                      "tmpdir": tmpdir(name)} if hst["stock"] else
                     {"name": "root", "uid": 0, "gid": 0, "home": "/root", "tmpdir": None}),
            "pmset_sleep": hst["pmset_sleep"],
            "firewall_state": hst["firewall_state"],
            "other_managers": hst["other_managers"],
            "mgmt": {"if": "en0", "ip": f"{mgmt_net}.{10 + i}", "prefix": 24, "mac": mgmt_mac,
                     "port_name": hst["en0_port"]},
            "wifi": wifi,
            # the other interfaces every Mac lists in ifconfig (not Thunderbolt, no IPv4)
            "extra_ifs": ([{"if": x, "mac": det_mac(0x5a if x.startswith("anpi") else 0x02,
                                                    name, x)}
                           for x in ("anpi0", "anpi1", "ap1", "awdl0", "llw0", "utun0",
                                     "utun1", "utun2", "utun3")]
                          if hst["ifconfig_extras"] else []),
            "hardware_ports": hw_ports,
            "tb_ports": tb_ports,
            "bridge": {"mac": tb_ports[0]["mac"], "members": [p["if"] for p in tb_ports]},
            "sp_thunderbolt": buses,
        }

    cluster = {
        "name": topo.get("name", ""),
        "description": topo.get("description", ""),
        "prefix": prefix,
        "mgmt_net": mgmt_net,
        "hosts": [{"name": x["name"], "index": x["index"], "ns": out_hosts[x["name"]]["ns"],
                   "mgmt_ip": out_hosts[x["name"]]["mgmt"]["ip"],
                   "mgmt_if": out_hosts[x["name"]]["mgmt"]["if"], "model": x["model"],
                   "personality": x["personality"], "stock": x.get("stock", False),
                   "rdma_enabled": x["rdma_enabled"], "sudo": x["sudo"]} for x in hosts],
        "cables": [{"a": c["a"], "a_port": c["a_port"], "a_if": port_if(c["a"], c["a_port"]),
                    "b": c["b"], "b_port": c["b_port"], "b_if": port_if(c["b"], c["b_port"]),
                    "speed": c["speed"], "via_dock": c["via_dock"], "dock_side": c["dock_side"],
                    "rdma_active": rdma_active(c)} for c in cables],
    }
    return hosts, cables, out_hosts, cluster


def ip_batches(hosts, cables, out_hosts, prefix, mgmt_net):
    br = f"{prefix}-br"
    limbo = f"{prefix}--unplugged"
    root = [f"link add name {br} type bridge", f"addr add {mgmt_net}.1/24 dev {br}",
            f"link set {br} up"]
    for hst in hosts:
        root.append(f"netns add {out_hosts[hst['name']]['ns']}")
    root.append(f"netns add {limbo}")
    for hst in hosts:
        o = out_hosts[hst["name"]]
        m = f"{prefix}-m{hst['index']}"
        root.append(f"link add name {m} type veth peer name {o['mgmt']['if']} "
                    f"address {o['mgmt']['mac']} "
                    f"netns {o['ns']}")
        root.append(f"link set {m} master {br} up")
    for c in cables:
        a, b = out_hosts[c["a"]], out_hosts[c["b"]]
        pa, pb = a["tb_ports"][c["a_port"] - 1], b["tb_ports"][c["b_port"] - 1]
        root.append(f"link add name {pa['if']} netns {a['ns']} address {pa['mac']} type veth "
                    f"peer name {pb['if']} netns {b['ns']} address {pb['mac']}")
    for hst in hosts:
        o = out_hosts[hst["name"]]
        for p in o["tb_ports"]:
            if not p["cabled"]:
                root.append(f"link add name {p['if']} netns {o['ns']} address {p['mac']} "
                            f"type veth peer name u{hst['index']}p{p['receptacle']} netns {limbo}")
    per_host = {}
    for hst in hosts:
        o = out_hosts[hst["name"]]
        mif = o["mgmt"]["if"]
        lines = ["link set lo up", f"addr add {o['mgmt']['ip']}/24 dev {mif}", f"link set {mif} up"]
        for p in o["tb_ports"]:
            lines.append(f"link set {p['if']} up")
        per_host[hst["name"]] = lines
    return root, per_host


def compile_to(path, state_dir, prefix, mgmt_net):
    topo = load(path)
    hosts, cables, out_hosts, cluster = build(topo, prefix, mgmt_net)
    if len(hosts) > 50:
        raise TopologyError("at most 50 hosts")
    root, per_host = ip_batches(hosts, cables, out_hosts, prefix, mgmt_net)
    os.makedirs(os.path.join(state_dir, "hosts"), exist_ok=True)

    def write(rel, text):
        with open(os.path.join(state_dir, rel), "w") as f:
            f.write(text)

    write("cluster.json", json.dumps(cluster, indent=2) + "\n")
    write("ip-root.batch", "\n".join(root) + "\n")
    write("hosts.tsv", "".join(f"{x['name']}\t{x['index']}\t{out_hosts[x['name']]['ns']}\t"
                               f"{out_hosts[x['name']]['mgmt']['ip']}\t{x['personality']}\t"
                               f"{1 if x.get('stock') else 0}\n"
                               for x in hosts))
    for hst in hosts:
        d = os.path.join("hosts", hst["name"])
        os.makedirs(os.path.join(state_dir, d), exist_ok=True)
        write(os.path.join(d, "mac.json"), json.dumps(out_hosts[hst["name"]], indent=2) + "\n")
        write(os.path.join(d, "ip.batch"), "\n".join(per_host[hst["name"]]) + "\n")


def check(path):
    topo = load(path)
    hosts, cables, out_hosts, cluster = build(topo, "sc", "10.217.0")
    print(f"{topo.get('name', os.path.basename(path))}: {len(hosts)} hosts, {len(cables)} cables")
    for x in hosts:
        o = out_hosts[x["name"]]
        tb = " ".join(f"TB{p['receptacle']}={p['if']}" for p in o["tb_ports"])
        if o["personality"] == "linux":
            ifs = " ".join(p["if"] for p in o["tb_ports"])
            print(f"  {x['name']:<6} Linux     sudo={o['sudo']:<8} {ifs}")
            continue
        sp = "" if o["system_profiler"] == "normal" else f" system_profiler={o['system_profiler']}"
        st = f" stock shell={o['shell']} python={o['python']}" if o["stock"] else ""
        print(f"  {x['name']:<6} {o['model']:<9} macOS {o['macos']:<5} rdma={'on ' if o['rdma_enabled'] else 'off'}"
              f" sudo={o['sudo']:<8} {tb}{sp}{st}")
    for c in cluster["cables"]:
        extra = " via dock" + ("" if c["dock_side"] == "both" else f" (seen by {c['dock_side']} only)") \
            if c["via_dock"] else ""
        print(f"  {c['a']}:TB{c['a_port']}({c['a_if']}) -- {c['b']}:TB{c['b_port']}({c['b_if']})"
              f"  {c['speed']}{extra}  rdma={'active' if c['rdma_active'] else 'down'}")


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "check":
            check(argv[2])
        elif len(argv) == 6 and argv[1] == "compile":
            compile_to(argv[2], argv[3], argv[4], argv[5])
        else:
            sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
            return 2
    except TopologyError as e:
        sys.stderr.write(f"simtopo: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
