#!/bin/bash
# SPDX-License-Identifier: MIT
# jaccl-config verify on a simulated cluster of 4 Linux hosts (full mesh,
# cable addresses set by the test): meshes of 2, 3 and 4 hosts and rings of
# 3 and 4 over the tcp fabric with the all-reduce results checked; every
# side channel (tcp, ssh relayed by the launcher, file, a plugin loaded
# from a .so); verify-rank started by a script with nothing but the
# mlx.launch environment; faults named: a rank that never starts, one that
# hangs, a peer killed mid-test, a cable taken down mid-test (each exit 7),
# a host that cannot be reached (exit 3); an invalid hostfile refused; no
# process left on the hosts after any run.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${top_srcdir:-.}/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/launch/lib.sh"

sim_require
lv_up linux-mesh4 || { echo "Bail out! cannot bring the simulated cluster up"; exit 1; }
lv_address || { echo "Bail out! cannot address the cables"; exit 1; }
CFG=$(sim_ssh_config)
# small volumes: this is about behaviour, not bandwidth
SMALL="--env JACCL_VERIFY_MB=1 --env JACCL_VERIFY_MAX_MB=1"
# every run is bounded: a hang is a failure, not a stuck test
jv() { timeout 90 "$JACCL_CONFIG" verify -F "$CFG" --fabric tcp "$@"; }

# check_report FILE RANKS GROUP LINKS [SC]: a passing --json report
check_report() {
	python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n, group, links = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
assert r["ok"] is True, r.get("failures")
assert r["ranks"] == n and r["group"] == group, (r["ranks"], r["group"])
assert len(r["hosts"]) == n and len(r["processes"]) == n
assert all(p["state"] == "exited" and p["status"] == 0 for p in r["processes"]), r["processes"]
assert len(r["links"]) == links and all(l["status"] == "ok" for l in r["links"])
assert all(l["a_to_b"]["Gbps"] > 0 and l["b_to_a"]["Gbps"] > 0 for l in r["links"])
assert r["all_links"]["status"] == "ok"
ar = r["allreduce"]
assert ar["wrong"] == 0 and len(ar["rows"]) > 0 and all(x["wrong"] == 0 for x in ar["rows"])
assert r["failures"] == []
if len(sys.argv) > 5:
    assert r["side_channel"].startswith(sys.argv[5]), r["side_channel"]
PY
}

no_leftovers() {
	local left
	left=$(lv_leftovers 'verify-rank|sleep 60[0-9]')
	is "$left" "" "$1: nothing left running on the hosts"
}

# --- meshes of 2, 3 and 4 hosts, human output then JSON
lv_hostfile "$t/m2.json" jaccl lx1,lx2
jv --hostfile "$t/m2.json" $SMALL >"$t/out" 2>"$t/err"
isd "$?" 0 "mesh of 2: exit 0" "$t/err"
grep -Eq '^  lx1 +- +[0-9.]+$' "$t/out" && grep -Eq '^  lx2 +[0-9.]+ +-$' "$t/out"
ok $? "mesh of 2: the per-link matrix by host"
grep -q 'Out of bounds values : 0 OK' "$t/out"; ok $? "mesh of 2: all-reduce results right"
grep -q '^summary: 2 hosts, 1 links, 0 failed: PASS$' "$t/out"; ok $? "mesh of 2: summary"
no_leftovers "mesh of 2"

lv_hostfile "$t/m3.json" jaccl lx1,lx2,lx3
jv --hostfile "$t/m3.json" $SMALL --json >"$t/out" 2>"$t/err"
isd "$?" 0 "mesh of 3: exit 0" "$t/err"
check_report "$t/out" 3 mesh 3 tcp; ok $? "mesh of 3: every link both ways, all-reduce right"

lv_hostfile "$t/m4.json" jaccl
jv --hostfile "$t/m4.json" $SMALL --json >"$t/out" 2>"$t/err"
isd "$?" 0 "mesh of 4: exit 0" "$t/err"
check_report "$t/out" 4 mesh 6; ok $? "mesh of 4: 6 links, all-reduce right"

# --- rings (jaccl-ring hostfiles, neighbours only)
lv_hostfile "$t/r3.json" jaccl-ring lx1,lx2,lx3
jv --hostfile "$t/r3.json" $SMALL --json >"$t/out" 2>"$t/err"
isd "$?" 0 "ring of 3: exit 0" "$t/err"
check_report "$t/out" 3 ring 3; ok $? "ring of 3: every link, all-reduce right"

