#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fakemac.py - fake macOS commands for one simulated host (python3 stdlib only).

    fakemac.py --simhost HOSTDIR COMMAND [ARGS...]

simcluster.sh puts one small wrapper per command in HOSTDIR/bin (first on the
PATH of ssh sessions) and, with KC_OVERLAY=1, also at the macOS absolute paths
(/usr/sbin/system_profiler, /sbin/ifconfig, /usr/bin/sudo, ...) inside the
host's mount namespace.  HOSTDIR/mac.json (written by simtopo.py) describes
the host; live interface state comes from `ip` inside the host's network
namespace.

Commands: system_profiler, networksetup, ibv_devices, ibv_devinfo, ipconfig,
ifconfig, route, netstat (-rn: the namespace's IPv4 routes of every table, in
macOS's layout), sudo, rdma_ctl, sw_vers, sysctl, uname, scutil, launchctl
(print and bootout of the daemons of other tools: "other_managers").

`fakemac.py --simhost HOSTDIR --reboot` (inside the host's namespaces,
simcluster.sh reboot H) restarts the host as far as its network goes: what
ifconfig and route did is gone, the network services are applied again.

With FAKEMAC_OFFLINE=1 in the environment nothing is read from the live
network: interfaces, carriers and addresses are derived from mac.json (the
management address on en0, IPv6 link-local addresses on interfaces with a
carrier, cabled Thunderbolt ports up with a carrier, the others without), so
outputs can be generated without namespaces or root (tests/sim/make-bundle.sh).

A host with "system_profiler" set to "garbage", "truncated", "empty" or
"error" in its topology gets a broken system_profiler (noise, the normal
output cut in the middle, nothing at all, or an error and exit status 1).

Every invocation is appended to HOSTDIR/calls.log; invocations that change (or
try to change) the host are also appended to HOSTDIR/mutations.log, one line
each: `rc=<exit status> sudo=<0|1> <command line>`.  Mutating commands need
root, as on a Mac where the ssh user is not root: they fail unless run through
the fake sudo (which sets SIMCLUSTER_SUDO=1).  On a stock Mac ("stock": true
in mac.json: an admin user, real sudo) privileged means an effective uid of 0.
"""

import fcntl
import ipaddress
import json
import os
import shlex
import shutil
import subprocess
import sys

SYS_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IP = shutil.which("ip", path=SYS_PATH) or "ip"


class Host:
    def __init__(self, hostdir):
        self.dir = hostdir
        with open(os.path.join(hostdir, "mac.json")) as f:
            self.cfg = json.load(f)
        # A stock Mac (real sudo): privileged is what the process is, root;
        # the other Macs have the fake sudo, which says so in the environment.
        self.stock = bool(self.cfg.get("stock"))
        self.sudo = (os.geteuid() == 0 if self.stock
                     else os.environ.get("SIMCLUSTER_SUDO") == "1")

    # ---- persistent state (bridge0, network services) ----
    def _default_state(self):
        return {"bridge0": {"exists": True, "up": True,
                            "members": list(self.cfg["bridge"]["members"])},
                "services_disabled": []}

    def setting(self, key):
        """A setting the fakes keep per host (pmset sleep, firewall state):
        its value in state.json once a command changed it, else the
        topology's."""
        return self.state().get(key, self.cfg.get(key))

    def state(self):
        try:
            with open(os.path.join(self.dir, "state.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return self._default_state()

    def update_state(self, fn):
        lock = os.path.join(self.dir, "state.lock")
        with open(lock, "a") as lf:
            fcntl.flock(lf, fcntl.LOCK_EX)
            st = self.state()
            fn(st)
            tmp = os.path.join(self.dir, "state.json.tmp")
            with open(tmp, "w") as f:
                json.dump(st, f, indent=1)
            os.replace(tmp, os.path.join(self.dir, "state.json"))

    # ---- logs ----
    def log(self, argv, rc, mutating):
        # one line each, even for a script given as an argument
        text = shlex.join(argv).replace("\n", "\\n")
        line = f"rc={rc} sudo={1 if self.sudo else 0} {text}\n"
        files = ["calls.log"] + (["mutations.log"] if mutating else [])
        for name in files:
            fd = os.open(os.path.join(self.dir, name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)

    # ---- live network state ----
    def links(self):
        if OFFLINE:
            return offline_links(self.cfg)
        try:
            out = subprocess.run([IP, "-j", "addr", "show"], capture_output=True, text=True,
                                 check=True).stdout
            return {d["ifname"]: d for d in json.loads(out)}
        except (OSError, subprocess.CalledProcessError, ValueError):
            return {}

    def ipv4(self, ifname, links=None):
        d = (links if links is not None else self.links()).get(ifname)
        if not d:
            return []
        return [(a["local"], a["prefixlen"]) for a in d.get("addr_info", [])
                if a.get("family") == "inet"]

    def routes(self):
        """The namespace's IPv4 routes, every table, as `ip -j -4 route show table all`."""
        if OFFLINE:
            return offline_routes(self.cfg)
        try:
            out = subprocess.run([IP, "-j", "-4", "route", "show", "table", "all"],
                                 capture_output=True, text=True, check=True).stdout
            return json.loads(out or "[]")
        except (OSError, subprocess.CalledProcessError, ValueError):
            return []

    def tb_port(self, ifname):
        for p in self.cfg["tb_ports"]:
            if p["if"] == ifname:
                return p
        return None


OFFLINE = os.environ.get("FAKEMAC_OFFLINE") == "1"


def link_local(mac):
    """EUI-64 IPv6 link-local address of a MAC, as Linux would assign it."""
    b = [int(x, 16) for x in mac.split(":")]
    b[0] ^= 2
    w = [b[0] << 8 | b[1], b[2] << 8 | 0xFF, 0xFE << 8 | b[3], b[4] << 8 | b[5]]
    return str(ipaddress.IPv6Address("fe80::" + ":".join(f"{x:x}" for x in w)))


def offline_links(cfg):
    """What `ip -j addr show` would report on a freshly brought up host."""
    def link(name, mac, carrier, inet=None):
        addrs = []
        if inet:
            net = ipaddress.IPv4Network(f"{inet[0]}/{inet[1]}", strict=False)
            addrs.append({"family": "inet", "local": inet[0], "prefixlen": inet[1],
                          "broadcast": str(net.broadcast_address)})
        if carrier:
            addrs.append({"family": "inet6", "local": link_local(mac), "prefixlen": 64})
        return {"ifname": name, "flags": ["BROADCAST", "MULTICAST", "UP"]
                + (["LOWER_UP"] if carrier else []), "mtu": 1500, "address": mac,
                "addr_info": addrs}
    res = {"lo": {"ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536,
                  "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8},
                                {"family": "inet6", "local": "::1", "prefixlen": 128}]}}
    m = cfg["mgmt"]
    res[m["if"]] = link(m["if"], m["mac"], True, (m["ip"], m["prefix"]))
    for p in cfg["tb_ports"]:
        res[p["if"]] = link(p["if"], p["mac"], p["cabled"])
    return res


def offline_routes(cfg):
    """What `ip -j -4 route show table all` would report on a freshly brought up host."""
    m = cfg["mgmt"]
    net = ipaddress.IPv4Network(f"{m['ip']}/{m['prefix']}", strict=False)
    return [{"dst": f"{net}", "dev": m["if"], "protocol": "kernel", "scope": "link",
             "prefsrc": m["ip"]},
            {"type": "local", "dst": "127.0.0.0/8", "dev": "lo", "table": "local"},
            {"type": "local", "dst": "127.0.0.1", "dev": "lo", "table": "local"},
            {"type": "local", "dst": m["ip"], "dev": m["if"], "table": "local"}]


def out(text):
    sys.stdout.write(text)


def err(text):
    sys.stderr.write(text)


def run_ip(*args):
    r = subprocess.run([IP, *args], capture_output=True, text=True)
    return r.returncode, r.stderr.strip()


# --------------------------------------------------------------------------
# system_profiler

def sp_hardware(host):
    c = host.cfg
    p, e = c["cores"]
    return [{
        "_name": "hardware_overview",
        "activation_lock_status": "activation_lock_disabled",
        "chip_type": c["chip"],
        "machine_model": c["model"],
        "machine_name": c["family"],
        "number_processors": f"proc {p + e}:{p}:{e}",
        "physical_memory": f"{c['memory_gb']} GB",
        "platform_UUID": c["platform_uuid"],
        "serial_number": c["serial"],
    }]


def sp_software(host):
    c = host.cfg
    return [{
        "_name": "os_overview",
        "boot_mode": "normal_boot",
        "kernel_version": f"Darwin {c['darwin']}",
        "local_host_name": c["computer_name"],
        "os_version": f"macOS {c['macos']} ({c['build']})",
        "secure_vm": "secure_vm_enabled",
        "system_integrity": "integrity_enabled",
        "user_name": "root (root)",
    }]


SP_TYPES = {
    "SPHardwareDataType": (sp_hardware, "SPRootDataType", "SPPlatformReporter", "-2"),
    "SPSoftwareDataType": (sp_software, "SPRootDataType", "SPOSReporter", "-2"),
    "SPThunderboltDataType": (lambda host: host.cfg["sp_thunderbolt"], "SPHardwareDataType",
                              "SPThunderboltReporter", -1),
}


def sp_text_thunderbolt(items):
    lines = ["Thunderbolt/USB4:", ""]

    def tag_lines(tag, ind):
        status = ("Device connected" if tag.get("receptacle_status_key") == "receptacle_connected"
                  else "No device connected")
        res = [f"{ind}Status: {status}", f"{ind}Link Status: {tag.get('link_status_key', '')}",
               f"{ind}Speed: {tag.get('current_speed_key', '')}"]
        if "receptacle_id_key" in tag:
            res.append(f"{ind}Receptacle: {tag['receptacle_id_key']}")
        if "micro_version_key" in tag:
            res.append(f"{ind}Micro Firmware Version: {tag['micro_version_key']}")
        return res

    def device(item, ind):
        res = [f"{ind}{item['_name']}:", ""]
        d = ind + "  "
        res.append(f"{d}Vendor Name: {item.get('vendor_name_key', '')}")
        res.append(f"{d}Device Name: {item.get('device_name_key', '')}")
        if "mode_key" in item:
            mode = {"usb_four_v2": "USB4 v2", "usb_four": "USB4",
                    "thunderbolt_three": "Thunderbolt 3"}.get(item["mode_key"], item["mode_key"])
            res.append(f"{d}Mode: {mode}")
        if "device_id_key" in item:
            res.append(f"{d}Device ID: {item['device_id_key']}")
        if "vendor_id_key" in item:
            res.append(f"{d}Vendor ID: {item['vendor_id_key']}")
        if "device_revision_key" in item:
            res.append(f"{d}Device Revision: {item['device_revision_key']}")
        if "switch_uid_key" in item:
            res.append(f"{d}UID: {item['switch_uid_key']}")
        if "route_string_key" in item:
            res.append(f"{d}Route String: {item['route_string_key']}")
        if "switch_version_key" in item:
            res.append(f"{d}Firmware Version: {item['switch_version_key']}")
        if "domain_uuid_key" in item:
            res.append(f"{d}Domain UUID: {item['domain_uuid_key']}")
        for key in sorted(k for k in item if k.startswith("receptacle_") and k.endswith("_tag")):
            label = "Port (Upstream):" if "upstream" in key else "Port:"
            res.append(f"{d}{label}")
            res += tag_lines(item[key], d + "    ")
        if item.get("services_title"):
            res.append(f"{d}Services:")
            for s in item["services_title"]:
                if s["_name"] == "service_ip":
                    res.append(f"{d}  Internet Protocol:")
                else:
                    res.append(f"{d}  Service: Unknown:")
                s_ind = d + "    "
                res.append(f"{s_ind}Protocol ID: {s['protocol_id_key']}")
                res.append(f"{s_ind}Protocol Version: {s['protocol_version_key']}")
                res.append(f"{s_ind}Protocol Revision: {s['protocol_revision_key']}")
                if s.get("protocol_id_key") == 64087:
                    res.append(f"{s_ind}Service Key: rdma")
                res.append(f"{s_ind}Service UUID: {s['service_uuid_key']}")
        res.append("")
        for sub in item.get("_items", []):
            res += device(sub, ind + "  ")
        return res

    for bus in items:
        n = bus["_name"].rsplit("_", 1)[-1]
        lines.append(f"    Thunderbolt/USB4 Bus {n}:")
        lines.append("")
        ind = "      "
        lines.append(f"{ind}Vendor Name: {bus['vendor_name_key']}")
        lines.append(f"{ind}Device Name: {bus['device_name_key']}")
        lines.append(f"{ind}UID: {bus['switch_uid_key']}")
        lines.append(f"{ind}Route String: {bus['route_string_key']}")
        lines.append(f"{ind}Domain UUID: {bus['domain_uuid_key']}")
        lines.append(f"{ind}Port:")
        lines += tag_lines(bus["receptacle_1_tag"], ind + "    ")
        lines.append("")
        for item in bus.get("_items", []):
            lines += device(item, "        ")
    return "\n".join(lines) + "\n"


def sp_text_hardware(items):
    i = items[0]
    cores = i["number_processors"].split(":")
    return ("Hardware:\n\n    Hardware Overview:\n\n"
            f"      Model Name: {i['machine_name']}\n"
            f"      Model Identifier: {i['machine_model']}\n"
            f"      Chip: {i['chip_type']}\n"
            f"      Total Number of Cores: {cores[0].split()[1]} ({cores[1]} performance and "
            f"{cores[2]} efficiency)\n"
            f"      Memory: {i['physical_memory']}\n"
            f"      Serial Number (system): {i['serial_number']}\n"
            f"      Hardware UUID: {i['platform_UUID']}\n"
            "      Activation Lock Status: Disabled\n\n")


def sp_text_software(items):
    i = items[0]
    return ("Software:\n\n    System Software Overview:\n\n"
            f"      System Version: {i['os_version']}\n"
            f"      Kernel Version: {i['kernel_version']}\n"
            "      Boot Mode: Normal\n"
            f"      Computer Name: {i['local_host_name']}\n"
            f"      User Name: {i['user_name']}\n"
            "      Secure Virtual Memory: Enabled\n"
            "      System Integrity Protection: Enabled\n\n")


def sp_broken(host, args):
    """A broken system_profiler (topology host option "system_profiler")."""
    mode = host.cfg.get("system_profiler", "normal")
    if mode == "garbage":
        out("2026-01-01 12:00:00.000 system_profiler[4242:77777] Unexpected reply\n"
            "\x1b[0m\x1b[2K)]}'\n<<<<<<< ~~ ~ SPThunderboltDataType ~ >>>>>>>\n"
            "\"_name\" ; \"thunderboltusb4_bus_ ;; \ufffd\ufffd 0x2 [ } ] {\n"
            "This is not JSON, XML or system_profiler text.\n")
        return 0
    if mode == "empty":
        return 0
    if mode == "error":
        err("system_profiler: SPThunderboltDataType: the data type did not respond "
            "(timeout)\n")
        return 1
    return None


def cmd_system_profiler(host, args):
    mode = host.cfg.get("system_profiler", "normal")
    if mode not in ("normal", "truncated"):
        return sp_broken(host, args)
    if mode == "truncated":
        saved = sys.stdout
        import io
        sys.stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        try:
            rc = cmd_system_profiler_real(host, args)
            sys.stdout.flush()
            data = sys.stdout.buffer.getvalue()
        finally:
            sys.stdout = saved
        sys.stdout.flush()
        sys.stdout.buffer.write(data[:len(data) * 2 // 5])
        return rc
    return cmd_system_profiler_real(host, args)


def cmd_system_profiler_real(host, args):
    fmt = "text"
    types = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-json":
            fmt = "json"
        elif a == "-xml":
            fmt = "xml"
        elif a in ("-detailLevel", "-timeout"):
            i += 1
        elif a in ("-nospawn",):
            pass
        elif a == "-listDataTypes":
            out("Available Datatypes:\n" + "".join(t + "\n" for t in sorted(SP_TYPES)))
            return 0
        elif a.startswith("-"):
            err(f"system_profiler: unknown option {a}\n")
            return 1
        else:
            types.append(a)
        i += 1
    if not types:
        types = ["SPHardwareDataType", "SPSoftwareDataType", "SPThunderboltDataType"]
    known = [t for t in types if t in SP_TYPES]
    if fmt == "json":
        doc = {t: SP_TYPES[t][0](host) for t in known}
        if doc:
            out(json.dumps(doc, indent=2, sort_keys=True, separators=(",", " : ")) + "\n")
        else:
            out("{\n\n}\n")
    elif fmt == "xml":
        import datetime   # only here: every command starts faster without them
        import plistlib
        timestamp = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
        arr = []
        for t in known:
            fn, parent, reporter, level = SP_TYPES[t]
            arr.append({
                "_SPCommandLineArguments": ["/usr/sbin/system_profiler", "-nospawn", "-xml", t,
                                            "-detailLevel", "full"],
                "_SPCompletionInterval": 0.0875,
                "_SPResponseTime": 0.1123,
                "_dataType": t,
                "_detailLevel": level,
                "_items": fn(host),
                "_parentDataType": parent,
                "_timeStamp": timestamp,
                "_versionInfo": {f"com.apple.SystemProfiler.{reporter}": "1.0"},
            })
        sys.stdout.flush()
        sys.stdout.buffer.write(plistlib.dumps(arr, fmt=plistlib.FMT_XML, sort_keys=True))
    else:
        text = {"SPThunderboltDataType": sp_text_thunderbolt,
                "SPHardwareDataType": sp_text_hardware,
                "SPSoftwareDataType": sp_text_software}
        out("".join(text[t](SP_TYPES[t][0](host)) for t in known))
    return 0


# --------------------------------------------------------------------------
# networksetup

def default_services(host):
    """The services of a fresh Mac, in service order: one per hardware port
    that is not a Thunderbolt port (those are members of the bridge), then
    those another tool made (other_managers, on the first Thunderbolt port)."""
    res = []
    for name, dev, _mac in host.cfg["hardware_ports"]:
        if name.startswith("Thunderbolt ") and name != "Thunderbolt Bridge":
            continue
        res.append({"name": name, "port": name, "device": dev})
    tb1 = [(n, d) for n, d, _ in host.cfg["hardware_ports"] if n == "Thunderbolt 1"]
    for name in other_managers(host)["services"]:
        if tb1:
            res.append({"name": name, "port": tb1[0][0], "device": tb1[0][1]})
    return res


def other_managers(host):
    return host.cfg.get("other_managers") or {"daemons": [], "location": "Automatic",
                                              "locations": ["Automatic"], "services": []}


def locations(host, st=None):
    """(the active location, the locations there are), as the topology set
    them or -switchtolocation, -createlocation and -deletelocation since."""
    st = st if st is not None else host.state()
    m = other_managers(host)
    return st.get("location", m["location"]), st.get("locations", list(m["locations"]))


def location_mutate(host, op, args):
    """-switchtolocation, -createlocation NAME [populate], -deletelocation."""
    if not host.sudo:
        out("** Error: Command requires admin privileges.\n")
        return 14
    res = {"rc": 0}

    def apply(st):
        cur, locs = locations(host, st)
        name = args[0] if args else ""
        if op == "-createlocation":
            if not name or name in locs:
                res["rc"] = bad_params()
                return
            locs.append(name)
        elif name not in locs:
            out(f"{name} is not a location.\n")
            res["rc"] = 4
            return
        elif op == "-switchtolocation":
            cur = name
        elif name == cur:
            # the active location cannot be deleted
            res["rc"] = bad_params()
            return
        else:
            locs.remove(name)
        st["location"], st["locations"] = cur, locs
    host.update_state(apply)
    return res["rc"]


def services(host, st=None):
    """The services of the host now: [{"name", "port", "device"}], in order.
    A service's configuration, if set with -setmanual, is in
    st["services_config"][name] = {"ip": A, "prefix": L}."""
    st = st if st is not None else host.state()
    return st.get("services", default_services(host))


def not_service(name):
    out(f"{name} is not a recognized network service.\n"
        "** Error: The parameters were not valid.\n")
    return 4


def bad_params():
    out("** Error: The parameters were not valid.\n")
    return 4


def svc_address(host, dev, cfg, on):
    """Put the manual address of a service on its device (configd does it as
    soon as the service is set or enabled) or take it away."""
    if OFFLINE or not cfg or not dev:
        return
    if on:
        run_ip("addr", "replace", f"{cfg['ip']}/{cfg['prefix']}", "broadcast", "+", "dev", dev)
    else:
        run_ip("addr", "del", f"{cfg['ip']}/{cfg['prefix']}", "dev", dev)


def prefix_of_mask(mask):
    try:
        return ipaddress.IPv4Network(f"0.0.0.0/{mask}").prefixlen
    except ValueError:
        return None


def netsvc_mutate(host, op, args):
    """-createnetworkservice, -removenetworkservice, -setmanual,
    -setnetworkserviceenabled: the service model, applied live like configd."""
    if not host.sudo:
        # the real text and status for a user without root were not found: approximate
        out("** Error: Command requires admin privileges.\n")
        return 14
    res = {"rc": 0}

    def apply(st):
        svcs = services(host, st)
        names = [v["name"] for v in svcs]
        disabled = set(st.get("services_disabled", []))
        conf = st.setdefault("services_config", {})
        if op == "-createnetworkservice":
            if len(args) < 2 or args[0] in names:
                res["rc"] = bad_params()
                return
            ports = {n: (n, d) for n, d, _ in host.cfg["hardware_ports"]}
            ports.update({d: (n, d) for n, d, _ in host.cfg["hardware_ports"]})
            if args[1] not in ports:
                res["rc"] = bad_params()
                return
            port, dev = ports[args[1]]
            st["services"] = svcs + [{"name": args[0], "port": port, "device": dev}]
            return
        if not args or args[0] not in names:
            res["rc"] = not_service(args[0] if args else "")
            return
        name = args[0]
        svc = svcs[names.index(name)]
        on = name not in disabled
        if op == "-removenetworkservice":
            if on:
                svc_address(host, svc["device"], conf.get(name), False)
            st["services"] = [v for v in svcs if v["name"] != name]
            conf.pop(name, None)
            disabled.discard(name)
        elif op == "-setmanual":
            pfx = prefix_of_mask(args[2]) if len(args) >= 3 else None
            try:
                ipaddress.IPv4Address(args[1] if len(args) >= 2 else "")
            except ValueError:
                pfx = None
            if pfx is None:
                res["rc"] = bad_params()
                return
            if on:
                svc_address(host, svc["device"], conf.get(name), False)
            conf[name] = {"ip": args[1], "prefix": pfx}
            if on:
                svc_address(host, svc["device"], conf[name], True)
            st["services"] = svcs
        elif op == "-setnetworkserviceenabled":
            if len(args) < 2:
                res["rc"] = bad_params()
                return
            want = args[1].lower() in ("on", "yes", "1", "true")
            if want != on:
                svc_address(host, svc["device"], conf.get(name), want)
            disabled.discard(name) if want else disabled.add(name)
            if svc["device"] == "bridge0" and st["bridge0"]["exists"]:
                st["bridge0"]["up"] = want
        st["services_disabled"] = sorted(disabled)
    host.update_state(apply)
    return res["rc"]


def reboot(host):
    """What a restart keeps: the services and their configuration (the
    preferences). What it drops: whatever ifconfig and route did. Every
    Thunderbolt port loses its IPv4 addresses and routes, bridge0 gets back
    its configured members and is up only when its service is enabled, then
    each enabled service with a manual configuration puts its address back."""
    for p in host.cfg["tb_ports"]:
        run_ip("-4", "route", "flush", "dev", p["if"])
        run_ip("-4", "addr", "flush", "dev", p["if"])

    def apply(st):
        # launchd loads the daemons whose plists are there, and no other
        labels = [d["label"] for d in other_managers(host)["daemons"]]
        there = [x for x in labels if os.path.exists(daemon_plist_path(host, x))]
        st["daemons_loaded_at_boot"] = there
        st["daemons_booted_out"] = [x for x in labels if x not in there]
        disabled = set(st.get("services_disabled", []))
        svcs = services(host, st)
        bridge_on = any(v["device"] == "bridge0" and v["name"] not in disabled for v in svcs)
        st["bridge0"] = {"exists": True, "up": bridge_on,
                         "members": list(host.cfg["bridge"]["members"])}
        for v in svcs:
            cfg = st.get("services_config", {}).get(v["name"])
            if v["name"] not in disabled and cfg and v["device"] != host.cfg["mgmt"]["if"]:
                svc_address(host, v["device"], cfg, True)
    host.update_state(apply)
    return 0


def cmd_networksetup(host, args):
    if not args:
        out("networksetup Help Information\n-------------------------------\n"
            "Usage: networksetup -listallhardwareports\n")
        return 0
    op = args[0]
    st = host.state()
    disabled = set(st["services_disabled"])
    svcs = services(host, st)
    byname = {v["name"]: v for v in svcs}
    if op == "-listallhardwareports":
        text = ""
        for name, dev, mac in host.cfg["hardware_ports"]:
            text += f"\nHardware Port: {name}\nDevice: {dev}\nEthernet Address: {mac}\n"
        text += "\nVLAN Configurations\n===================\n"
        out(text)
        return 0
    if op == "-listallnetworkservices":
        out("An asterisk (*) denotes that a network service is disabled.\n")
        for v in svcs:
            out(("*" if v["name"] in disabled else "") + v["name"] + "\n")
        return 0
    if op == "-listnetworkserviceorder":
        out("An asterisk (*) denotes that a network service is disabled.\n")
        for k, v in enumerate(svcs, 1):
            num = "*" if v["name"] in disabled else str(k)
            out(f"({num}) {v['name']}\n(Hardware Port: {v['port']}, Device: {v['device']})\n\n")
        return 0
    if op == "-getnetworkserviceenabled":
        if len(args) < 2 or args[1] not in byname:
            return not_service(args[1] if len(args) > 1 else "")
        out("Disabled\n" if args[1] in disabled else "Enabled\n")
        return 0
    if op == "-getinfo":
        if len(args) < 2 or args[1] not in byname:
            return not_service(args[1] if len(args) > 1 else "")
        dev = byname[args[1]]["device"]
        cfg = st.get("services_config", {}).get(args[1])
        addrs = [(cfg["ip"], cfg["prefix"])] if cfg else host.ipv4(dev)
        mac = {d: m for _, d, m in host.cfg["hardware_ports"]}.get(dev, "")
        if addrs:
            a, p = addrs[0]
            mask = str(ipaddress.IPv4Network(f"0.0.0.0/{p}").netmask)
            out(f"Manual Configuration\nIP address: {a}\nSubnet mask: {mask}\nRouter: (null)\n")
        else:
            out("DHCP Configuration\nClient ID: \n")
        out(f"IPv6: Automatic\nIPv6 IP address: none\nIPv6 Router: none\nEthernet Address: {mac}\n")
        return 0
    if op in ("-createnetworkservice", "-removenetworkservice", "-setmanual",
              "-setnetworkserviceenabled"):
        return netsvc_mutate(host, op, args[1:])
    if op == "-getcurrentlocation":
        out(locations(host, st)[0] + "\n")
        return 0
    if op == "-listlocations":
        out("".join(x + "\n" for x in locations(host, st)[1]))
        return 0
    if op in ("-switchtolocation", "-createlocation", "-deletelocation"):
        return location_mutate(host, op, args[1:])
    if op.startswith(("-set", "-create", "-remove", "-delete", "-switch", "-order", "-add",
                      "-renew", "-import", "-export", "-detectnewhardware")):
        # accepted and recorded, no effect on the simulation
        return 0
    if op.startswith("-get") or op.startswith("-list") or op in ("-version", "-help", "-printcommands"):
        return 0
    out(f"** Error: Unknown command {op}\n")
    return 1


NETWORKSETUP_MUTATING = ("-set", "-create", "-remove", "-delete", "-switch", "-order", "-add",
                         "-renew", "-import", "-detectnewhardware")


# --------------------------------------------------------------------------
# launchctl (the LaunchDaemons of other tools: other_managers)

def daemon_plist_path(host, label):
    """The plist of a daemon, where the host sees it as /Library/LaunchDaemons
    (stockmac.py writes it in the host's folder)."""
    return os.path.join(host.dir, "Library", "LaunchDaemons", label + ".plist")


def cmd_launchctl(host, args):
    """launchctl print system/LABEL (a daemon of the topology's, while it
    is loaded) and bootout system/LABEL (root only: unloads it)."""
    daemons = {d["label"]: d for d in other_managers(host)["daemons"]}
    st = host.state()
    gone = set(st.get("daemons_booted_out", []))
    booted = set(st.get("daemons_loaded_at_boot", []))
    if len(args) != 2 or args[0] not in ("print", "bootout") or \
            not args[1].startswith("system/"):
        err("Usage: launchctl <subcommand> ... | help [subcommand]\n")
        return 64, False
    label = args[1][len("system/"):]
    d = daemons.get(label)
    loaded = d is not None and (d["loaded"] or label in booted) and label not in gone
    if args[0] == "print":
        if not loaded:
            err(f"Could not find service \"{label}\" in domain for system\n")
            return 113, False
        text = (f"system/{label} = {{\n\tactive count = {1 if d['pid'] else 0}\n"
                f"\tpath = /Library/LaunchDaemons/{label}.plist\n"
                "\ttype = LaunchDaemon\n"
                f"\tstate = {'running' if d['pid'] else 'not running'}\n\n"
                f"\tprogram = {d['program']}\n\targuments = {{\n\t\t{d['program']}\n\t}}\n\n"
                "\tinherited environment = {\n\t\tSSH_AUTH_SOCK => /private/var/run/x\n\t}\n\n"
                "\tdefault environment = {\n\t\tPATH => /usr/bin:/bin:/usr/sbin:/sbin\n\t}\n\n"
                "\tdomain = system\n\tusername = root\n\tminimum runtime = 10\n"
                f"\trun interval = {d['interval']} seconds\n\texit timeout = 5\n"
                f"\truns = 3\n")
        if d["pid"]:
            text += f"\tpid = {d['pid']}\n\timmediate reason = interval\n"
        text += "\tlast exit code = 0\n\n\tspawn type = daemon (3)\n}\n"
        out(text)
        return 0, False
    if not host.sudo:
        err(f"Boot-out failed: 1: Operation not permitted\n")
        return 1, True
    if not loaded:
        err("Boot-out failed: 3: No such process\n")
        return 3, True
    host.update_state(lambda st: st.__setitem__(
        "daemons_booted_out", sorted(set(st.get("daemons_booted_out", [])) | {label})))
    return 0, True


# --------------------------------------------------------------------------
# ibv_devices / ibv_devinfo / rdma_ctl

def rdma_devices(host):
    if not host.cfg["rdma_enabled"]:
        return []
    return [(f"rdma_{p['if']}", p) for p in host.cfg["tb_ports"]]


def cmd_ibv_devices(host, args):
    out("    %-16s\t   node GUID\n" % "device")
    out("    %-16s\t----------------\n" % "------")
    for name, p in rdma_devices(host):
        out("    %-16s\t%s\n" % (name, p["guid"]))
    return 0


def guid_str(g):
    return ":".join(g[i:i + 4] for i in range(0, 16, 4))


def cmd_ibv_devinfo(host, args):
    devname, port_only, verbose = None, None, False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--ib-dev") and i + 1 < len(args):
            devname = args[i + 1]
            i += 1
        elif a.startswith("--ib-dev="):
            devname = a.split("=", 1)[1]
        elif a in ("-i", "--ib-port") and i + 1 < len(args):
            port_only = args[i + 1]
            i += 1
        elif a in ("-v", "--verbose"):
            verbose = True
        elif a in ("-l", "--list"):
            devs = rdma_devices(host)
            out("%d HCA%s found:\n" % (len(devs), "s" if len(devs) != 1 else ""))
            for name, _ in devs:
                out(f"\t{name}\n")
            out("\n")
            return 0
        else:
            out(f"Usage: {os.path.basename(sys.argv[0])}             print the ca attributes\n")
            return 255
        i += 1
    devs = rdma_devices(host)
    if devname is not None:
        devs = [d for d in devs if d[0] == devname]
        if not devs:
            err(f"IB device '{devname}' wasn't found\n")
            return 255
    elif not devs:
        err("No IB devices found\n")
        return 255
    if port_only not in (None, "1"):
        err(f"port {port_only} is not valid\n")
        return 255
    sys_guid = host.cfg["tb_ports"][0]["guid"]
    links = host.links() if verbose else {}
    for name, p in devs:
        out(f"hca_id:\t{name}\n")
        out("\ttransport:\t\t\tThunderbolt (100)\n")
        out(f"\tnode_guid:\t\t\t{guid_str(p['guid'])}\n")
        out(f"\tsys_image_guid:\t\t\t{guid_str(sys_guid)}\n")
        out("\tvendor_id:\t\t\t0x0000\n")
        out("\tvendor_part_id:\t\t\t0\n")
        out("\thw_ver:\t\t\t\t0x0\n")
        out("\tphys_port_cnt:\t\t\t1\n")
        out("\t\tport:\t1\n")
        out("\t\t\tstate:\t\t\t%s\n" % ("PORT_ACTIVE (4)" if p["rdma_active"] else "PORT_DOWN (1)"))
        out("\t\t\tmax_mtu:\t\t4096 (5)\n")
        out("\t\t\tactive_mtu:\t\t4096 (5)\n")
        out(f"\t\t\tsm_lid:\t\t\t{p['receptacle']}\n")
        out(f"\t\t\tport_lid:\t\t{p['receptacle']}\n")
        out("\t\t\tport_lmc:\t\t0x00\n")
        out("\t\t\tlink_layer:\t\tThunderbolt\n")
        if verbose:
            # approximation: GID[0] link-local from the interface MAC, then one
            # IPv4-mapped GID per IPv4 address of the interface
            g = p["guid"]
            out(f"\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:{g[0:4]}:{g[4:8]}:{g[8:12]}:{g[12:16]}\n")
            for k, (a, _) in enumerate(host.ipv4(p["if"], links), 1):
                o = [int(x) for x in a.split(".")]
                out(f"\t\t\tGID[{k:3d}]:\t\t0000:0000:0000:0000:0000:ffff:"
                    f"{o[0]:02x}{o[1]:02x}:{o[2]:02x}{o[3]:02x}\n")
        out("\n")
    return 0


def cmd_rdma_ctl(host, args):
    if args == ["status"]:
        out("enabled\n" if host.cfg["rdma_enabled"] else "disabled\n")
        return 0
    if args and args[0] in ("enable", "disable"):
        err(f"rdma_ctl: {args[0]} can only be run from the Recovery OS\n")
        return 1
    err("usage: rdma_ctl status | enable | disable\n")
    return 64


# --------------------------------------------------------------------------
# ipconfig

def cmd_ipconfig(host, args):
    if len(args) == 2 and args[0] == "getifaddr":
        addrs = host.ipv4(args[1])
        if not addrs:
            return 1
        out(addrs[0][0] + "\n")
        return 0
    if len(args) == 1 and args[0] == "ifcount":
        out(f"{len(iface_list(host, host.links()))}\n")
        return 0
    if len(args) == 2 and args[0] == "getv6ifaddr":
        return 1
    err("usage: ipconfig <command> <args>\nwhere <command> is one of waitall, getifaddr, "
        "ifcount, getoption, getiflist, getsummary, getpacket, getv6packet, getra, "
        "set, setverbose\n")
    return 1


# --------------------------------------------------------------------------
# ifconfig

FLAG_BITS = [("UP", 0x1), ("BROADCAST", 0x2), ("DEBUG", 0x4), ("LOOPBACK", 0x8),
             ("POINTOPOINT", 0x10), ("SMART", 0x20), ("RUNNING", 0x40), ("NOARP", 0x80),
             ("PROMISC", 0x100), ("ALLMULTI", 0x200), ("OACTIVE", 0x400), ("SIMPLEX", 0x800),
             ("LINK0", 0x1000), ("LINK1", 0x2000), ("LINK2", 0x4000), ("MULTICAST", 0x8000)]


def flags_str(names):
    v = sum(b for n, b in FLAG_BITS if n in names)
    return f"flags={v:x}<{','.join(n for n, b in FLAG_BITS if n in names)}>"


def iface_list(host, links):
    """[(name, kind)] in the order ifconfig lists them."""
    c = host.cfg
    ens = [("en0", "mgmt")]
    if c["wifi"]:
        ens.append((c["wifi"]["if"], "wifi"))
    ens += [(p["if"], "tb") for p in c["tb_ports"]]
    ens.sort(key=lambda x: int(x[0][2:]))
    extra = [x["if"] for x in c.get("extra_ifs", [])]
    res = [("lo0", "lo"), ("gif0", "gif"), ("stf0", "stf")]
    res += [(x, "extra") for x in extra if x.startswith("anpi")] + ens
    res += [(x, "extra") for x in extra if x[:2] in ("ap", "aw", "ll")]
    if host.state()["bridge0"]["exists"]:
        res.append(("bridge0", "bridge"))
    # a tunnel made in the host's namespace (a test's VPN) is listed with the others
    utuns = extra + sorted(x for x in links if x.startswith("utun") and x not in extra)
    res += [(x, "extra") for x in utuns if x.startswith("utun")]
    return res


def render_extra(host, name, scope, links=None):
    """Interfaces of a real Mac that have nothing to do with Thunderbolt."""
    mac = next((x["mac"] for x in host.cfg["extra_ifs"] if x["if"] == name), None)
    ll = (f"\tinet6 {link_local(mac)}%{name} prefixlen 64 scopeid 0x{scope[name]:x} \n"
          if mac else "")
    if name.startswith("anpi"):
        return (f"{name}: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
                f"\toptions=400<CHANNEL_IO>\n\tether {mac} \n"
                "\tmedia: none\n\tstatus: inactive\n")
    if name.startswith("ap"):
        return (f"{name}: flags=8843<UP,BROADCAST,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
                f"\toptions=6460<TSO4,TSO6,CHANNEL_IO,PARTIAL_CSUM,ZEROINVERT_CSUM>\n"
                f"\tether {mac} \n\tnd6 options=201<PERFORMNUD,DAD>\n"
                "\tmedia: autoselect (<unknown type>)\n\tstatus: inactive\n")
    if name.startswith("awdl") or name.startswith("llw"):
        opts = ("6460<TSO4,TSO6,CHANNEL_IO,PARTIAL_CSUM,ZEROINVERT_CSUM>"
                if name.startswith("awdl") else "400<CHANNEL_IO>")
        return (f"{name}: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
                f"\toptions={opts}\n\tether {mac} \n" + ll +
                "\tnd6 options=201<PERFORMNUD,DAD>\n\tmedia: autoselect\n\tstatus: active\n")
    mtu = 1380 if name == "utun0" else 2000 if name == "utun1" else 1000
    # a tunnel's IPv4 addresses (one made live in the namespace), point to point
    inet = "".join(f"\tinet {a['local']} --> {a.get('address', a['local'])} netmask "
                   f"{mask_hex(a['prefixlen'])}\n"
                   for a in (links or {}).get(name, {}).get("addr_info", [])
                   if a.get("family") == "inet")
    return (f"{name}: flags=8051<UP,POINTOPOINT,RUNNING,MULTICAST> mtu {mtu}\n" + ll + inet +
            "\tnd6 options=201<PERFORMNUD,DAD>\n")


def mask_hex(prefix):
    return "0x%08x" % int(ipaddress.IPv4Network(f"0.0.0.0/{prefix}").netmask)


def render_iface(host, name, kind, links, st, scope):
    c = host.cfg
    lines = []
    if kind == "lo":
        lo = links.get("lo", {})
        return ("lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> mtu 16384\n"
                "\toptions=1203<RXCSUM,TXCSUM,TXSTATUS,SW_TIMESTAMP>\n"
                + "".join(f"\tinet {a['local']} netmask {mask_hex(a['prefixlen'])}\n"
                          for a in lo.get("addr_info", []) if a.get("family") == "inet")
                + "\tinet6 ::1 prefixlen 128 \n"
                f"\tinet6 fe80::1%lo0 prefixlen 64 scopeid 0x{scope['lo0']:x} \n"
                "\tnd6 options=201<PERFORMNUD,DAD>\n")
    if kind == "gif":
        return "gif0: flags=8010<POINTOPOINT,MULTICAST> mtu 1280\n"
    if kind == "stf":
        return "stf0: flags=0<> mtu 1280\n"
    if kind == "extra":
        return render_extra(host, name, scope, links)
    br = st["bridge0"]
    if kind == "bridge":
        up = br["up"]
        names = (["UP", "BROADCAST", "SMART", "RUNNING", "SIMPLEX", "MULTICAST"] if up
                 else ["BROADCAST", "SMART", "SIMPLEX", "MULTICAST"])
        lines.append(f"bridge0: {flags_str(names)} mtu 1500")
        lines.append("\toptions=63<RXCSUM,TXCSUM,TSO4,TSO6>")
        lines.append(f"\tether {c['bridge']['mac']} ")
        lines.append("\tConfiguration:")
        lines.append("\t\tid 0:0:0:0:0:0 priority 0 hellotime 0 fwddelay 0")
        lines.append("\t\tmaxage 0 holdcnt 0 proto stp maxaddr 100 timeout 1200")
        lines.append("\t\troot id 0:0:0:0:0:0 priority 0 ifcost 0 port 0")
        lines.append("\t\tipfilter disabled flags 0x0")
        active = False
        for m in br["members"]:
            lines.append(f"\tmember: {m} flags=3<LEARNING,DISCOVER>")
            lines.append(f"\t        ifmaxaddr 0 port {scope.get(m, 0)} priority 0 path cost 0")
            if "LOWER_UP" in links.get(m, {}).get("flags", []):
                active = True
        lines.append("\tnd6 options=201<PERFORMNUD,DAD>")
        lines.append("\tmedia: <unknown type>")
        lines.append(f"\tstatus: {'active' if up and active else 'inactive'}")
        return "\n".join(lines) + "\n"
    d = links.get(name)
    if kind == "wifi" and d is None:
        mac = c["wifi"]["mac"]
        return (f"{name}: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
                "\toptions=6460<TSO4,TSO6,CHANNEL_IO,PARTIAL_CSUM,ZEROINVERT_CSUM>\n"
                f"\tether {mac} \n\tnd6 options=201<PERFORMNUD,DAD>\n"
                "\tmedia: autoselect (<unknown type>)\n\tstatus: inactive\n")
    if d is None:
        return ""
    up = "UP" in d.get("flags", [])
    carrier = "LOWER_UP" in d.get("flags", [])
    names = ["BROADCAST", "SMART", "SIMPLEX", "MULTICAST"]
    if up:
        names += ["UP", "RUNNING"]
    member = kind == "tb" and br["exists"] and name in br["members"]
    if member:
        names.append("PROMISC")
    lines.append(f"{name}: {flags_str(names)} mtu {d.get('mtu', 1500)}")
    if kind == "tb":
        lines.append("\toptions=460<TSO4,TSO6,CHANNEL_IO>")
        mac = host.tb_port(name)["mac"]
    elif c["mgmt"]["port_name"] == "Wi-Fi":
        lines.append("\toptions=6460<TSO4,TSO6,CHANNEL_IO,PARTIAL_CSUM,ZEROINVERT_CSUM>")
        mac = c["mgmt"]["mac"]
    else:
        lines.append("\toptions=50b<RXCSUM,TXCSUM,VLAN_HWTAGGING,AV,CHANNEL_IO>")
        mac = c["mgmt"]["mac"]
    lines.append(f"\tether {mac} ")
    for a in d.get("addr_info", []):
        if a.get("family") == "inet6" and a.get("local", "").startswith("fe80"):
            lines.append(f"\tinet6 {a['local']}%{name} prefixlen {a['prefixlen']} secured "
                         f"scopeid 0x{scope[name]:x} ")
    for a in d.get("addr_info", []):
        if a.get("family") == "inet6" and not a.get("local", "").startswith("fe80"):
            lines.append(f"\tinet6 {a['local']} prefixlen {a['prefixlen']} ")
    for a in d.get("addr_info", []):
        if a.get("family") == "inet":
            s = f"\tinet {a['local']} netmask {mask_hex(a['prefixlen'])}"
            if a.get("broadcast"):
                s += f" broadcast {a['broadcast']}"
            elif a["prefixlen"] < 31:
                net = ipaddress.IPv4Network(f"{a['local']}/{a['prefixlen']}", strict=False)
                s += f" broadcast {net.broadcast_address}"
            lines.append(s)
    lines.append("\tnd6 options=201<PERFORMNUD,DAD>")
    if kind == "tb":
        lines.append("\tmedia: autoselect <full-duplex>")
    elif c["mgmt"]["port_name"] == "Wi-Fi":
        lines.append("\tmedia: autoselect")
    else:
        lines.append("\tmedia: autoselect (10Gbase-T <full-duplex>)")
    lines.append(f"\tstatus: {'active' if carrier else 'inactive'}")
    return "\n".join(lines) + "\n"


def parse_netmask(m):
    if m.lower().startswith("0x"):
        v = int(m, 16)
        return bin(v).count("1")
    return ipaddress.IPv4Network(f"0.0.0.0/{m}").prefixlen


def classful(addr):
    first = int(addr.split(".")[0])
    return 8 if first < 128 else 16 if first < 192 else 24


def cmd_ifconfig(host, args, argv):
    links = host.links()
    st = host.state()
    ifs = iface_list(host, links)
    scope = {n: k for k, (n, _) in enumerate(ifs, 1)}
    kinds = dict(ifs)
    if not args or args[0] in ("-a", "-u", "-d", "-v", "-L"):
        only_up = args[:1] == ["-u"]
        only_down = args[:1] == ["-d"]
        for n, k in ifs:
            text = render_iface(host, n, k, links, st, scope)
            if not text:
                continue
            isup = "<UP," in text.split("\n")[0]
            if (only_up and not isup) or (only_down and isup):
                continue
            out(text)
        return 0, False
    if args[0] == "-l":
        out(" ".join(n for n, _ in ifs) + "\n")
        return 0, False
    name, rest = args[0], args[1:]
    if name not in kinds or (kinds[name] not in ("wifi", "lo", "gif", "stf", "bridge", "extra")
                             and name not in links):
        err(f"ifconfig: interface {name} does not exist\n")
        return 1, bool(rest)
    if not rest:
        out(render_iface(host, name, kinds[name], links, st, scope))
        return 0, False
    if not host.sudo:
        op = "SIOCAIFADDR" if any(x[0].isdigit() for x in rest) else "SIOCSIFFLAGS"
        err(f"ifconfig: ioctl ({op}): Operation not permitted\n")
        return 1, True

    if kinds[name] == "bridge":
        def apply(s):
            b = s["bridge0"]
            i = 0
            while i < len(rest):
                w = rest[i]
                if w == "down":
                    b["up"] = False
                elif w == "up":
                    b["up"] = True
                elif w == "destroy":
                    b["exists"], b["up"], b["members"] = False, False, []
                elif w in ("deletem", "addm") and i + 1 < len(rest):
                    m = rest[i + 1]
                    i += 1
                    if w == "deletem" and m in b["members"]:
                        b["members"].remove(m)
                    elif w == "addm" and m not in b["members"] and host.tb_port(m):
                        b["members"].append(m)
                i += 1
        host.update_state(apply)
        return 0, True
    if kinds[name] in ("wifi", "lo", "gif", "stf", "extra"):
        return 0, True   # accepted, not simulated

    rc = 0
    i = 0
    family = None
    addr = prefix = None
    alias = remove = False
    link_cmds = []
    while i < len(rest):
        w = rest[i]
        if w in ("inet", "inet6"):
            family = w
        elif w == "netmask" and i + 1 < len(rest):
            prefix = parse_netmask(rest[i + 1])
            i += 1
        elif w in ("broadcast", "prefixlen") and i + 1 < len(rest):
            if w == "prefixlen":
                prefix = int(rest[i + 1])
            i += 1
        elif w == "alias" or w == "add":
            alias = True
        elif w in ("-alias", "delete", "remove"):
            remove = True
        elif w in ("up", "down"):
            link_cmds.append(["link", "set", name, w])
        elif w == "mtu" and i + 1 < len(rest):
            link_cmds.append(["link", "set", name, "mtu", rest[i + 1]])
            i += 1
        elif addr is None and (w[0].isdigit() or ":" in w):
            addr = w
        else:
            err(f"ifconfig: {w}: bad value\n")
            return 1, True
        i += 1
    if family == "inet6" or (addr and ":" in addr):
        return 0, True   # recorded, IPv6 not simulated
    if addr:
        if "/" in addr:
            addr, p = addr.split("/", 1)
            prefix = int(p)
        try:
            ipaddress.IPv4Address(addr)
        except ValueError:
            err(f"ifconfig: {addr}: bad value\n")
            return 1, True
        if prefix is None:
            prefix = classful(addr)
        current = host.ipv4(name, links)
        if remove:
            for a, p in current:
                if a == addr:
                    run_ip("addr", "del", f"{a}/{p}", "dev", name)
        else:
            # macOS: without "alias" the new address replaces the first one
            if current and not alias and current[0][0] != addr:
                a, p = current[0]
                run_ip("addr", "del", f"{a}/{p}", "dev", name)
            if any(a == addr and p != prefix for a, p in current):
                for a, p in current:
                    if a == addr:
                        run_ip("addr", "del", f"{a}/{p}", "dev", name)
            r, e = run_ip("addr", "replace", f"{addr}/{prefix}",
                          *(["broadcast", "+"] if prefix < 31 else []), "dev", name)
            if r:
                err(f"ifconfig: ioctl (SIOCAIFADDR): {e}\n")
                rc = 1
    for lc in link_cmds:
        r, e = run_ip(*lc)
        if r:
            err(f"ifconfig: {e}\n")
            rc = 1
    return rc, True


# --------------------------------------------------------------------------
# netstat -rn -f inet

A_NET, B_NET, C_NET = 0xFF000000, 0xFFFF0000, 0xFFFFFF00


def natural_mask(a):
    """The class mask netstat assumes (netstat's forgemask): A, B, else C."""
    return A_NET if a >> 31 == 0 else B_NET if a >> 30 == 2 else C_NET


def netstat_dest(a, plen, host):
    """A destination as macOS netstat -n prints it: host routes in full, networks
    without their trailing zero octets and with /len unless the mask is the
    class mask (netname() and domask() of network_cmds' route.c)."""
    o = [a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255]
    if plen == 0 and a == 0:
        return "default"
    if host:
        return ".".join(map(str, o))
    mask = (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF
    nat = natural_mask(a)
    if nat == A_NET and a & 0x00FFFFFF == 0:
        s = f"{o[0]}"
    elif nat in (A_NET, B_NET) and a & 0xFFFF == 0:
        s = f"{o[0]}.{o[1]}"
    elif a & 0xFF == 0:
        s = f"{o[0]}.{o[1]}.{o[2]}"
    else:
        s = ".".join(map(str, o))
    return s if mask == nat else f"{s}/{plen}"


def cmd_netstat(host, args):
    opts, family, i = set(), None, 0
    while i < len(args):
        a = args[i]
        if a == "-f" and i + 1 < len(args):
            family = args[i + 1]
            i += 1
        elif a.startswith("-") and len(a) > 1:
            opts.update(a[1:])
        else:
            err(f"netstat: {a}: unknown argument\n")
            return 64
        i += 1
    if "r" not in opts or family not in (None, "inet", "inet6"):
        err("usage: netstat -rn [-f address_family]\n")
        return 64
    out("Routing tables\n")
    if family == "inet6":
        return 0
    links = host.links()
    ifs = iface_list(host, links)
    known = {n for n, _ in ifs}
    ifs += [(n, "extra") for n in sorted(links) if n not in known and n != "lo"]
    index = {n: k for k, (n, _) in enumerate(ifs, 1)}

    def name(dev):
        return "lo0" if dev == "lo" else dev or "lo0"

    def link(dev):
        return f"link#{index.get(name(dev), 1)}"

    rows = []
    for r in host.routes():
        t, dst, dev = r.get("type", "unicast"), r.get("dst", ""), r.get("dev")
        if dev is None and r.get("nexthops"):   # multipath: the first hop
            r = dict(r, **{k: v for k, v in r["nexthops"][0].items() if k in ("dev", "gateway")})
            dev = r.get("dev")
        if t in ("broadcast", "multicast", "anycast", "throw"):
            continue
        net = ipaddress.IPv4Network("0.0.0.0/0" if dst == "default" else dst, strict=False)
        a, plen = int(net.network_address), net.prefixlen
        exp = ""
        if t == "local":
            if dst == "127.0.0.1":
                row = (dst, "127.0.0.1", "UH", "lo0")
            elif dev == "lo":
                row = (netstat_dest(a, plen, False), "127.0.0.1", "UCS", "lo0")
            else:   # a Mac lists each of its addresses as a /32 of its interface
                row, exp = (netstat_dest(a, 32, False), link(dev), "UCS", name(dev)), "!"
        elif t in ("blackhole", "unreachable", "prohibit"):
            row = (netstat_dest(a, plen, "/" not in dst), "127.0.0.1",
                   "UGScB" if t == "blackhole" else "UGScR", "lo0")
        elif r.get("gateway"):
            row = (netstat_dest(a, plen, "/" not in dst and dst != "default"), r["gateway"],
                   "UGScg" if dst == "default" else "UGHS" if "/" not in dst else "UGSc",
                   name(dev))
        elif "/" not in dst and dst != "default" and r.get("protocol") == "kernel":
            row = (dst, r.get("prefsrc", link(dev)), "UH", name(dev))   # a tunnel's peer
        elif "/" not in dst and dst != "default":
            row = (dst, link(dev), "UHS", name(dev))
        elif r.get("protocol") == "kernel":
            row, exp = (netstat_dest(a, plen, False), link(dev), "UCS", name(dev)), "!"
        elif (dev or "").startswith("utun"):
            row = (netstat_dest(a, plen, False), dev, "USc", dev)
        else:
            row = (netstat_dest(a, plen, False), link(dev), "UCS", name(dev))
        rows.append(((a, plen), row, exp))
    if "en0" in index:   # what every Mac adds to its primary interface
        en0 = f"link#{index['en0']}"
        rows += [((0xA9FE0000, 16), ("169.254", en0, "UCS", "en0"), "!"),
                 ((0xE0000000, 4), ("224.0.0/4", en0, "UmCS", "en0"), "!"),
                 ((0xFFFFFFFF, 32), ("255.255.255.255/32", en0, "UCS", "en0"), "!")]
    if not rows:
        return 0
    out("\nInternet:\n")
    out(f"{'Destination':<18.18} {'Gateway':<18.18} {'Flags':<10.10} {'Netif':>14.14} "
        f"{'Expire':>6}\n")
    for _, (d, g, f, n), exp in sorted(rows, key=lambda x: x[0]):
        out(f"{d:<18} {g:<18} {f:<10.10} {n:>14.14} {exp:>6}\n")
    return 0


# --------------------------------------------------------------------------
# route

def cmd_route(host, args):
    i = 0
    while i < len(args) and args[i] in ("-n", "-q", "-v", "-t"):
        i += 1
    if i >= len(args):
        err("usage: route [-dnqtv] command [[modifiers] args]\n")
        return 64, False
    op, rest = args[i], args[i + 1:]
    if op in ("get",):
        dest = next((x for x in rest if not x.startswith("-")), None)
        if not dest:
            err("usage: route get destination\n")
            return 64, False
        if dest == "default":
            return route_get_default(), False
        r = subprocess.run([IP, "-j", "route", "get", dest], capture_output=True, text=True)
        try:
            info = json.loads(r.stdout)[0]
        except (ValueError, IndexError):
            err(f"route: writing to routing socket: not in table\n")
            return 1, False
        out(f"   route to: {dest}\ndestination: {dest}\n")
        if info.get("gateway"):
            out(f"    gateway: {info['gateway']}\n")
        # a host route set with `route add -host` is static, as macOS shows it
        r2 = subprocess.run([IP, "route", "show", "exact", dest + "/32"], capture_output=True,
                            text=True)
        flags = "<UP,HOST,DONE,STATIC>" if r2.stdout.strip() else "<UP,DONE>"
        out(f"  interface: {info.get('dev', '')}\n      flags: {flags}\n"
            " recvpipe  sendpipe  ssthresh  rtt,msec    rttvar  hopcount      mtu     expire\n"
            "       0         0         0         0         0         0      1500         0 \n")
        return 0, False
    if op not in ("add", "change", "delete", "flush"):
        err(f"route: bad command: {op}\n")
        return 64, False
    if not host.sudo:
        err("route: must be root to alter routing table\n")
        return 1, True
    if op == "flush":
        return 0, True
    kind = "host"
    dest = gw = iface = None
    netmask = None
    j = 0
    while j < len(rest):
        w = rest[j]
        if w in ("-net", "-host"):
            kind = w[1:]
        elif w == "-interface" and j + 1 < len(rest):
            iface = rest[j + 1]
            j += 1
        elif w == "-netmask" and j + 1 < len(rest):
            netmask = rest[j + 1]
            j += 1
        elif w.startswith("-"):
            pass
        elif dest is None:
            dest = w
        elif gw is None:
            gw = w
        j += 1
    if dest is None:
        err("route: destination required\n")
        return 64, True
    label = iface or gw or ""
    if netmask or "/" in dest:
        kind = "net"
    target = dest
    if "/" not in dest:
        if netmask:
            target = f"{dest}/{parse_netmask(netmask)}"
        elif kind == "host":
            target = dest + "/32"
    if op == "delete":
        run_ip("route", "del", target)
        out(f"delete {kind} {dest}\n")
        return 0, True
    cmd = ["route", "replace", target]
    if iface:
        cmd += ["dev", iface]
    elif gw:
        cmd += ["via", gw]
    run_ip(*cmd)   # best effort: the fake accepts the call even if Linux refuses it
    out(f"{op} {kind} {dest}: gateway {label}\n")
    return 0, True


def route_get_default():
    """route -n get default: the namespace's default route in macOS's layout,
    or "not in table" (exit 1) when there is none, as macOS says."""
    r = subprocess.run([IP, "-j", "route", "show", "default"], capture_output=True, text=True)
    try:
        info = json.loads(r.stdout)[0]
    except (ValueError, IndexError):
        err("route: writing to routing socket: not in table\n")
        return 1
    out("   route to: default\ndestination: default\n       mask: default\n")
    if info.get("gateway"):
        out(f"    gateway: {info['gateway']}\n")
    out(f"  interface: {info.get('dev', '')}\n"
        "      flags: <UP,GATEWAY,DONE,STATIC,PRCLONING>\n"
        " recvpipe  sendpipe  ssthresh  rtt,msec    rttvar  hopcount      mtu     expire\n"
        "       0         0         0         0         0         0      1500         0 \n")
    return 0


# --------------------------------------------------------------------------
# pmset, socketfilterfw (the doctor's sleep and firewall checks)

# `pmset -g` of a desktop Mac: (key, value) in the order macOS lists them;
# "sleep" comes from the host's setting
PMSET_KEYS = [("standby", "0"), ("Sleep On Power Button", "1"),
              ("hibernatefile", "/var/vm/sleepimage"), ("powernap", "1"),
              ("networkoversleep", "0"), ("disksleep", "10"), ("sleep", None),
              ("hibernatemode", "0"), ("ttyskeepawake", "1"), ("displaysleep", "10"),
              ("tcpkeepalive", "1"), ("womp", "1")]


def cmd_pmset(host, args):
    if args in ([], ["-g"], ["-g", "live"]):
        lines = ["System-wide power settings:", "Currently in use:"]
        for k, v in PMSET_KEYS:
            v = str(host.setting("pmset_sleep")) if v is None else v
            lines.append(f" {k:<20} {v}")
        out("\n".join(lines) + "\n")
        return 0, False
    # pmset [-a|-b|-c] sleep N: root only
    if len(args) == 3 and args[0] in ("-a", "-b", "-c") and args[1] == "sleep" and \
            args[2].isdigit():
        if not host.sudo:
            return 1, True
        host.update_state(lambda st: st.__setitem__("pmset_sleep", int(args[2])))
        return 0, True
    err("Usage: pmset -g | pmset -a sleep MINUTES (the simulator knows no more)\n")
    return 1, False


# The application firewall of a stock Mac, approximated per host: with the
# firewall on, incoming TCP connections (but ssh's) are dropped unless a
# program named jaccl-config was allowed (socketfilterfw --add, --unblockapp);
# "block all" drops them whatever is allowed. Real macOS decides per program.
FW_TABLE = "kc_alf"
FW_RULES = """table inet kc_alf {
	chain input {
		type filter hook input priority 0; policy accept;
		iifname "lo" accept
		ct state established,related accept
		tcp dport 22 accept
		meta l4proto tcp ct state new counter drop
	}
}
"""
FW_PROGRAM = "jaccl-config"


def firewall_rules(cfg, st):
    """The nft rules of a host's application firewall in state st (the host's
    state.json), "" when nothing is blocked; only stock Macs have them."""
    if not cfg.get("stock"):
        return ""
    state = st.get("firewall_state", cfg.get("firewall_state", 0))
    apps = st.get("firewall_apps", {})
    allowed = any(os.path.basename(p) == FW_PROGRAM and v == "allow" for p, v in apps.items())
    if state == 0 or (state == 1 and allowed):
        return ""
    return FW_RULES


def apply_firewall(host):
    if not host.stock or OFFLINE:
        return
    nft = shutil.which("nft", path=SYS_PATH) or "nft"
    text = f"table inet {FW_TABLE}\ndelete table inet {FW_TABLE}\n" + \
        firewall_rules(host.cfg, host.state())
    subprocess.run([nft, "-f", "-"], input=text, text=True, capture_output=True)


FW_STATE_TEXT = {0: "Firewall is disabled. (State = 0)",
                 1: "Firewall is enabled. (State = 1)",
                 2: "Firewall is blocking all non-essential incoming connections. (State = 2)"}


def cmd_socketfilterfw(host, args):
    if args == ["--getglobalstate"]:
        out(FW_STATE_TEXT[host.setting("firewall_state")] + "\n")
        return 0, False
    apps = host.state().get("firewall_apps", {})
    if args == ["--listapps"]:
        out(f"Total number of apps = {len(apps)}\n")
        for i, (p, v) in enumerate(sorted(apps.items()), 1):
            out(f"{i} : {p}\n             ({'Allow' if v == 'allow' else 'Block'} incoming connections)\n")
        return 0, False
    if len(args) == 2 and args[0] in ("--add", "--remove", "--blockapp", "--unblockapp"):
        op, path = args
        if op == "--add":
            # says so without root too, where nothing changes (as macOS does)
            out(f"Application at path ( {path} ) added to firewall\n")
            if host.sudo:
                host.update_state(lambda st: st.setdefault("firewall_apps", {})
                                  .setdefault(path, "allow"))
                apply_firewall(host)
            return 0, True
        if path not in apps:
            out("The application is not part of the firewall\n")
            return 1, True
        if op == "--remove":
            if not host.sudo:
                return 1, True
            host.update_state(lambda st: st["firewall_apps"].pop(path, None))
            out(f"Application at path ( {path} ) removed from firewall\n")
        else:
            want = "allow" if op == "--unblockapp" else "block"
            if apps[path] != want:
                if not host.sudo:
                    return 1, True
                host.update_state(lambda st: st["firewall_apps"].__setitem__(path, want))
            out("Incoming connection to the application is "
                + ("permitted\n" if want == "allow" else "blocked\n"))
        apply_firewall(host)
        return 0, True
    sets = {("--setglobalstate", "on"): 1, ("--setglobalstate", "off"): 0,
            ("--setblockall", "on"): 2, ("--setblockall", "off"): 1}
    if len(args) == 2 and tuple(args) in sets:
        if not host.sudo:
            return 1, True
        new = sets[tuple(args)]
        host.update_state(lambda st: st.__setitem__("firewall_state", new))
        apply_firewall(host)
        if args[0] == "--setblockall":
            if new == 2:
                out("Firewall is set to block all non-essential incoming connections\n")
        else:
            out(FW_STATE_TEXT[new] + "\n")
        return 0, True
    err("usage: socketfilterfw --getglobalstate | --setglobalstate on|off | "
        "--setblockall on|off | --listapps | --add|--remove|--blockapp|--unblockapp PATH "
        "(the simulator knows no more)\n")
    return 1, False


# --------------------------------------------------------------------------
# sudo, sw_vers, sysctl, uname, scutil

SHELLS = ("sh", "bash", "dash", "zsh", "ksh")


def sudo_script(cmd):
    """A shell run through sudo (`sudo sh -c SCRIPT`): the privileged commands
    are those the script runs, and they are what fail-sudo counts."""
    return bool(cmd) and os.path.basename(cmd[0]) in SHELLS


def sudo_should_fail(host, cmd):
    """Failure injection for tests: when HOSTDIR/fail-sudo holds a number N,
    the Nth command run through sudo (counted in HOSTDIR/fail-sudo.count;
    `sudo true`, a mere check, is not counted) fails without running; with
    "N+", the Nth and every later one fail.  A shell run through sudo is not
    counted itself: every fake command it runs is (they see
    SIMCLUSTER_SUDO_SCRIPT=1, set by the fake sudo), so the Nth privileged
    command fails whether each runs through its own sudo or all through one."""
    path = os.path.join(host.dir, "fail-sudo")
    if cmd == ["true"] or sudo_script(cmd) or not os.path.exists(path):
        return False
    with open(os.path.join(host.dir, "state.lock"), "a") as lf:
        fcntl.flock(lf, fcntl.LOCK_EX)
        want, later = 0, False
        try:
            with open(path) as f:
                text = f.read().strip()
            later = text.endswith("+")
            want = int(text.rstrip("+") or "0")
            with open(path + ".count") as f:
                n = int(f.read().strip() or "0")
        except (OSError, ValueError):
            n = 0
        n += 1
        with open(path + ".count", "w") as f:
            f.write(f"{n}\n")
    return n == want or (later and n >= want)


def cmd_sudo(host, args, argv):
    non_interactive = False
    i = 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a in ("-u", "-g", "-C", "-p", "-h") and i + 1 < len(args):
            i += 1
        elif "n" in a[1:] and not a.startswith("--"):
            non_interactive = True
        elif a == "--non-interactive":
            non_interactive = True
        i += 1
    cmd = args[i:]
    if not cmd:
        err("usage: sudo -h | -K | -k | -V\nusage: sudo [-n] command\n")
        host.log(argv, 1, False)
        return 1
    if host.cfg["sudo"] == "password":
        if non_interactive:
            err("sudo: a password is required\n")
        elif sys.stdin.isatty():
            err("Password:\nSorry, try again.\nsudo: 1 incorrect password attempt\n")
        else:
            err("sudo: a terminal is required to read the password; either use the -S option "
                "to read from standard input or configure an askpass helper\n"
                "sudo: a password is required\n")
        host.log(argv, 1, False)
        return 1
    if sudo_should_fail(host, cmd):
        err("sudo: simulated failure (fail-sudo)\n")
        host.log(argv, 1, False)
        return 1
    host.log(argv, "exec", False)
    env = dict(os.environ)
    env["SIMCLUSTER_SUDO"] = "1"
    env["SUDO_USER"] = env.get("USER", "admin")
    if sudo_script(cmd):
        env["SIMCLUSTER_SUDO_SCRIPT"] = "1"
    else:
        env.pop("SIMCLUSTER_SUDO_SCRIPT", None)
    try:
        os.execvpe(cmd[0], cmd, env)
    except OSError:
        err(f"sudo: {cmd[0]}: command not found\n")
        return 1


def cmd_sw_vers(host, args):
    c = host.cfg
    vals = {"-productName": "macOS", "-productVersion": c["macos"], "-buildVersion": c["build"],
            "-productVersionExtra": ""}
    if not args:
        out(f"ProductName:\t\tmacOS\nProductVersion:\t\t{c['macos']}\n"
            f"BuildVersion:\t\t{c['build']}\n")
        return 0
    if len(args) == 1 and args[0] in vals:
        out(vals[args[0]] + "\n")
        return 0
    err("Usage: sw_vers [-productName|-productVersion|-productVersionExtra|-buildVersion]\n")
    return 1


def sysctl_values(host):
    c = host.cfg
    v = {
        "hw.model": c["model"],
        "hw.ncpu": str(c["cpus"]),
        "hw.physicalcpu": str(c["cpus"]),
        "hw.logicalcpu": str(c["cpus"]),
        "hw.memsize": str(c["memory_gb"] * 1024 ** 3),
        "kern.ostype": "Darwin",
        "kern.osrelease": c["darwin"],
        "kern.osproductversion": c["macos"],
        "kern.osversion": c["build"],
        "kern.hostname": c["name"],
        "machdep.cpu.brand_string": c["chip"],
    }
    if int(c["macos"].split(".")[0]) >= 26:
        v["debug.rdma.version"] = "Nov 14 2025 21:37:05 RDMA_family"
    return v


def cmd_sysctl(host, args):
    vals = sysctl_values(host)
    names_only = False
    names = []
    for a in args:
        if a == "-n":
            names_only = True
        elif a == "-a":
            names = sorted(vals)
        elif a == "-w" or "=" in a:
            err(f"sysctl: {a}: Operation not permitted\n")
            return 1
        elif a.startswith("-"):
            continue
        else:
            names.append(a)
    if not names:
        err("usage: sysctl [-bdehiNnoqx] name[=value] ...\n       sysctl [-bdehNnoqx] -a\n")
        return 64
    rc = 0
    for n in names:
        if n in vals:
            out(vals[n] + "\n" if names_only else f"{n}: {vals[n]}\n")
        else:
            err(f"sysctl: unknown oid '{n}'\n")
            rc = 1
    return rc


def cmd_uname(host, args):
    c = host.cfg
    parts = {"s": "Darwin", "n": c["name"], "r": c["darwin"],
             "v": f"Darwin Kernel Version {c['darwin']}: Sat Nov 15 21:37:05 PST 2025; "
                  "root:xnu-12377.61.12~1/RELEASE_ARM64_T6031",
             "m": "arm64", "p": "arm"}
    want = []
    for a in args:
        if not a.startswith("-"):
            err("usage: uname [-amnoprsv]\n")
            return 1
        for ch in a[1:]:
            if ch == "a":
                want += ["s", "n", "r", "v", "m"]
            elif ch == "o":
                want.append("s")
            elif ch in parts:
                want.append(ch)
            else:
                err(f"uname: illegal option -- {ch}\nusage: uname [-amnoprsv]\n")
                return 1
    if not want:
        want = ["s"]
    order = "snrvmp"
    out(" ".join(parts[k] for k in order if k in want) + "\n")
    return 0


def cmd_scutil(host, args):
    c = host.cfg
    if len(args) == 2 and args[0] == "--get":
        if args[1] == "ComputerName":
            out(c["computer_name"] + "\n")
            return 0
        if args[1] == "LocalHostName":
            out(c["computer_name"].replace(" ", "-") + "\n")
            return 0
        if args[1] == "HostName":
            out("HostName: not set\n")
            return 1
    err("usage: scutil --get ComputerName|LocalHostName|HostName\n")
    return 1


# --------------------------------------------------------------------------

def main(argv):
    if len(argv) < 3 or argv[1] != "--simhost":
        err(__doc__)
        return 2
    host = Host(argv[2])
    if argv[3:] == ["--reboot"]:
        return reboot(host)
    cmd, args = os.path.basename(argv[3]) if len(argv) > 3 else "", argv[4:]
    full = [cmd] + args
    if host.stock:
        if cmd == "sudo":
            err("fakemac: a stock Mac's sudo is the real one\n")
            return 127
        # every fake command run as root counts for fail-sudo (through sudo, or
        # by a script run through sudo), but those the simulator's own
        # `simcluster.sh exec` runs as root (SIMCLUSTER_EXEC=1; sudo's
        # env_reset removes it from what sudo runs)
        if (host.sudo and os.environ.get("SIMCLUSTER_EXEC") != "1" and
                sudo_should_fail(host, full)):
            err("sudo: simulated failure (fail-sudo)\n")
            host.log(full, 1, False)
            return 1
    elif (cmd != "sudo" and os.environ.get("SIMCLUSTER_SUDO_SCRIPT") == "1" and
            sudo_should_fail(host, full)):
        # a privileged command of a script run through sudo: counted as one
        err("sudo: simulated failure (fail-sudo)\n")
        host.log(full, 1, False)
        return 1
    simple = {
        "system_profiler": cmd_system_profiler,
        "ibv_devices": cmd_ibv_devices,
        "ibv_devinfo": cmd_ibv_devinfo,
        "ipconfig": cmd_ipconfig,
        "sw_vers": cmd_sw_vers,
        "sysctl": cmd_sysctl,
        "uname": cmd_uname,
        "scutil": cmd_scutil,
        "netstat": cmd_netstat,
    }
    if cmd in simple:
        rc = simple[cmd](host, args)
        host.log(full, rc, False)
        return rc
    if cmd == "networksetup":
        rc = cmd_networksetup(host, args)
        host.log(full, rc, bool(args) and args[0].startswith(NETWORKSETUP_MUTATING))
        return rc
    if cmd == "rdma_ctl":
        rc = cmd_rdma_ctl(host, args)
        host.log(full, rc, bool(args) and args[0] in ("enable", "disable"))
        return rc
    if cmd == "ifconfig":
        rc, mutating = cmd_ifconfig(host, args, full)
        host.log(full, rc, mutating)
        return rc
    if cmd == "route":
        rc, mutating = cmd_route(host, args)
        host.log(full, rc, mutating)
        return rc
    if cmd in ("pmset", "socketfilterfw"):
        rc, mutating = (cmd_pmset if cmd == "pmset" else cmd_socketfilterfw)(host, args)
        host.log(full, rc, mutating)
        return rc
    if cmd == "launchctl":
        rc, mutating = cmd_launchctl(host, args)
        host.log(full, rc, mutating)
        return rc
    if cmd == "sudo":
        return cmd_sudo(host, args, full)
    err(f"fakemac: unknown command {cmd!r}\n")
    return 127


def run_batch():
    """--run-batch: read "HOSTDIR<TAB>FILE<TAB>COMMAND ARGS..." lines on stdin,
    run each command for the host of HOSTDIR with its stdout and stderr in
    FILE (one forked child each, so no interpreter start per command), and
    print "FILE<TAB>STATUS" for each."""
    for line in sys.stdin.read().splitlines():
        if not line.strip():
            continue
        hostdir, path, cmd = line.split("\t", 2)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            rc = 1
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                os.close(fd)
                rc = main(["fakemac.py", "--simhost", hostdir] + cmd.split())
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 1
            except BaseException as e:   # report and fail this command only
                sys.stderr.write(f"fakemac: {e}\n")
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(rc & 0xFF)
        _, st = os.waitpid(pid, 0)
        print(f"{path}\t{os.waitstatus_to_exitcode(st)}")
    return 0


if __name__ == "__main__":
    try:
        if len(sys.argv) == 2 and sys.argv[1] == "--run-batch":
            sys.exit(run_batch())
        sys.exit(main(sys.argv))
    except BrokenPipeError:
        sys.exit(141)
