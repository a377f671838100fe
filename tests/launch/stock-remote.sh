#!/bin/sh
# SPDX-License-Identifier: MIT
# verify, launch and the setup on two stock Macs (tests/sim "Stock Macs"):
# admin logins with zsh (mac1) and fish (mac2) as login shell, Apple's
# PATH, jaccl-config only in each host's /opt/homebrew/bin (the client's
# build tree is out of the hosts' sight). One cluster for every assertion:
# - probe, watch and --auto-setup work through fish as well as zsh (the
#   cables' addresses checked in the hosts' namespaces), restore undoes them;
# - verify finds /opt/homebrew/bin/jaccl-config on each host and passes
#   (a wrapper put there logs what it was asked to run);
# - launch's cleanup by tag, under zsh, with nothing to clean (the rank's
#   TMPDIR is not writable, so it makes no folder) is reported cleaned;
# - a jaccl-config of another version on mac2 (a script that only prints
#   it) stops verify and launch -- jaccl-config, naming the host, the path
#   and both versions, and is asked nothing but --version;
# - doctor's install check says where each host's is, and names the other
#   version and a host without one, with the fix;
# - --remote-bin names the program when it is elsewhere.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require
sim_require_stock
command -v fish >/dev/null 2>&1 || skip_all "the fish login needs fish (package fish)"
sim_up "$top_srcdir/tests/launch/topologies/stock-zsh-fish.json" ||
	{ echo "Bail out! cannot bring the stock Macs up"; exit 1; }
cfg=$(sim_ssh_config)
export JACCL_VERIFY_MB=1 JACCL_VERIFY_MAX_MB=1
jc() { _c=$1; shift; timeout 120 "$JACCL_CONFIG" "$_c" -F "$cfg" "$@"; }
version=$("$JACCL_CONFIG" --version)
brew1=$SIM_DIR/hosts/mac1/homebrew/bin
brew2=$SIM_DIR/hosts/mac2/homebrew/bin

# the hosts as they come: no jaccl-config on the PATH of a command over ssh
for h in mac1 mac2; do
	is "$(sim_ssh $h "/bin/sh -c 'command -v jaccl-config || echo none; test -x /opt/homebrew/bin/jaccl-config && echo brew'" </dev/null 2>&1)" \
	    "none
brew" "$h: jaccl-config is not on the PATH of ssh commands, only in /opt/homebrew/bin"
done

# probe through zsh and fish: every cable of the topology found at both ends
jc probe --hosts mac1,mac2 --json </dev/null >"$t/probe.json" 2>"$t/probe.err"
is "$?" 0 "probe of the zsh and the fish host: exit 0"
python3 - "$SIM_DIR/cluster.json" "$t/probe.json" <<'PY'
import json, sys
c, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
hosts = {h["name"]: h for h in p["hosts"]}
assert all(h["reachable"] and h["error"] is None for h in hosts.values()), p["errors"]
for cb in c["cables"]:
    for end, peer in (("a", "b"), ("b", "a")):
        port = [x for x in hosts[cb[end]]["ports"] if x["iface"] == cb[end + "_if"]]
        assert port and port[0]["link"] is not None and port[0]["peer_id"], (cb, port)
PY
ok $? "probe: each cable of the topology, at both ends (fish's mac2 too)"

# watch: its remote loop (a probe script nested in another) through zsh and fish
jc watch --hosts mac1,mac2 --count 1 --json </dev/null >"$t/w.json" 2>"$t/w.err"
is "$?" 0 "watch --count 1 on the zsh and the fish host: exit 0" || diag "$(tail -3 "$t/w.err")"
python3 - "$SIM_DIR/cluster.json" "$t/w.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
ev = json.loads(open(sys.argv[2]).readline())
assert ev["event"] == "snapshot" and len(ev["cables"]) == len(c["cables"]) == 1, ev
ends = sorted((e["host"], e["iface"]) for e in ev["cables"][0]["ends"])
cb = c["cables"][0]
assert ends == sorted([(cb["a"], cb["a_if"]), (cb["b"], cb["b_if"])]), ends
PY
ok $? "watch: its first snapshot holds the topology's cable, both ends"

# --auto-setup: one script per host through sudo, mac2's through fish
jc configure --hosts mac1,mac2 --state-dir "$t/st" --auto-setup --output-hostfile "$t/hf.json" \
    </dev/null >"$t/setup.out" 2>"$t/setup.err"
