#!/bin/sh
# SPDX-License-Identifier: MIT
# `jaccl-config doctor --from BUNDLE`: each bundle of tests/doctor/bundles
# (made by make-bundles.sh from simulated clusters) makes its check fire
# with the expected status and the exit status 8; the configured cluster
# passes every check that a bundle can answer (exit 0); the coordinator
# check is "unknown" when replaying. Then the hostfile checks, the
# expected-cabling diff (moved, removed, downgraded), the file configure
# --save-cabling writes (version 2) and the older nested form, the human
# output and bad --expect files.
. "${top_srcdir:-.}/tests/lib/tap.sh"
dir="$top_srcdir/tests/doctor"
ex="$top_srcdir/data/examples"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed to read the JSON reports"

# status.py OUT: "check=status" for every check that is not ok, sorted,
# after asserting the report's shape.
cat >"$t/status.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = set()
for c in d["checks"]:
    assert set(c) == {"name", "severity", "description", "status", "reason", "findings"}, c
    assert c["status"] in ("ok", "warning", "error", "unknown"), c
    assert (c["status"] == "unknown") == (c["reason"] is not None), c
    worst = max([["ok", "unknown", "warning", "error"].index(f["status"]) for f in c["findings"]] or [0])
    assert ["ok", "unknown", "warning", "error"][worst] == c["status"], c
    for f in c["findings"]:
        assert f["message"] and isinstance(f["hosts"], list) and isinstance(f["ports"], list), f
        assert f["host"] is None or f["host"] in d["hosts"], f
    names.add(c["name"])
assert d["passed"] == (d["summary"]["error"] == 0)
assert sum(d["summary"].values()) == len(d["checks"])
print(" ".join(sorted(c["name"] + "=" + c["status"] for c in d["checks"] if c["status"] != "ok")))
PY

# The bundles above were saved by `probe --save`, without the doctor's own
# outputs: their checks are unknown (never a pass); the bundles made with
# `doctor --save` (drift-*, software-*) set NEWU to the install check, which
# came after them, and the other-managers check, which came after both.
NEWU="bridge-route=unknown drift=unknown firewall=unknown install=unknown login-env=unknown other-managers=unknown sleep=unknown software=unknown"

# run NAME WANT-EXIT WANT-STATUSES ARGS...: doctor --json ARGS; compare.
run() {
	_name=$1 _want=$2 _st="$3 $NEWU"
	shift 3
	"$JACCL_CONFIG" doctor --json "$@" >"$t/out.json" 2>"$t/err"
	_rc=$?
	is "$_rc" "$_want" "$_name: exit status"
	_st=$(echo $_st | tr ' ' '\n' | sort | paste -sd' ' -)
	is "$(python3 "$t/status.py" "$t/out.json" 2>&1)" "$_st" "$_name: checks that are not ok"
}

