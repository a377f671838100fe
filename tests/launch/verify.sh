#!/bin/bash
# SPDX-License-Identifier: MIT
# jaccl-config verify on a simulated cluster of 4 Linux hosts (full mesh,
# cable addresses set by the test): meshes of 2, 3 and 4 hosts and rings of
# 3 and 4 over the tcp fabric with the all-reduce, all-gather and send/recv
# results checked, and on a pair with two cables a ring of two wires, right
# and with a deliberately wrong all-gather named to the element; --mlx on
# hosts whose Python has no mlx, and on hosts with no Python at all; every
# side channel (tcp, ssh relayed by the launcher, file, a plugin loaded
# from a .so); verify-rank started by a script with nothing but the
# mlx.launch environment; faults named: a rank that never starts, one that
# hangs, a peer killed mid-test, a cable taken down mid-test (each exit 7),
# a host that cannot be reached (exit 3); an invalid hostfile refused; no
# process left on the hosts after any run.
# JC_TEST_ONLY="SECTION..." runs only those sections (basic, verbs, env,
# never-starts, hang, killed, cable-down, invalid, wires, mlx; see only in
# tests/lib/tap.sh).
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
# all-gather and send/recv: a row per block size (8, 8008, 65544 bytes and
# 1 MiB / n in whole words), none wrong; send/recv to rank + s for every s
# of a mesh, to both neighbours of a ring
blocks = [8, 8008, 65544, (1 << 20) // n // 8 * 8]
for key in ("allgather", "sendrecv"):
    s = r[key]
    assert s["status"] == "ok" and s["wrong"] == 0, (key, s)
    assert [x["block"] for x in s["rows"]] == blocks and all(x["wrong"] == 0 for x in s["rows"]), s
shifts = list(range(1, n)) if group == "mesh" else [1] + ([n - 1] if n > 2 else [])
assert r["sendrecv"]["shifts"] == shifts, r["sendrecv"]["shifts"]
if len(sys.argv) > 5:
    assert r["side_channel"].startswith(sys.argv[5]), r["side_channel"]
PY
}

no_leftovers() {
	local left
	left=$(lv_leftovers 'verify-rank|sleep 60[0-9]')
	is "$left" "" "$1: nothing left running on the hosts"
}

lv_hostfile "$t/m2.json" jaccl lx1,lx2
lv_hostfile "$t/m3.json" jaccl lx1,lx2,lx3
lv_hostfile "$t/m4.json" jaccl

if only basic; then
# --- meshes of 2, 3 and 4 hosts, human output then JSON
lv_hostfile "$t/m2.json" jaccl lx1,lx2
jv --hostfile "$t/m2.json" $SMALL >"$t/out" 2>"$t/err"
isd "$?" 0 "mesh of 2: exit 0" "$t/err"
grep -Eq '^  lx1 +- +[0-9.]+$' "$t/out" && grep -Eq '^  lx2 +[0-9.]+ +-$' "$t/out"
ok $? "mesh of 2: the per-link matrix by host"
grep -q 'Out of bounds values : 0 OK' "$t/out"; ok $? "mesh of 2: all-reduce results right"
grep -q '^# All-gather ' "$t/out" && grep -q '^# Send/recv ' "$t/out" &&
    [ "$(grep -c '^# Wrong values         : 0 OK$' "$t/out")" = 2 ]
ok $? "mesh of 2: all-gather and send/recv tables, no wrong value"
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
fi

if only verbs; then
# --- the verbs fabric through the launcher, on the userspace verbs device of
# the test suite: without --min-bw the RDMA floor of 50 Gb/s (6.25 GB/s)
# applies, which no simulated cable reaches; with a floor of 1 Mb/s it passes
if [ -n "${SOFTVERBS_LIB:-}" ] && [ -f "$SOFTVERBS_LIB" ]; then
	jvv() { timeout 90 "$JACCL_CONFIG" verify -F "$CFG" --fabric verbs \
	    --env JACCL_IBVERBS_LIB="$SOFTVERBS_LIB" --env JACCL_VERIFY_MB=2 --env JACCL_VERIFY_MAX_MB=1 "$@"; }
	jvv --hostfile "$t/m3.json" --json >"$t/out" 2>"$t/err"
	isd "$?" 7 "verbs, default floor: exit 7" "$t/err"
	python3 - "$t/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r.get("fabric") == "verbs" and r["ok"] is False, (r.get("fabric"), r["failures"], r["processes"][0])