r=$?
is "$r" 0 "--auto-setup on the zsh and the fish host: exit 0" || diag "$(tail -5 "$t/setup.err")"
addrs() {
	python3 - "$SIM_DIR/cluster.json" <<'PY' | while read -r h ifc; do
import json, sys
for cb in json.load(open(sys.argv[1]))["cables"]:
    print(cb["a"], cb["a_if"]); print(cb["b"], cb["b_if"])
PY
		printf '%s %s %s\n' "$h" "$ifc" "$(ip -n "$(sim_ns "$h")" -4 -o addr show dev "$ifc" | awk '{print $4}')"
	done
}
addrs >"$t/addrs"
is "$(awk '{print $3}' "$t/addrs" | grep -c '/30$')" 2 \
    "each end of the cable has its /30, in the hosts' own network namespaces" || diag "$(cat "$t/addrs")"

# verify with jaccl-config only in /opt/homebrew/bin: a wrapper there logs each call
for b in "$brew1" "$brew2"; do
	mv "$b/jaccl-config" "$b/jaccl-config.real"
	printf '#!/bin/sh\necho "$*" >>/opt/homebrew/calls.log\nexec /opt/homebrew/bin/jaccl-config.real "$@"\n' \
	    >"$b/jaccl-config"
	chmod 755 "$b/jaccl-config"
done
jc verify --hostfile "$t/hf.json" --fabric tcp --json </dev/null >"$t/v.json" 2>"$t/v.err"
is "$?" 0 "verify on the stock Macs: exit 0" || diag "$(tail -5 "$t/v.err")"
python3 - "$t/v.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] and r["failures"] == [], r["failures"]
assert [p["program"] for p in r["processes"]] == ["/opt/homebrew/bin/jaccl-config"] * 2, r["processes"]
assert all(p["state"] == "exited" and p["status"] == 0 and p["cleaned"] for p in r["processes"])
PY
ok $? "verify: both ranks ran /opt/homebrew/bin/jaccl-config and passed"
for h in mac1 mac2; do
	is "$(sed 's/ .*//' "$SIM_DIR/hosts/$h/homebrew/calls.log" | tr '\n' ' ')" "--version verify-rank " \
	    "$h: Homebrew's jaccl-config was asked its version, then ran verify-rank"
done

# launch's cleanup by tag under zsh, nothing to clean: mac1 cannot make its folder
tmp1=$(sim_ssh mac1 'printf %s "$TMPDIR"' </dev/null)
sim_exec mac1 chmod 500 "$tmp1"
jc verify --hostfile "$t/hf.json" --fabric tcp --json </dev/null >"$t/c.json" 2>"$t/c.err"
is "$?" 7 "verify with mac1's TMPDIR read-only: the run fails (exit 7)"
jc launch --hostfile "$t/hf.json" -- true </dev/null >"$t/lc.out" 2>"$t/lc.err"
is "$?" 126 "launch with mac1's TMPDIR read-only: exit 126 (its mktemp failed)"
grep -q 'could not be cleaned up' "$t/lc.err"
ok $((!$?)) "launch: every rank cleaned up, none reported otherwise" || diag "$(cat "$t/lc.err")"
sim_exec mac1 chmod 700 "$tmp1"
python3 - "$t/c.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["processes"]
assert p[0]["state"] == "exited" and p[0]["status"] == 126, p[0]
assert all(x["cleaned"] for x in p), p
PY
ok $? "mac1 (zsh) exited 126 before making its folder, and both ranks are reported cleaned"
is "$(sim_exec mac1 sh -c "ls -d '$tmp1'jaccl-launch.* 2>/dev/null" | wc -l) $(sim_exec mac2 sh -c 'ls -d /var/folders/*/*/T/jaccl-launch.* 2>/dev/null' | wc -l)" \
    "0 0" "no jaccl-launch folder is left on either host"

# launch -- jaccl-config: the hosts' own, of this version
jc launch --hostfile "$t/hf.json" -- jaccl-config --version </dev/null >"$t/l.out" 2>"$t/l.err"
is "$?" 0 "launch -- jaccl-config --version: exit 0" || diag "$(cat "$t/l.err")"
is "$(sort "$t/l.out")" "[0] $version
[1] $version" "launch: each host's Homebrew jaccl-config answered"

