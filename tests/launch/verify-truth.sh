#!/bin/bash
# SPDX-License-Identifier: MIT
# jaccl-config verify's per-link matrix against iperf3 on a simulated
# cluster (linux-mesh4, meshes of 3 hosts): the lx1-lx2 cable (eth1 at both
# ends) shaped by tc (tbf) to a known rate both ways, measured by iperf3
# both ways (-R) in the same test. The matrix must show lx1 -> lx2 and
# lx2 -> lx1 within 20% of iperf3, every other cell faster; --min-bw
# between the shaped cable and the others fails that cable alone, marked
# in the matrix and named in the summary.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${top_srcdir:-.}/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/launch/lib.sh"

SIM_SANITIZE=1	# also in the sanitizer build
sim_require
command -v tc >/dev/null || skip_all "tc (iproute2) missing"
command -v iperf3 >/dev/null || skip_all "iperf3 missing"
lv_up linux-mesh4 || { echo "Bail out! cannot bring the simulated cluster up"; exit 1; }
lv_address || { echo "Bail out! cannot address the cables"; exit 1; }
CFG=$(sim_ssh_config)
srv=""
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; _sim_cleanup; rm -rf "$t"' EXIT
lv_hostfile "$t/m3.json" jaccl lx1,lx2,lx3
n1=$(sim_ns lx1)
n2=$(sim_ns lx2)
a2=$(ip -n "$n2" -4 -o addr show dev eth1 | awk '{ split($4, x, "/"); print x[1]; exit }')

# well below what veth moves on a busy machine, even under ASan: both tools
# measure the shaper
ip netns exec "$n1" tc qdisc add dev eth1 root tbf rate 100mbit burst 128kb latency 100ms &&
    ip netns exec "$n2" tc qdisc add dev eth1 root tbf rate 100mbit burst 128kb latency 100ms
ok $? "lx1-lx2 shaped to 100 Mbit/s both ways" || exit 1

ip netns exec "$n2" iperf3 -s -B "$a2" -p 5201 >"$t/iperf-srv" 2>&1 &
srv=$!
for i in $(seq 1 100); do
	ip netns exec "$n2" ss -Htln 2>/dev/null | grep -q "$a2:5201" && break
	sleep 0.05
done
ip netns exec "$n1" iperf3 -c "$a2" -p 5201 -t 4 -J >"$t/ip-fwd.json" 2>"$t/ip.err" &&
    ip netns exec "$n1" iperf3 -c "$a2" -p 5201 -t 4 -R -J >"$t/ip-rev.json" 2>>"$t/ip.err"
ok $? "iperf3 measured lx1-lx2 both ways" || diag "$(cat "$t/ip.err")"
kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
srv=""
rate() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"])' "$1"; }
fwd=$(rate "$t/ip-fwd.json")
rev=$(rate "$t/ip-rev.json")
diag "iperf3 on lx1-lx2: $fwd b/s lx1->lx2, $rev b/s lx2->lx1"

jv() { timeout 120 "$JACCL_CONFIG" verify -F "$CFG" --fabric tcp --hostfile "$t/m3.json" \
    --env JACCL_VERIFY_MB=32 --env JACCL_VERIFY_MAX_MB=1 --timeout 10 "$@"; }

# matrix OUT FWD REV SLOWMARK: check the per-link matrix against iperf3
matrix() {
	python3 - "$@" <<'PY'
import re, sys
out, fwd, rev, mark = open(sys.argv[1]).read(), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rows = {}
for line in out.split("\n"):
    m = re.match(r"^  (lx\d) +(.*)$", line)
    if m and len(m[2].split()) == 3:
        rows[m[1]] = m[2].split()
names = ["lx1", "lx2", "lx3"]
assert sorted(rows) == names, rows
cell = lambda a, b: rows[a][names.index(b)]
for (a, b, want) in (("lx1", "lx2", fwd), ("lx2", "lx1", rev)):
    c = cell(a, b)
    assert c.endswith("!") == (mark == "slow"), (a, b, c)
    got = float(c.rstrip("!")) * 1e9
    print("# matrix %s -> %s: %.0f b/s (iperf3 %.0f)" % (a, b, got, want))
    assert abs(got / want - 1) <= 0.20, (a, b, got, want)
for a in names:
    for b in names:
        if a == b or {a, b} == {"lx1", "lx2"}:
            continue
        c = cell(a, b)
        assert not c.endswith("!") and float(c) * 1e9 > 1.5 * max(fwd, rev), (a, b, c)
PY
}

jv >"$t/out" 2>"$t/err"
isd "$?" 0 "no floor: exit 0" "$t/err"
matrix "$t/out" "$fwd" "$rev" ok
okd $? "no floor: lx1-lx2 within 20% of iperf3 both ways in the matrix, every other cell faster" "$t/out"

floor=$(python3 -c 'import sys; print("%.0fMb/s" % (2 * max(float(sys.argv[1]), float(sys.argv[2])) / 1e6))' "$fwd" "$rev")
jv --min-bw "$floor" >"$t/out" 2>"$t/err"
isd "$?" 7 "--min-bw $floor: exit 7" "$t/err"
matrix "$t/out" "$fwd" "$rev" slow
okd $? "--min-bw $floor: lx1-lx2 marked slow at iperf3's rate, every other cell fine" "$t/out"
grep -q '^summary: 3 hosts, 3 links, 1 failed: FAIL$' "$t/out" &&
    [ "$(grep -c '^link ' "$t/out")" = 1 ] &&
    grep -q '^link lx1:rdma_eth1 -- lx2:rdma_eth1: slow$' "$t/out"
okd $? "--min-bw $floor: the summary names lx1-lx2 alone" "$t/out"
done_testing