assert abs(r["min_bw"]["Gbps"] - 50) < 1e-9 and abs(r["min_bw"]["GBps"] - 6.25) < 1e-9, r["min_bw"]
assert len(r["links"]) == 3 and all(l["status"] == "slow" for l in r["links"]), r["links"]
assert all(0 < l[d]["Gbps"] < 50 for l in r["links"] for d in ("a_to_b", "b_to_a"))
f = [x for x in r["failures"] if "slower than the floor of 6.25 GB/s" in x]
assert len(f) == 3, r["failures"]
assert r["allreduce"]["wrong"] == 0 and r["allreduce"]["status"] == "ok", r["allreduce"]
PY
	okd $? "verbs, default floor: every link slower than 50 Gb/s, named with the floor; results right" "$t/out"
	jvv --hostfile "$t/m3.json" --json --min-bw 1Mb/s >"$t/out" 2>"$t/err"
	isd "$?" 0 "verbs, --min-bw 1Mb/s: exit 0" "$t/err"
	check_report "$t/out" 3 mesh 3 && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["fabric"] == "verbs"' "$t/out"
	okd $? "verbs, --min-bw 1Mb/s: every link both ways over verbs, all-reduce right" "$t/out"
	no_leftovers "verbs"
else
	for i in 1 2 3 4 5; do skip "verbs: no userspace verbs device (SOFTVERBS_LIB) in this build"; done
fi
fi

if only env; then
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
fi

if only never-starts; then
# --- a rank that never starts: its host's jaccl-config path is wrong
cat >"$t/remote" <<EOS
#!/bin/sh
[ "\$1" = --version ] && exec "$JACCL_CONFIG" "\$@"
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
fi

if only hang; then
# --- a rank that hangs before joining: the others give up, it is stopped
# (rank 0 waits 1.5 x (2 x --timeout + 5 s + a cable's stream, here 1 s))
lv_hostfile "$t/m24.json" jaccl lx1,lx4
JACCL_CONFIG_REMOTE=$t/remote jv --hostfile "$t/m24.json" $SMALL --env JACCL_VERIFY_SECONDS=1 \
    --env HANG=1 --timeout 2 --json \
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
fi

if only killed; then
# --- a peer killed while the links are measured: once rank 1 streams on its
# first cable (1 TiB, bounded by 30 s: the measurement cannot end before)
: >"$t/trace"
(
	wait_event "$t/trace" '^rank 1: link 0 0-1 stream' || exit 1
	killed=0
	for q in $(ip netns pids "$(sim_ns lx2)"); do
		{ tr '\0' ' ' <"/proc/$q/cmdline"; } 2>/dev/null | grep -q '^[^ ]*jaccl-config verify-rank' &&
		    kill -9 "$q" && killed=1
	done
	[ "$killed" = 1 ]
) &
killer=$!
jv --hostfile "$t/m3.json" --env JACCL_VERIFY_MB=1048576 --env JACCL_VERIFY_TRACE="$t/trace" \
    --timeout 3 >"$t/out" 2>"$t/err"
st=$?
wait "$killer"; ok $? "a peer killed mid-test: killed once it streams on a cable" || diag "$(cat "$t/trace")"
is "$st" 7 "a peer killed mid-test: exit 7"
grep -q '^FAIL: rank 1 (lx2) was killed by SIGKILL' "$t/out"
okd $? "a peer killed mid-test: named with its host" "$t/out" "$t/err"
no_leftovers "a peer killed mid-test"
fi

if only cable-down; then
# --- a cable taken down while it is measured: once rank 0 streams on it
: >"$t/trace"
(
	wait_event "$t/trace" '^rank 0: link 0 0-1 stream' && ip -n "$(sim_ns lx1)" link set eth1 down
) &
downer=$!
jv --hostfile "$t/m2.json" --env JACCL_VERIFY_MB=1048576 --env JACCL_VERIFY_TRACE="$t/trace" \
    --timeout 3 >"$t/out" 2>"$t/err"