u="coordinator=unknown expected-cabling=unknown hostfile-ifaces=unknown"
run "all pass (configured mesh)" 0 "$u" --from "$dir/bundles/configured"
run "rdma disabled on mini2" 8 "$u port-state=error rdma-enabled=error" --from "$dir/bundles/rdma-disabled"
grep -q 'rdma_en2 on mini1 is PORT_DOWN because mini2 has RDMA disabled' "$t/out.json"
ok $? "rdma disabled: the peer's PORT_DOWN is put on mini2, not on the cable"
grep -q 'rdma_ctl enable' "$t/out.json"
ok $? "rdma disabled: the remedy is the Recovery steps"
run "Thunderbolt 4 link" 8 "$u link-class=error" --from "$dir/bundles/tb4-link"
grep -q '40 Gb/s (Thunderbolt 4 class): no RDMA' "$t/out.json"
ok $? "Thunderbolt 4 link: named with its speed"
run "link through a dock" 8 "$u link-class=error" --from "$dir/bundles/dock"
grep -q 'goes through a dock or hub' "$t/out.json"
ok $? "dock: named"
run "port down, both ends enabled" 8 "$u port-state=error" --from "$dir/bundles/port-down"
grep -q 'rdma_en5 on m3-ultra-2 is PORT_DOWN although both Macs have RDMA enabled' "$t/out.json"
ok $? "port down: told apart from a disabled peer (reseat or replace)"
run "bridge up with members, loop" 8 "$u bridge=error" --from "$dir/bundles/bridge-loop"
is "$(grep -c 'is up with members' "$t/out.json")" 4 "bridge: one finding per host"
grep -q 'Thunderbolt Bridge loop: the bridged cables of m3-ultra-1, m3-ultra-2, m3-ultra-3, m3-ultra-4 form a cycle' "$t/out.json"
ok $? "bridge: the loop across hosts"
run "no IPv4 on a cable" 8 "$u ipv4=error" --from "$dir/bundles/no-ipv4"
is "$(grep -c 'has no IPv4 address' "$t/out.json")" 1 "no IPv4: only m3-ultra-1 en5"
grep -q 'en5 (to m3-ultra-2) has no IPv4 address' "$t/out.json"
ok $? "no IPv4: names the interface and the peer"
run "macOS differs" 8 "$u os-version=error" --from "$dir/bundles/os-mismatch"
grep -q 'm3-ultra-3 26.1' "$t/out.json"
ok $? "macOS differs: lists every host's version"
run "same machine twice" 8 "$u duplicate-hosts=error ipv4=unknown link-class=unknown port-state=unknown qp-budget=unknown" --from "$dir/bundles/duplicate"
grep -q 'm3-ultra-1 and studio-a are the same machine' "$t/out.json"
ok $? "duplicate: names both"
run "mesh of 9 (cabling)" 8 "$u bridge=error ipv4=error qp-budget=warning studio-port=warning" --from "$dir/bundles/mesh9"
run "mesh of 9 (hostfile)" 8 "coordinator=unknown expected-cabling=unknown bridge=error ipv4=error qp-budget=error studio-port=warning" \
    --from "$dir/bundles/mesh9" --hostfile "$dir/hostfiles/mesh9.json"
run "Mac Studio port beside Ethernet" 0 "$u studio-port=warning" --from "$dir/bundles/moved"

# hostfiles
run "hostfile matches" 0 "coordinator=unknown expected-cabling=unknown" \
    --from "$dir/bundles/configured" --hostfile "$dir/hostfiles/studio-mesh4.json"
run "hostfile names a gone device" 8 "coordinator=unknown expected-cabling=unknown hostfile-ifaces=error" \
    --from "$dir/bundles/configured" --hostfile "$dir/hostfiles/gone-device.json"
grep -q 'rdma_en8 (listed for m3-ultra-2) no longer exists' "$t/out.json"
ok $? "gone device: named"
run "hostfile after re-cabling" 8 "coordinator=unknown expected-cabling=unknown hostfile-ifaces=error ipv4=error studio-port=warning" \
    --from "$dir/bundles/moved" --hostfile "$dir/hostfiles/studio-mesh4.json"
grep -q 'rdma_en5 no longer reaches m3-ultra-4: the cable to it is now on rdma_en2' "$t/out.json"
ok $? "re-cabled: names the device it moved to"

