#!/bin/sh
# SPDX-License-Identifier: MIT
# The example probe bundles under data/examples are what make-bundle.sh makes
# from their topology.json today (so they can be regenerated), each has a
# manifest listing every output of every Mac of the topology, and the
# system_profiler JSON parses wherever the topology does not ask for garbage.
. "$top_srcdir/tests/lib/tap.sh"
plain_build_only "the simulator's own tests run in the plain build"
command -v python3 >/dev/null 2>&1 || skip_all "python3 missing"
n=0
for d in "$top_srcdir"/data/examples/*/; do
	d=${d%/}
	[ -f "$d/manifest.json" ] || continue
	b=$(basename "$d")
	n=$((n + 1))
	sh "$top_srcdir/tests/sim/make-bundle.sh" "$d/topology.json" "$t/$b"
	diff -r "$d" "$t/$b" >"$t/diff" 2>&1
	ok $? "$b: regenerating it from its topology gives the same files"
	[ -s "$t/diff" ] && diag "$(head -20 "$t/diff")"
	python3 - "$d" <<'PY'
import json, os, sys
d = sys.argv[1]
topo = json.load(open(os.path.join(d, "topology.json")))
man = json.load(open(os.path.join(d, "manifest.json")))
assert man["version"] == 1
macs = [h["name"] for h in topo["hosts"]
        if h.get("personality", topo.get("defaults", {}).get("personality", "mac")) == "mac"]
assert [h["name"] for h in man["hosts"]] == macs, "host order"
files = {"uname.txt", "system_profiler-SPThunderboltDataType.json",
         "networksetup-listallhardwareports.txt", "ibv_devices.txt", "ibv_devinfo.txt",
         "ifconfig.txt", "ipconfig-getifaddr-en0.txt", "ipconfig-getifaddr-en1.txt",
         "sw_vers.txt", "rdma_ctl-status.txt", "sudo-n-true.txt", "sysctl-hw.model.txt",
         "hostname.txt"}
for h in man["hosts"]:
    assert set(h["outputs"]) == files, (h["name"], set(h["outputs"]) ^ files)
    assert set(os.listdir(os.path.join(d, h["name"]))) == files, h["name"]
    raw = next(x for x in topo["hosts"] if x["name"] == h["name"])
    sp = open(os.path.join(d, h["name"], "system_profiler-SPThunderboltDataType.json")).read()
    if raw.get("system_profiler", "normal") == "normal":
        json.loads(sp)["SPThunderboltDataType"]
    else:
        try:
            json.loads(sp)
            raise AssertionError(h["name"] + ": garbage parses")
        except ValueError:
            pass
PY
	ok $? "$b: manifest lists every output of every Mac, in topology order"
done
[ "$n" -ge 6 ]
ok $? "at least six example bundles ($n)"
done_testing