lv_hostfile "$t/r4.json" jaccl-ring lx1,lx2,lx4,lx3
jv --hostfile "$t/r4.json" $SMALL --json >"$t/out" 2>"$t/err"
isd "$?" 0 "ring of 4: exit 0" "$t/err"
check_report "$t/out" 4 ring 4; ok $? "ring of 4: every link, all-reduce right"
no_leftovers "rings"

# --- side channels: ssh (relayed), file (shared folder), a plugin
jv --hostfile "$t/m2.json" $SMALL --json --side-channel ssh >"$t/out" 2>"$t/err"
isd "$?" 0 "ssh side channel: exit 0" "$t/err"
check_report "$t/out" 2 mesh 1 ssh; ok $? "ssh side channel: report right"
jv --hostfile "$t/m2.json" $SMALL --json --side-channel file >"$t/out" 2>"$t/err"
isd "$?" 0 "file side channel: exit 0" "$t/err"
check_report "$t/out" 2 mesh 1 file; ok $? "file side channel: report right"
plugin=$top_builddir/tests/rt/.libs/sidechan-file.so
if [ -f "$plugin" ]; then
	mkdir "$t/scdir"
	jv --hostfile "$t/m2.json" $SMALL --json --side-channel "$plugin=$t/scdir" \
	    >"$t/out" 2>"$t/err"
	isd "$?" 0 "plugin side channel: exit 0" "$t/err"
	check_report "$t/out" 2 mesh 1 "$plugin"; ok $? "plugin side channel: report right"
else
	skip "the test plugin is not built ($plugin)"
	skip "the test plugin is not built"
fi
no_leftovers "side channels"

# --- verify-rank from a script that sets nothing but mlx.launch's environment
python3 -c 'import json, sys; print(json.dumps([h["rdma"] for h in json.load(open(sys.argv[1]))["hosts"]]))' \
    "$t/m2.json" >"$t/devs.json"
coord=$(sim_host_ip lx1):32400
for r in 0 1; do
	sim_exec "lx$((r + 1))" env -i PATH="$PATH" JACCL_VERIFY_MB=1 JACCL_VERIFY_MAX_MB=1 \
	    MLX_RANK=$r MLX_IBV_DEVICES="$t/devs.json" MLX_JACCL_COORDINATOR="$coord" \
	    timeout 80 "$JACCL_CONFIG" verify-rank --fabric tcp --timeout 20 --json \
	    >"$t/vr$r.out" 2>"$t/vr$r.err" &
	eval "vr$r=\$!"
done
wait "$vr0"; s0=$?
wait "$vr1"; s1=$?
[ "$s0" = 0 ] && [ "$s1" = 0 ] &&
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["ok"] and len(r["links"]) == 1' \
    "$t/vr0.out"
st=$?
ok $st "verify-rank with only the mlx.launch environment: both ranks pass"
[ $st = 0 ] || diag "status $s0 $s1" "$(cat "$t/vr0.err" "$t/vr1.err" | tail -20)"

# --- a rank that never starts: its host's jaccl-config path is wrong
cat >"$t/remote" <<EOS
#!/bin/sh
case \$(hostname) in
lx3) exec /nonexistent/jaccl-config "\$@" ;;
lx4) [ -n "\${HANG:-}" ] && exec sleep 601 ;;
esac
exec "$JACCL_CONFIG" "\$@"
EOS
chmod +x "$t/remote"
JACCL_CONFIG_REMOTE=$t/remote jv --hostfile "$t/m3.json" $SMALL --timeout 3 >"$t/out" 2>"$t/err"
is "$?" 7 "a rank that never starts: exit 7 (verification failed)"
grep -q '^FAIL: rank 2 (lx3) exited with code 127' "$t/out"
okd $? "a rank that never starts: named with its host" "$t/out" "$t/err"
no_leftovers "a rank that never starts"

# --- a rank that hangs before joining: the others give up, it is stopped
lv_hostfile "$t/m24.json" jaccl lx1,lx4
JACCL_CONFIG_REMOTE=$t/remote jv --hostfile "$t/m24.json" $SMALL --env HANG=1 --timeout 2 --json \
    >"$t/out" 2>"$t/err"