# expected cabling
exp="$dir/expect/studio-mesh4.json"
u2="coordinator=unknown hostfile-ifaces=unknown"
run "cabling as expected" 0 "$u2" --from "$dir/bundles/configured" --expect "$exp"
run "cable moved" 8 "$u2 expected-cabling=error studio-port=warning" --from "$dir/bundles/moved" --expect "$exp"
grep -q 'm3-ultra-3 Thunderbolt 3 (en5) -- m3-ultra-4 Thunderbolt 3 (en5) has moved: now m3-ultra-3 Thunderbolt 1 (en2) -- m3-ultra-4 Thunderbolt 1 (en2)' "$t/out.json"
ok $? "moved: old and new ports"
run "cable removed" 8 "$u2 bridge=error expected-cabling=error ipv4=error" --from "$ex/missing-cable" --expect "$exp"
grep -q 'm3-ultra-3 Thunderbolt 3 (en5) -- m3-ultra-4 Thunderbolt 3 (en5) is missing' "$t/out.json"
ok $? "removed: named"
run "cable downgraded" 8 "$u2 bridge=error expected-cabling=error ipv4=error link-class=error" --from "$ex/mesh4-tb4-link" --expect "$exp"
grep -q 'm3-ultra-2 Thunderbolt 2 (en3) -- m3-ultra-3 Thunderbolt 2 (en3) is downgraded to 40 Gb/s (expected 80 Gb/s)' "$t/out.json"
ok $? "downgraded: 80 to 40 Gb/s"
run "expected host not probed" 0 "coordinator=unknown hostfile-ifaces=unknown expected-cabling=warning" \
    --from "$dir/bundles/configured" --hosts m3-ultra-1,m3-ultra-2,m3-ultra-3 --expect "$exp"

# the file configure --save-cabling writes is the one format (version 2),
# byte for byte the file of the same cabling written by hand
"$JACCL_CONFIG" --from "$dir/bundles/configured" --save-cabling "$t/cab.json" --dot >/dev/null 2>&1
is "$?" 0 "configure --save-cabling: written"
cmp -s "$t/cab.json" "$dir/expect/studio-mesh4-v2.json"
ok $? "configure --save-cabling: exactly expect/studio-mesh4-v2.json"
run "configure's file, cabling as saved" 0 "$u2" --from "$dir/bundles/configured" --expect "$t/cab.json"
run "configure's file, cable moved" 8 "$u2 expected-cabling=error studio-port=warning" --from "$dir/bundles/moved" --expect "$t/cab.json"

# the nested form configure wrote before version 2 still reads the same
python3 - "$t/cab.json" "$t/cab-v1.json" <<'EOT'
import json, sys
d = json.load(open(sys.argv[1]))
def end(c, s):
    return {"host": c[s], "receptacle": c[s + "_port"], "iface": c[s + "_iface"]}
old = {"version": 1,
       "hosts": [{"name": h, "model": "Mac15,14", "ports": []} for h in d["hosts"]],
       "cables": [{"a": end(c, "a"), "b": end(c, "b"), "gbps": c["gbps"],
                   "via_dock": c["via_dock"], "rdma": True} for c in d["cables"]]}
json.dump(old, open(sys.argv[2], "w"), indent=2)
EOT
run "older nested file, cabling as saved" 0 "$u2" --from "$dir/bundles/configured" --expect "$t/cab-v1.json"
run "older nested file, cable moved" 8 "$u2 expected-cabling=error studio-port=warning" --from "$dir/bundles/moved" --expect "$t/cab-v1.json"

# bad --expect files: a clear error, exit 1, nothing on stdout
printf '{"version": 1, "hosts": ["a"], "cables": [{"a": "a", "b": "zz", "a_port": "1", "b_port": "1"}]}' >"$t/bad.json"
"$JACCL_CONFIG" doctor --from "$dir/bundles/configured" --expect "$t/bad.json" >"$t/out" 2>"$t/err"
is "$?" 1 "bad cabling file: exit 1"
grep -q 'bad.json: cables\[0\].b: not a host of "hosts"' "$t/err"
ok $? "bad cabling file: says where"
is "$(wc -c <"$t/out")" 0 "bad cabling file: nothing on stdout"
"$JACCL_CONFIG" doctor --from "$dir/bundles/configured" --expect "$t/nonexistent" >"$t/out" 2>"$t/err"
is "$?" 1 "missing cabling file: exit 1"