# another version on mac2 (fish): a script that prints it and logs its arguments
printf '#!/bin/sh\necho "$*" >>/opt/homebrew/calls.log\necho "jaccl-config 0.0.1"\n' >"$brew2/jaccl-config"
: >"$SIM_DIR/hosts/mac2/homebrew/calls.log"
jc verify --hostfile "$t/hf.json" --fabric tcp --json </dev/null >"$t/m.json" 2>"$t/m.err"
is "$?" 1 "verify with another version on mac2: exit 1"
python3 - "$t/m.json" "$version" <<'PY'
import json, sys
r, v = json.load(open(sys.argv[1])), sys.argv[2]
p = r["processes"][1]
assert p["state"] == "no-program" and p["program"] == "/opt/homebrew/bin/jaccl-config", p
want = "rank 1 (mac2) could not start: /opt/homebrew/bin/jaccl-config is jaccl-config 0.0.1, not %s as here" % v
assert any(f.startswith(want) for f in r["failures"]), r["failures"]
PY
ok $? "verify names mac2, the path and both versions"
is "$(cat "$SIM_DIR/hosts/mac2/homebrew/calls.log")" "--version" "mac2's other jaccl-config was asked only its version"
jc launch --hostfile "$t/hf.json" -- jaccl-config --version </dev/null >"$t/l2.out" 2>"$t/l2.err"
r=$?
grep -q "mac2.*/opt/homebrew/bin/jaccl-config is jaccl-config 0.0.1, not $version" "$t/l2.err"
ok $? "launch -- jaccl-config names mac2, the path and both versions (exit $r)" || diag "$(cat "$t/l2.err")"
is "$(grep -c 'jaccl-config 0.0.1$' "$t/l2.out")" 0 "... and runs nothing of it"

# doctor's install check: where each host's is and which version (mac2's the other one)
doctor_install() {
	jc doctor --hosts mac1,mac2 --json </dev/null >"$t/d.json" 2>"$t/d.err"
	python3 -c '
import json, sys
for c in json.load(open(sys.argv[1]))["checks"]:
    if c["name"] == "install":
        for f in c["findings"]:
            print(f["host"], f["status"], f["message"], "| fix:", f["remedy"])' "$t/d.json"
}
is "$(doctor_install)" "mac1 ok /opt/homebrew/bin/jaccl-config ($version) | fix: None
mac2 warning /opt/homebrew/bin/jaccl-config is jaccl-config 0.0.1, not $version as here: verify refuses to start it | fix: brew upgrade jaccl-config (the same version on every host), or pass --remote-bin PATH naming one of this version" \
    "doctor install: mac1's found in /opt/homebrew/bin, mac2's other version named with the fix"
mv "$brew1/jaccl-config" "$brew1/jaccl-config.away"
is "$(doctor_install | sed -n 1p)" "mac1 warning no jaccl-config on the PATH of SSH commands, in /opt/homebrew/bin or in /usr/local/bin: verify cannot start its ranks here | fix: brew install jaccl-config on the host, or pass --remote-bin PATH to verify and launch" \
    "doctor install: none on mac1, named with the fix"
mv "$brew1/jaccl-config.away" "$brew1/jaccl-config"

# --remote-bin: the real one at a path of its own on mac2
: >"$SIM_DIR/hosts/mac2/homebrew/calls.log"
mkdir -p "$SIM_DIR/hosts/mac1/homebrew/opt" "$SIM_DIR/hosts/mac2/homebrew/opt"
cp "$brew1/jaccl-config.real" "$SIM_DIR/hosts/mac1/homebrew/opt/jc"
cp "$brew2/jaccl-config.real" "$SIM_DIR/hosts/mac2/homebrew/opt/jc"
jc verify --hostfile "$t/hf.json" --fabric tcp --remote-bin /opt/homebrew/opt/jc --json \
    </dev/null >"$t/rb.json" 2>"$t/rb.err"
is "$?" 0 "verify --remote-bin /opt/homebrew/opt/jc: exit 0" || diag "$(tail -3 "$t/rb.err")"
is "$(python3 -c 'import json,sys; print(" ".join(p["program"] for p in json.load(open(sys.argv[1]))["processes"]))' "$t/rb.json") [$(cat "$SIM_DIR/hosts/mac2/homebrew/calls.log")]" \
    "/opt/homebrew/opt/jc /opt/homebrew/opt/jc []" "... both ranks ran it, the other version was not asked"

# restore through zsh and fish: the cables' addresses are gone
jc restore --hosts mac1,mac2 --state-dir "$t/st" </dev/null >"$t/r.out" 2>"$t/r.err"
is "$?" 0 "restore on the zsh and the fish host: exit 0" || diag "$(tail -5 "$t/r.err")"
addrs >"$t/addrs2"
is "$(awk '$3 != ""' "$t/addrs2" | wc -l)" 0 "restore: no address left on the cable's ends"
done_testing
