#!/bin/sh
# SPDX-License-Identifier: MIT
# doctor, launch, verify and watch on stock simulated Macs (topology
# tests/doctor/topologies/stock-python.json, the stock-macs cluster with zsh
# on every stock Mac: mac1 with macOS's python3 stub and the application
# firewall on, mac2 with Apple's Python 3.9, mac3 with sudo scoped to the
# network commands, mac4 a Mac of the old kind). Every host but mac4 has a
# Homebrew python3 off PATH; mlx 0.31.0 is installed for mac3's and
# mac4's.
# - doctor uses the Python the jobs run: PATH's python3 unless it is the
#   stub, then /opt/homebrew/bin/python3 (or --python): mac1 and mac2 have
#   no mlx in theirs (each named, with its path and version asked here),
#   mac3 and mac4 the same mlx, so no "MLX differs"; with --python
#   /usr/bin/python3 mac1's and mac3's are the stub, named as such.
# - the firewall finding on mac1 names jaccl-config at its path there and
#   the jobs' Python; its fix, run on mac1, lets the other hosts reach the
#   coordinator port (the simulated firewall's rules decide, not us);
#   before it, verify from mac1 to mac2 fails and its hint names mac1 and
#   the jaccl-config there; after it, the same verify passes.
# - launch -- python3 runs Homebrew's Python where python3 is the stub;
#   --python PATH runs PATH ARGS, as mlx.launch does.
# - watch asks after its first round only what can change: from mac3's own
#   logs, no sudo at all and each static command once.
. "${top_srcdir:-.}/tests/lib/tap.sh"
. "${top_srcdir:-.}/tests/lib/sim.sh"
sim_require
sim_require_stock
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed to read the JSON reports"
SIM_STOCK=1 sim_up "$top_srcdir/tests/doctor/topologies/stock-python.json" 2>"$t/up.err" ||
    { echo "Bail out! cannot bring the stock Macs up: $(tail -3 "$t/up.err")"; exit 1; }
cfg=$(sim_ssh_config)
hosts=mac1,mac2,mac3,mac4

cat >"$t/q.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["name"]: x for x in d["checks"]}
if sys.argv[2] == "status":
    print(" ".join(f"{n}={c[n]['status']}" for n in sys.argv[3:]))
else:   # "host|status|message|remedy" of a check's findings
    for f in c[sys.argv[3]]["findings"]:
        print(f"{f['host']}|{f['status']}|{f['message']}|{f['remedy']}")
PY
doctor() {
	"$JACCL_CONFIG" doctor --json -F "$cfg" --hosts "$hosts" "$@" >"$t/out.json" 2>"$t/err"
}
findings() { python3 "$t/q.py" "$t/out.json" findings "$1"; }
on() { findings "$1" | awk -F'|' -v h="$2" '$1 == h' | cut -d'|' -f2-; }

sim_mlx mac3 0.31.0 && sim_mlx mac4 0.31.0
ok $? "mlx 0.31.0 installed for mac3's Homebrew Python and mac4's python3"
# the facts, asked here of each host's interpreters
v1=$(sim_ssh mac1 '/opt/homebrew/bin/python3 --version' </dev/null 2>&1 | sed 's/^Python //')
v2=$(sim_ssh mac2 '/usr/bin/python3 --version' </dev/null 2>&1 | sed 's/^Python //')
sim_ssh mac1 '/usr/bin/python3 --version' </dev/null >/dev/null 2>"$t/stub.err"
grep -q 'xcode-select: note: No developer tools were found' "$t/stub.err"
ok $? "mac1's /usr/bin/python3 is the stub (its own message)"
is "$v2" 3.9.6 "mac2's /usr/bin/python3 is Apple's 3.9.6"

# --- doctor: the jobs' Python -------------------------------------------
doctor
cp "$t/out.json" "$t/first.json"
is "$(on software mac1)" "error|no mlx in this Python (/opt/homebrew/bin/python3, Python $v1), where the other hosts' jobs import mlx 0.31.0|/opt/homebrew/bin/python3 -m pip install mlx==0.31.0, or name a Python that has it with --python PATH" \
    "mac1: python3 is the stub, so Homebrew's, which has no mlx"
is "$(on software mac2)" \
    "error|no mlx in this Python (/usr/bin/python3, Python 3.9.6), where the other hosts' jobs import mlx 0.31.0|install mlx==0.31.0 in the Python the jobs should run (/opt/homebrew/bin/python3 -m pip install mlx==0.31.0 after brew install python) and name it with --python /opt/homebrew/bin/python3" \
    "mac2: Apple's 3.9 on PATH, no mlx in this Python; the fix is Homebrew's Python"
is "$(on software mac3)$(on software mac4)" "" "mac3 and mac4: their Python has mlx 0.31.0, nothing to say"
findings software | grep -q 'MLX differs'
ok $((!$?)) "mlx versions compared only where mlx was found: the same"
findings software | grep -q "^None|warning|Python differs between hosts: .*mac2 3.9.6"
ok $? "Python's versions differ (mac2's 3.9.6)"