# drift and sameness: bundles of `doctor --save` (make-drift-bundles.sh),
# compared with the state directory of the setup they were made from
NEWU="install=unknown other-managers=unknown"
sd="$dir/states/triangle3"
u3="coordinator=unknown expected-cabling=unknown hostfile-ifaces=unknown"
# no host of these bundles has mlx: each one's Python without it is a
# warning (nothing to compare, and an MLX job would fail there), never a pass
u3="$u3 software=warning"
run "after the setup: all alike" 0 "$u3" --from "$dir/bundles/sw-same" --state-dir "$sd"
run "after the setup, no state directory" 0 "$u3 drift=unknown" --from "$dir/bundles/sw-same"
run "after the setup, an empty state directory" 0 "$u3 drift=unknown" \
    --from "$dir/bundles/sw-same" --state-dir "$t/nothing"
grep -q "no setup recorded in $t/nothing" "$t/out.json"
ok $? "empty state directory: says so"
run "drift: address lost, bridge back" 8 "$u3 bridge=error drift=error ipv4=error" \
    --from "$dir/bundles/drift" --state-dir "$sd"
grep -q '"planned address 192.168.0.1 on en2 (to 192.168.0.2) is missing (en2 has no IPv4 address)' "$t/out.json"
ok $? "drift: the lost address, its interface and peer"
grep -q "\"remedy\": \"jaccl-config --hosts mini1,mini2,mini3 --auto-setup --state-dir $sd\"" "$t/out.json"
ok $? "drift: the fix is the setup command"
grep -q '"remedy": "sudo ifconfig bridge0 deletem en4 deletem en2"' "$t/out.json"
ok $? "drift: the bridge's members out in one command"
is "$(grep -c 'is missing' "$t/out.json")" 1 "drift: only the address that was flushed"
run "drift: cable moved" 8 "$u3 bridge=error drift=error ipv4=error" \
    --from "$dir/bundles/drift-moved" --state-dir "$sd"
grep -q 'cable mini1 en2 -- mini2 en2 of the last setup has moved: now mini1 en3 -- mini2 en4' "$t/out.json"
ok $? "moved: the old and the new ports"
run "sameness: sleep, environment, firewall, MLX" 8 \
    "${u3% *} firewall=error login-env=warning sleep=warning software=error" \
    --from "$dir/bundles/sw-differ" --state-dir "$sd"
grep -q 'the system sleeps after 10 minutes idle (pmset sleep 10)' "$t/out.json"
ok $? "sleep: 10 minutes"
grep -q 'MLX_METAL_FAST_SYNCH differs between hosts (commands started over SSH see it): mini1 (unset), mini2 (unset), mini3 \\"1\\"' "$t/out.json"
ok $? "environment: every host's value"
is "$(grep -c "no mlx in this Python (python3, Python 3.11.2), where the other hosts' jobs import mlx 0.29.1" "$t/out.json")" 2 \
    "MLX: on mini3 only, the two hosts without it named, each an error"
grep -q 'MLX differs between hosts' "$t/out.json"
ok $((!$?)) "MLX: the versions compared only where it was found"
grep -q 'blocks all incoming connections (State = 2)' "$t/out.json"
ok $? "firewall: block-all"
run "bridge0 with an address, default route through it" 8 "$u3 bridge-route=error" \
    --from "$dir/bundles/bridge-dhcp" --state-dir "$sd"