st=$?
wait "$downer"; ok $? "a cable down mid-test: taken down once rank 0 streams on it" || diag "$(cat "$t/trace")"
grep -q '^rank 0: link 0 0-1 failed' "$t/trace"; ok $? "a cable down mid-test: its measurement failed" || diag "$(cat "$t/trace")"
is "$st" 7 "a cable down mid-test: exit 7"
grep -Eq '^link lx1:rdma_eth1 -- lx2:rdma_eth1: down' "$t/out" ||
    grep -Eq 'rdma_eth1.*(down|no data moved)' "$t/out"
okd $? "a cable down mid-test: that link is named" "$t/out" "$t/err"
grep -q '^summary: .*FAIL$' "$t/out"; ok $? "a cable down mid-test: summary FAIL"
no_leftovers "a cable down mid-test"
ip -n "$(sim_ns lx1)" link set eth1 up
fi

if only invalid; then
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
fi

if only mlx; then
# --- --mlx where the hosts' Python has no mlx: the program really runs in
# each host's python3 and says so; MLX runs nothing more, the runtime's
# verification stands; then hosts with no Python on the way at all
lv_hostfile "$t/m2.json" jaccl lx1,lx2
jv --hostfile "$t/m2.json" $SMALL --mlx --json >"$t/out" 2>"$t/err"
isd "$?" 7 "--mlx, no mlx on the hosts: exit 7" "$t/err"
python3 - "$t/out" <<'PY'
import json, subprocess, sys
r = json.load(open(sys.argv[1]))
m = r["mlx"]
assert m["status"] == "not-installed" and m["program"] == "python" and "ops" not in m, m
assert [h["host"] for h in m["hosts"]] == ["lx1", "lx2"], m["hosts"]
for h in m["hosts"]:
    # what the interpreter says of itself, asked here (the hosts share this filesystem)
    py = h["python"]
    v = subprocess.run([py, "-c", "import platform; print(platform.python_version())"],
                       capture_output=True, text=True).stdout.strip()
    has = subprocess.run([py, "-c", "import mlx.core"], capture_output=True).returncode == 0
    assert py.startswith("/") and h["python_version"] == v and not has, (h, v, has)
    assert h["mlx"] == "none" and "No module named 'mlx'" in h["why"], h
    want = "mlx: mlx is not installed for %s's Python %s (%s): %s" % (h["host"], v, py, h["why"])
    assert want in r["failures"] and want in m["failures"], (want, r["failures"])
assert r["allreduce"]["status"] == "ok" and r["allgather"]["status"] == "ok", r["allreduce"]
PY
okd $? "--mlx, no mlx: each host's Python (path and version as it says itself) named, the runtime's checks right" "$t/out"
jv --hostfile "$t/m2.json" $SMALL --mlx >"$t/out" 2>"$t/err"
grep -Eq "^#   0 lx1: mlx is not installed \(Python [0-9.]+ at /" "$t/out" &&
    grep -q '^# MLX: not-installed$' "$t/out" && grep -q "^FAIL: mlx: mlx is not installed for lx2's Python" "$t/out"
okd $? "--mlx, no mlx: said in the table and a FAIL line per host" "$t/out"
jv --hostfile "$t/m2.json" $SMALL --mlx --env PATH=/nonexistent --json >"$t/out" 2>"$t/err"
isd "$?" 7 "--mlx, no Python at all: exit 7" "$t/err"
python3 - "$t/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m = r["mlx"]
assert m["status"] == "not-installed", m
for h in m["hosts"]:
    assert h["python"] == "none" and h["why"].startswith("no Python found: none of: /opt/homebrew/bin/python3 "), h
    assert "mlx: %s has no Python to run MLX (%s)" % (h["host"], h["why"]) in r["failures"], r["failures"]
PY
okd $? "--mlx, no Python on PATH nor in Homebrew's place: each host named with the places tried" "$t/out"
# a rank of the MLX program dies of JACCL's message for a port that is down
# (a stand-in program, JACCL_CONFIG_MLX_PROGRAM): its failure line carries
# the cause and the fix
cat >"$t/jfail.sh" <<'SH'
#!/bin/sh
if [ "$1" = check ]; then
	echo "jaccl-verify-mlx check python=/usr/bin/python3 python_version=3.11.2 mlx=0.32.4"
	exit 0