doctor --python /usr/bin/python3
is "$(on software mac1 | cut -d'|' -f1,2)" \
    "error|no Python for the jobs: /usr/bin/python3 is macOS's stub (without the Command Line Tools it only asks to install them)" \
    "--python /usr/bin/python3: mac1's is the stub, said so"
is "$(on software mac3 | cut -d'|' -f1)" "error" "... and mac3's"
is "$(on software mac2 | cut -d'|' -f2 | cut -d, -f1)" "no mlx in this Python (/usr/bin/python3" \
    "... mac2's is Apple's 3.9, without mlx"
"$JACCL_CONFIG" doctor -F "$cfg" --hosts "$hosts" --python 'python3; rm -rf x' >"$t/o" 2>"$t/e"
is "$?" 2 "--python with shell syntax: a usage error"
grep -q "jaccl-config: error: argument --python: invalid path" "$t/e"
ok $? "... that says why" || diag "$(cat "$t/e")"

# --- doctor: the firewall on mac1 names jaccl-config there --------------
cp "$t/first.json" "$t/out.json"	# the first doctor's report
is "$(on coordinator mac3 | cut -d'|' -f1)" "error" "mac1's firewall: mac3 cannot reach the coordinator"
fw=$(on firewall mac1)
is "$(echo "$fw" | cut -d'|' -f2)" \
    "the application firewall is on (State = 1): incoming connections to a program it has not allowed (jaccl-config at /opt/homebrew/bin/jaccl-config (verify's ranks), /opt/homebrew/bin/python3 (the jobs' Python)) wait for a click on this Mac" \
    "mac1's firewall: jaccl-config at its path there and the jobs' Python named"
fix=$(echo "$fw" | cut -d'|' -f3)
is "$fix" "sudo /usr/libexec/ApplicationFirewall/socketfilterfw --add /opt/homebrew/bin/jaccl-config && sudo /usr/libexec/ApplicationFirewall/socketfilterfw --unblockapp /opt/homebrew/bin/jaccl-config; sudo /usr/libexec/ApplicationFirewall/socketfilterfw --add /opt/homebrew/bin/python3 && sudo /usr/libexec/ApplicationFirewall/socketfilterfw --unblockapp /opt/homebrew/bin/python3" \
    "... with socketfilterfw --add and --unblockapp for each"
# verify mac1 -- mac2 (tcp, their cable addressed here): blocked by mac1's firewall
python3 - "$SIM_DIR/cluster.json" "$t/vhf.json" "$(sim_host_ip mac1)" "$(sim_host_ip mac2)" <<'PY' >"$t/cab"
import json, sys
c = json.load(open(sys.argv[1]))
cb = [x for x in c["cables"] if {x["a"], x["b"]} == {"mac1", "mac2"}][0]
end = {cb["a"]: cb["a_if"], cb["b"]: cb["b_if"]}
json.dump({"backend": "jaccl", "envs": [], "hosts": [
    {"ssh": "mac1", "ips": [sys.argv[3]], "rdma": [None, "rdma_" + end["mac1"]]},
    {"ssh": "mac2", "ips": [sys.argv[4]], "rdma": ["rdma_" + end["mac2"], None]}]},
    open(sys.argv[2], "w"))
print(end["mac1"], end["mac2"])
PY
read -r if1 if2 <"$t/cab"
ip -n "$(sim_ns mac1)" addr add 10.237.0.1/30 dev "$if1" && ip -n "$(sim_ns mac2)" addr add 10.237.0.2/30 dev "$if2"
ok $? "the mac1 -- mac2 cable addressed ($if1, $if2)"
# (a rank tries the coordinator for 2 x --timeout + 5 s + a link's seconds:
# 11 s here, and rank 0 waits 1.5 times that, so mac2's rank, however late
# it starts, reports the drop first; JACCL_VERIFY_MB would make a link's
# seconds 30)
jv() {
	JACCL_CONFIG_REMOTE=/opt/homebrew/bin/jaccl-config timeout 120 "$JACCL_CONFIG" verify -F "$cfg" \
	    --hostfile "$t/vhf.json" --fabric tcp --env JACCL_VERIFY_MAX_MB=1 "$@" \
	    >"$t/v.out" 2>"$t/v.err"
}
jv --timeout 2
ok $((! $?)) "verify with mac1's firewall on: fails"
grep -q "^jaccl-config: mac1: the other ranks could not reach the coordinator port here; .* let jaccl-config accept connections: sudo /usr/libexec/ApplicationFirewall/socketfilterfw --add /opt/homebrew/bin/jaccl-config && sudo /usr/libexec/ApplicationFirewall/socketfilterfw --unblockapp /opt/homebrew/bin/jaccl-config$" "$t/v.err"
ok $? "... and its hint names mac1 and the jaccl-config there" || diag "$(cat "$t/v.out" "$t/v.err")"
sim_ssh mac1 "$fix" </dev/null >"$t/fix.out" 2>&1
ok $? "the fix runs on mac1" || diag "$(cat "$t/fix.out")"
doctor
is "$(on firewall mac1)" "" "after the fix: no firewall finding on mac1"
is "$(on coordinator mac3)$(on coordinator mac4)" "" \
    "after the fix: mac3 and mac4 reach the coordinator on mac1 (the firewall's rules let it through)"