grep -q 'bridge0 (Thunderbolt Bridge) holds 169.254.10.1/16' "$t/out.json"
ok $? "bridge-route: the address"
grep -q 'the default route goes through bridge0' "$t/out.json"
ok $? "bridge-route: the default route"
# one output missing or garbled: unknown on that host, never a pass
rm -rf "$t/b" && cp -r "$dir/bundles/sw-same" "$t/b"
rm "$t/b/mini2/pmset-g.txt"
echo 'garbage' >"$t/b/mini3/socketfilterfw-getglobalstate.txt"
run "outputs missing or garbled" 0 "$u3 firewall=unknown sleep=unknown" --from "$t/b" --state-dir "$sd"
# edits of single outputs: the firewall on (State = 1), another Python, a
# Python without package metadata, a setup that did not finish
rm -rf "$t/b" && cp -r "$dir/bundles/sw-same" "$t/b"
echo 'Firewall is enabled. (State = 1)' >"$t/b/mini2/socketfilterfw-getglobalstate.txt"
printf 'python 3.12.4\nmlx -\n' >"$t/b/mini3/python-mlx.txt"
run "firewall on, another Python" 0 "$u3 firewall=warning" --from "$t/b" --state-dir "$sd"
grep -q 'Python differs between hosts: mini1 3.11.2, mini2 3.11.2, mini3 3.12.4' "$t/out.json"
ok $? "Python: every host's version"
printf 'python 3.7.1\nmlx ?\n' >"$t/b/mini3/python-mlx.txt"
run "MLX version unreadable" 0 "$u3 firewall=warning" --from "$t/b" --state-dir "$sd"
# the known MLX bugs (data/mlx-bugs.json): MLX #4443 on 0.32.1 and 0.32.2
# with a jaccl-ring hostfile is an error naming the issue and the release
# to install; with a jaccl hostfile nothing; without a hostfile a warning;
# 0.32.0 and 0.32.4 not named (the versions differing is its own error)
rm -rf "$t/b" && cp -r "$dir/bundles/sw-same" "$t/b"
for h in mini1 mini2 mini3; do printf 'python 3.11.2\nmlx 0.32.1\n' >"$t/b/$h/python-mlx.txt"; done
for be in jaccl-ring jaccl; do
	"$JACCL_CONFIG" --from "$dir/bundles/sw-same" --backend $be --output-hostfile "$t/$be.json" \
	    </dev/null >/dev/null 2>&1
	ok $? "a $be hostfile of the bundle"
done
u4="coordinator=unknown expected-cabling=unknown"
run "MLX 0.32.1, jaccl-ring hostfile" 8 "$u4 software=error" --from "$t/b" \
    --state-dir "$sd" --hostfile "$t/jaccl-ring.json"
grep -q "\"message\": \"MLX 0.32.1 to 0.32.2 has ml-explore/mlx#4443 with the jaccl-ring backend, which this cluster uses: all_gather sends the lower half of every rank's block in both directions: the upper half never arrives, the results are wrong and no error is raised (here: mini1 0.32.1, mini2 0.32.1, mini3 0.32.1; fixed in 0.32.4)\"" "$t/out.json" &&
    grep -q '"remedy": "python3 -m pip install mlx==0.32.4 (on mini1, mini2, mini3)"' "$t/out.json"
ok $? "MLX #4443: the issue, every host's version and the release to install"
run "MLX 0.32.1, jaccl hostfile" 0 "$u4" --from "$t/b" --state-dir "$sd" \
    --hostfile "$t/jaccl.json"
run "MLX 0.32.1, no hostfile" 0 "$u4 hostfile-ifaces=unknown software=warning" --from "$t/b" --state-dir "$sd"
grep -q 'has ml-explore/mlx#4443 with the jaccl-ring backend (give --hostfile to know the backend)' "$t/out.json"
ok $? "MLX #4443 without a hostfile: a warning that says what would tell"
printf 'python 3.11.2\nmlx 0.32.0\n' >"$t/b/mini1/python-mlx.txt"
printf 'python 3.11.2\nmlx 0.32.4\n' >"$t/b/mini2/python-mlx.txt"
printf 'python 3.11.2\nmlx 0.32.2\n' >"$t/b/mini3/python-mlx.txt"
run "MLX 0.32.0/0.32.4/0.32.2, jaccl-ring hostfile" 8 "$u4 software=error" --from "$t/b" \
    --state-dir "$sd" --hostfile "$t/jaccl-ring.json"