fi
if [ "$MLX_RANK" = 1 ]; then
	echo "libc++abi: terminating due to uncaught exception of type std::runtime_error: [jaccl] Couldn't allocate protection domain" >&2
	exit 1
fi
exec sleep 306
SH
chmod +x "$t/jfail.sh"
JACCL_CONFIG_MLX_PROGRAM=$t/jfail.sh jv --hostfile "$t/m2.json" $SMALL --mlx --json >"$t/out" 2>"$t/err"
isd "$?" 7 "--mlx, a rank dies of JACCL's PD message: exit 7" "$t/err"
python3 - "$t/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = [x for x in r["mlx"]["failures"] if "rank 1 (lx2) exited with code 1" in x]
assert len(f) == 1, r["mlx"]["failures"]
assert f[0].endswith("[jaccl] Couldn't allocate protection domain (JACCL: ibv_alloc_pd returned NULL: "
    "the device's port is down (PORT_DOWN): its cable is unplugged, runs at a rate without RDMA, or the "
    "Mac at its other end has RDMA disabled; fix: jaccl-config doctor --hostfile HOSTFILE (port-state, "
    "rdma-enabled))"), f[0]
PY
okd $? "--mlx, JACCL's PD failure: the rank's line names the port down and the fix" "$t/out"
no_leftovers "--mlx"
fi

if only wires; then
# --- two cables between two hosts: a jaccl-ring hostfile of two wires
if lv_up linux-pair-2cables && lv_address; then
	CFG=$(sim_ssh_config)
	lv_hostfile "$t/p2.json" jaccl-ring
	python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); assert h["hosts"][0]["rdma"][1] == ["rdma_eth1", "rdma_eth2"], h' "$t/p2.json"
	ok $? "pair with 2 cables: a jaccl-ring hostfile with both cables in each cell"
	jv --hostfile "$t/p2.json" $SMALL --json >"$t/out" 2>"$t/err"
	isd "$?" 0 "ring of 2 x 2 wires: exit 0" "$t/err"
	check_report "$t/out" 2 ring 4 && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["wires"] == 2, r["wires"]' "$t/out"
	okd $? "ring of 2 x 2 wires: both cables measured both ways (4 connections), all-reduce, all-gather and send/recv right" "$t/out"
	# the ranks run the deliberately wrong build whose all-gather sends the
	# lower half both ways (MLX #4443): verify names rank 0's first wrong
	# word, word 4096 of rank 1's 65544-byte block (element 8193 + 4096),
	# half still the fill; the word is computed by hand (call 4 of the
	# phase: 5 << 56 | rank 1 << 44 | 4096)
	if [ -x "${JACCL_CONFIG_BROKEN:-}" ]; then
		JACCL_CONFIG_REMOTE=$JACCL_CONFIG_BROKEN jv --hostfile "$t/p2.json" $SMALL \
		    --env JACCL_TEST_BREAK=allgather-half >"$t/out" 2>"$t/err"
		st=$?
		is "$st" 7 "ring of 2 x 2, a wrong all-gather: exit 7"
		grep -Eq "^FAIL: all-gather: [0-9]+ wrong values; the first: element 12289 of the 131088-byte all-gather on rank 0 \(rank 1's block, its element 4096\) is 0xffffffff00001000, not 0x0500100000001000 \(partly never written: 4 of its 8 bytes still the fill\)$" "$t/out" &&
		    grep -q '^# Wrong values         : [1-9][0-9]* FAILED$' "$t/out" &&
		    grep -q '^summary: 2 hosts, 4 links, 0 failed: FAIL$' "$t/out"
		okd $? "ring of 2 x 2, a wrong all-gather: the first wrong element, its rank and both values named" "$t/out" "$t/err"
	else
		skip "the deliberately wrong build is missing (JACCL_CONFIG_BROKEN)"
		skip "the deliberately wrong build is missing (JACCL_CONFIG_BROKEN)"
	fi
	no_leftovers "pair with 2 cables"
else
	ok 1 "pair with 2 cables: cluster up"
fi
fi

done_testing