jv --timeout 10 --env JACCL_VERIFY_MB=1
is "$?" 0 "after the fix: verify mac1 -- mac2 passes" || diag "$(cat "$t/v.out" "$t/v.err" 2>&1 | tail -20)"
grep -q 'could not reach the coordinator' "$t/v.err"
ok $((!$?)) "... with no firewall hint"

# --- launch: python3 is the jobs' Python --------------------------------
python3 - "$t/hf.json" "$(sim_host_ip mac1)" "$(sim_host_ip mac3)" "$(sim_host_ip mac4)" <<'PY'
import json, sys
names = ["mac1", "mac3", "mac4"]
json.dump([{"ssh": n, "ips": [ip]} for n, ip in zip(names, sys.argv[2:])], open(sys.argv[1], "w"))
PY
"$JACCL_CONFIG" launch -F "$cfg" --hostfile "$t/hf.json" -- python3 -c \
    'import sys; print(sys.executable)' >"$t/l.out" 2>"$t/l.err"
is "$?" 0 "launch -- python3: exit 0" || diag "$(cat "$t/l.out" "$t/l.err")"
is "$(sort "$t/l.out" | paste -sd' ' -)" \
    "[0] /opt/homebrew/bin/python3 [1] /opt/homebrew/bin/python3 [2] $(sim_ssh mac4 'command -v python3' </dev/null)" \
    "Homebrew's Python where python3 is the stub (mac1, mac3), PATH's on mac4"
python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))[:2], open(sys.argv[2], "w"))' \
    "$t/hf.json" "$t/hf2.json"
"$JACCL_CONFIG" launch -F "$cfg" --hostfile "$t/hf2.json" --python /usr/bin/python3 -- \
    -c 'print(1)' >"$t/l.out" 2>"$t/l.err"
is "$?" 1 "launch --python /usr/bin/python3: the stub's exit status"
grep -Eq '^\[[01]\] xcode-select: note: No developer tools were found' "$t/l.err"
ok $? "... and its message: --python runs PATH ARGS as mlx.launch does" || diag "$(cat "$t/l.err")"

# --- watch: later rounds ask only what can change -----------------------
calls=$(sim_calls mac3)
sudolog=$SIM_DIR/hosts/mac3/sudo.log
n0=$(wc -l <"$calls")
s0=$(wc -l <"$sudolog" 2>/dev/null || echo 0)
"$JACCL_CONFIG" watch -F "$cfg" --hosts mac1,mac3 --json --interval 0.2 >"$t/w.out" 2>"$t/w.err" &
wpid=$!
# rounds seen: the fewest of the three commands every round runs at once
rounds() {
	tail -n +"$((n0 + 1))" "$calls" >"$t/wc"
	for _c in 'system_profiler SPThunderboltDataType' 'ifconfig -a' 'ibv_devinfo'; do
		grep -cE "[ /]$_c" "$t/wc"
	done | sort -n | head -1
}
for i in $(seq 1 1200); do
	[ "$(rounds)" -ge 4 ] && break
	kill -0 "$wpid" 2>/dev/null || break
	sleep 0.05
done
kill -TERM "$wpid" 2>/dev/null
wait "$wpid"
is "$?" 0 "watch: stopped by SIGTERM, exit 0"
[ "$(rounds)" -ge 4 ]
ok $? "watch: mac3 looked at $(rounds) times" || diag "$(cat "$t/w.err")"
tail -n +"$((n0 + 1))" "$calls" >"$t/wcalls"
for c in 'uname ' 'sysctl ' 'networksetup ' 'netstat ' 'rdma_ctl '; do
	is "$(grep -cE "[ /]$c" "$t/wcalls")" 1 "watch on mac3: $c run once, in the first round"
done
for c in 'ifconfig -a' 'ibv_devinfo'; do
	[ "$(grep -cE "[ /]$c" "$t/wcalls")" -ge 4 ]
	ok $? "watch on mac3: $c every round"
done
is "$(($(wc -l <"$sudolog" 2>/dev/null || echo 0) - s0))" 0 "watch: no sudo on mac3, in any round (sudo's own log)"
grep -c '"event":"snapshot"' "$t/w.out" >/dev/null
ok $? "watch printed its snapshots"
done_testing