grep -q '(here: mini3 0.32.2; fixed in 0.32.4)' "$t/out.json" && grep -q '(on mini3)' "$t/out.json"
ok $? "MLX #4443: only the host on an affected version"
mkdir -p "$t/ip" && cp -r "$sd"/* "$t/ip"/
sed -i 's/"status": "applied"/"status": "in-progress"/' "$t/ip/last-setup.json"
run "setup did not finish" 0 "$u3 drift=warning" --from "$dir/bundles/sw-same" --state-dir "$t/ip"
sed -i 's/"status": "in-progress"/"status": "restored"/' "$t/ip/last-setup.json"
run "setup restored: nothing to compare" 8 "$u3 bridge=error ipv4=error" \
    --from "$dir/bundles/drift" --state-dir "$t/ip"
# a state directory that is not one: unknown with the reason, nothing lost
mkdir -p "$t/badstate" && echo '{"status": "applied", "hosts": [{"host": "mini1", "file": "../../etc/passwd"}]}' >"$t/badstate/last-setup.json"
run "bad state directory" 0 "$u3 drift=unknown" --from "$dir/bundles/sw-same" --state-dir "$t/badstate"
grep -q 'bad host or file' "$t/out.json"
ok $? "bad state directory: says why"
# the cabling file of the state directory is the default --expect: cables
# slower than configure --save-cabling recorded are found without --expect
mkdir -p "$t/sc" && cp -r "$sd"/* "$t/sc"/
"$JACCL_CONFIG" --from "$dir/bundles/sw-same" --save-cabling "$t/sc/cabling.json" --dot >/dev/null 2>&1
ok $? "the cabling saved into a copy of the state directory"
run "state directory's cabling, as saved" 0 "coordinator=unknown hostfile-ifaces=unknown software=warning" \
    --from "$dir/bundles/sw-same" --state-dir "$t/sc"
rm -rf "$t/b" && cp -r "$dir/bundles/sw-same" "$t/b"
sed -i 's|"80 Gb/s"|"40 Gb/s"|' "$t/b/mini1/system_profiler-SPThunderboltDataType.json" \
    "$t/b/mini2/system_profiler-SPThunderboltDataType.json"
run "state directory's cabling, links at 40 Gb/s" 8 \
    "coordinator=unknown hostfile-ifaces=unknown expected-cabling=error link-class=error software=warning" \
    --from "$t/b" --state-dir "$t/sc"
grep -q 'mini1 Thunderbolt 1 (en2) -- mini2 Thunderbolt 1 (en2) is downgraded to 40 Gb/s (expected 80 Gb/s)' "$t/out.json"
ok $? "downgraded: named against the state directory's cabling"
echo '{"version": 2}' >"$t/sc/cabling.json"
"$JACCL_CONFIG" doctor --from "$dir/bundles/sw-same" --state-dir "$t/sc" >"$t/out" 2>"$t/err"
is "$?" 1 "a bad cabling file in the state directory: exit 1"
grep -q 'cabling.json' "$t/err"
ok $? "a bad cabling file in the state directory: named ($(head -1 "$t/err"))"
NEWU="bridge-route=unknown drift=unknown firewall=unknown install=unknown login-env=unknown other-managers=unknown sleep=unknown software=unknown"

# human output: grouped by host, one line per finding, a summary
"$JACCL_CONFIG" doctor --from "$dir/bundles/rdma-disabled" >"$t/out" 2>"$t/err"
is "$?" 8 "human: exit 8"
sed -n '/^mini2:$/,/^$/p' "$t/out" | grep -q '^  error   rdma-enabled: RDMA is disabled (rdma_ctl status: disabled)$'
ok $? "human: the finding under its host"
grep -q '^23 checks: 10 ok, 0 warnings, 2 errors, 11 unknown$' "$t/out"
ok $? "human: summary line"
"$JACCL_CONFIG" doctor --from "$dir/bundles/configured" >"$t/out" 2>"$t/err"
is "$?" 0 "human: all pass exits 0"
done_testing