is "$?" 7 "a rank that hangs: exit 7"
python3 - "$t/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is False
assert any("rank 0 (lx1)" in f and "exited with code 1" in f for f in r["failures"]), r["failures"]
assert r["processes"][1]["host"] == "lx4" and r["processes"][1]["state"] == "stopped", r["processes"]
assert any("missing: rank 1" in x for x in r["processes"][0]["stderr_tail"]), r["processes"][0]
PY
ok $? "a rank that hangs: rank 0 names the missing rank, the hung one is stopped"
no_leftovers "a rank that hangs"

# --- a peer killed while the links are measured
(
	for i in $(seq 1 200); do
		p=$(for q in $(ip netns pids "$(sim_ns lx2)"); do
			{ tr '\0' ' ' <"/proc/$q/cmdline"; } 2>/dev/null | grep -q 'verify-rank' && echo "$q"
		done)
		[ -n "$p" ] && { sleep 1; kill -9 $p; break; }
		sleep 0.05
	done
) &
killer=$!
jv --hostfile "$t/m3.json" --env JACCL_VERIFY_MB=4096 --timeout 3 >"$t/out" 2>"$t/err"
st=$?
wait "$killer"
is "$st" 7 "a peer killed mid-test: exit 7"
grep -q '^FAIL: rank 1 (lx2) was killed by SIGKILL' "$t/out"
okd $? "a peer killed mid-test: named with its host" "$t/out" "$t/err"
no_leftovers "a peer killed mid-test"

# --- a cable taken down while it is measured: once the cable's own TCP
# connection is up (the group is built), whatever the machine's load
(
	ns=$(sim_ns lx1)
	a=$(ip -n "$ns" -4 -o addr show dev eth1 | awk '{ split($4, x, "/"); print x[1]; exit }')
	for i in $(seq 1 600); do
		if ip netns exec "$ns" ss -Htn state established 2>/dev/null | grep -q " $a:"; then
			sleep 0.5
			ip -n "$ns" link set eth1 down
			break
		fi
		sleep 0.05
	done
) &
downer=$!
jv --hostfile "$t/m2.json" --env JACCL_VERIFY_MB=4096 --timeout 3 >"$t/out" 2>"$t/err"
st=$?
wait "$downer"
is "$st" 7 "a cable down mid-test: exit 7"
grep -Eq '^link lx1:rdma_eth1 -- lx2:rdma_eth1: down' "$t/out" ||
    grep -Eq 'rdma_eth1.*(down|no data moved)' "$t/out"
okd $? "a cable down mid-test: that link is named" "$t/out" "$t/err"
grep -q '^summary: .*FAIL$' "$t/out"; ok $? "a cable down mid-test: summary FAIL"
no_leftovers "a cable down mid-test"
ip -n "$(sim_ns lx1)" link set eth1 up

# --- an invalid hostfile is refused with its problems, nothing starts
python3 - "$t/m3.json" "$t/bad.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
h["hosts"][1]["rdma"][0] = None
json.dump(h, open(sys.argv[2], "w"))
PY
jv --hostfile "$t/bad.json" >"$t/out" 2>"$t/err"
is "$?" 1 "invalid hostfile: exit 1"
grep -q 'not a valid hostfile' "$t/err" && grep -q 'lx2' "$t/err"
okd $? "invalid hostfile: its problems are printed" "$t/err"

# --- a host that cannot be reached: its own exit status, and code in --json
python3 - "$t/m2.json" "$t/gone.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
h["hosts"][1]["ssh"] = "nosuchhost.invalid"
json.dump(h, open(sys.argv[2], "w"))
PY
jv --hostfile "$t/gone.json" $SMALL --connect-timeout 2 --json >"$t/out" 2>"$t/err"
is "$?" 3 "a host that cannot be reached: exit 3"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["code"] == "unreachable", r.get("code")
assert r["processes"][1]["state"] == "unreachable", r["processes"]
' "$t/out"
okd $? "a host that cannot be reached: --json names it, code unreachable" "$t/out" "$t/err"
no_leftovers "a host that cannot be reached"

jv >/dev/null 2>&1
is "$?" 2 "no --hostfile: usage error"
jv --hostfile "$t/m2.json" --min-bw fast >/dev/null 2>&1
is "$?" 2 "bad --min-bw: usage error"

done_testing
