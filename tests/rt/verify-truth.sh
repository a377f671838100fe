#!/bin/bash
# SPDX-License-Identifier: MIT
# verify-rank's figures against iperf3 on the same cables: three ranks in
# network namespaces joined by veth cables, one cable shaped by tc (tbf) to
# a known rate in both directions. iperf3 measures that cable both ways
# (-R) in the same test; verify-rank must report it within 20% of iperf3 in
# each direction, every other cable faster, and the all-links figure at most
# the shaped cable's rate times the connections it paces; --min-bw between the
# shaped cable and the others fails that cable alone. Latency is held to
# ping's round trip on the same cable within a factor (this kernel has no
# netem to add a known delay). The largest all-reduce cannot beat the
# shaped cable (in a mesh of 3 it carries 2/3 of the data each way), and
# algbw, busbw and the average follow from the times. Needs root.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${top_srcdir:-.}/tests/lib/tap.sh"
RT_PREFIX="rt$$t"
. "$top_srcdir/tests/rt/netns.sh"

need_root "needs root for network namespaces"
command -v tc >/dev/null || skip_all "tc (iproute2) missing"
command -v iperf3 >/dev/null || skip_all "iperf3 missing"
ip netns add "$RT_PREFIX-probe" 2>/dev/null || skip_all "cannot create network namespaces"
ip netns del "$RT_PREFIX-probe"
srv=""
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rt_down; rm -rf "$t"' EXIT

# well below what veth moves on a busy machine, even under ASan: both tools
# measure the shaper
RATE=100mbit
PORT=32323

run_ranks() { # run_ranks ARGS...: ranks 0..2 with only the mlx.launch environment
	local r
	for r in 0 1 2; do
		rt_exec "$r" env -i PATH="$PATH" JACCL_VERIFY_MB=32 JACCL_VERIFY_MAX_MB=4 \
		    MLX_RANK="$r" MLX_IBV_DEVICES="$t/devs.json" \
		    MLX_JACCL_COORDINATOR="$RT_MGMT.10:$PORT" \
		    timeout 120 "$JACCL_CONFIG" verify-rank --fabric tcp --timeout 10 "$@" \
		    >"$t/out$r" 2>"$t/err$r" &
		eval "pid$r=\$!"
	done
	for r in 0 1 2; do
		eval "wait \$pid$r"
		eval "st$r=\$?"
	done
}

rt_up 3; rt_cable 0 1; rt_cable 0 2; rt_cable 1 2; rt_matrix "$t/devs.json"
# cable 0-1 is en2 at both ends, 10.234.1.1 (rank 0) -- 10.234.1.2 (rank 1)
for r in 0 1; do
	rt_exec "$r" tc qdisc add dev en2 root tbf rate "$RATE" burst 128kb latency 100ms
done
rt_exec 0 tc qdisc show dev en2 | grep -q 'tbf.*rate 100Mbit'
ok $? "cable 0-1 shaped to 100 Mbit/s both ways" || exit 1
# ping's round trip on cable 1-2 (en3 at both ends, 10.234.1.9 -- .10), the
# median of 20
rtt=$(rt_exec 1 ping -n -c 20 -i 0.05 10.234.1.10 | sed -n 's/.*time=\([0-9.]*\) ms/\1/p' |
    sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
[ -n "$rtt" ]; ok $? "ping measured cable 1-2: round trip ${rtt:-?} ms"

# iperf3 on the shaped cable, rank 0 to rank 1 and back (-R)
rt_exec 1 iperf3 -s -B 10.234.1.2 -p 5201 >"$t/iperf-srv" 2>&1 &
srv=$!
for i in $(seq 1 100); do
	rt_exec 1 ss -Htln 2>/dev/null | grep -q '10.234.1.2:5201' && break
	sleep 0.05
done
rt_exec 0 iperf3 -c 10.234.1.2 -p 5201 -t 4 -J >"$t/ip-fwd.json" 2>"$t/ip-fwd.err" &&
    rt_exec 0 iperf3 -c 10.234.1.2 -p 5201 -t 4 -R -J >"$t/ip-rev.json" 2>"$t/ip-rev.err"
ok $? "iperf3 measured the shaped cable both ways" || diag "$(cat "$t/ip-fwd.err" "$t/ip-rev.err")"
kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
srv=""
fwd=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"])' "$t/ip-fwd.json")
rev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"])' "$t/ip-rev.json")
diag "iperf3 on cable 0-1: $fwd b/s 0->1, $rev b/s 1->0"

# verify-rank on the same cables
run_ranks --json
[ "$st0" = 0 ] && [ "$st1" = 0 ] && [ "$st2" = 0 ]
ok $? "verify-rank passes without a floor" || diag "$(tail -5 "$t/err0" "$t/err1" "$t/err2")"
python3 - "$t/out0" "$fwd" "$rev" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
fwd, rev = float(sys.argv[2]), float(sys.argv[3])
links = {(l["a"], l["b"]): l for l in r["links"]}
l = links[(0, 1)]
got_f, got_r = l["a_to_b"]["Gbps"] * 1e9, l["b_to_a"]["Gbps"] * 1e9
print("# verify on cable 0-1: %.0f b/s 0->1 (iperf3 %.0f), %.0f b/s 1->0 (iperf3 %.0f)" % (got_f, fwd, got_r, rev))
assert abs(got_f / fwd - 1) <= 0.20, ("0->1", got_f, fwd)
assert abs(got_r / rev - 1) <= 0.20, ("1->0", got_r, rev)
# GB/s and Gb/s say the same
assert abs(l["a_to_b"]["GBps"] * 8 - l["a_to_b"]["Gbps"]) < 1e-9 * max(1, l["a_to_b"]["Gbps"])
PY
ok $? "the shaped cable is reported within 20% of iperf3, in both directions"
python3 - "$t/out0" "$fwd" "$rev" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
top = max(float(sys.argv[2]), float(sys.argv[3]))
for l in r["links"]:
    if (l["a"], l["b"]) == (0, 1):
        continue
    for d in ("a_to_b", "b_to_a"):
        print("# verify on cable %d-%d %s: %.0f b/s" % (l["a"], l["b"], d, l[d]["Gbps"] * 1e9))
        assert l[d]["Gbps"] * 1e9 > 1.5 * top, (l["a"], l["b"], d, l[d], top)
PY
ok $? "every other cable is reported faster than the shaped one"
python3 - "$t/out0" "$fwd" "$rev" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
slow = min(float(sys.argv[2]), float(sys.argv[3]))
a = r["all_links"]
# every connection moves the same bytes in lock-step rounds: the shaped
# cable paces the 6 (3 cables x 2 directions), a busy machine may not keep
# the others up with it (half of it is the floor)
want = 6 * slow
print("# all links at once: %.0f b/s, the shaped cable paces 6 x %.0f = %.0f" % (a["Gbps"] * 1e9, slow, want))
assert a["status"] == "ok" and 0.5 <= a["Gbps"] * 1e9 / want <= 1.25, (a, want)
PY
ok $? "all links at once: at most six times the shaped cable's rate (+25%), at least half of it"
python3 - "$t/out0" "$rtt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
one_way = float(sys.argv[2]) / 2 * 1000    # microseconds
d = {(l["a"], l["b"]): l["latency_us"] for l in r["links"]}[(1, 2)]
print("# latency of cable 1-2: median %.1f us, p99 %.1f us; ping: %.1f us one way" % (d["median"], d["p99"], one_way))
# the same order of magnitude as ping (a wide band: ping sleeps between
# echoes and wakes up for each, the ping-pong spins on its socket)
assert one_way / 20 <= d["median"] <= 20 * one_way, (d, one_way)
assert all(l["latency_us"]["p99"] >= l["latency_us"]["median"] > 0 for l in r["links"]), r["links"]
PY
ok $? "latency: cable 1-2's median within a factor 20 of ping's one way, p99 above the median"
python3 - "$t/out0" "$fwd" "$rev" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
slow = min(float(sys.argv[2]), float(sys.argv[3])) / 8 / 1e9   # GB/s
a = r["allreduce"]
rows = a["rows"]
for x in rows:
    alg = x["size"] / (x["time_us"] / 1e6) / 1e9
    assert abs(x["algbw"] / alg - 1) < 1e-6 and abs(x["busbw"] / (alg * 4 / 3) - 1) < 1e-6, x
fl = [x["busbw"] for x in rows if x["type"] == "float"]
assert abs(a["avg_busbw"] - sum(fl) / len(fl)) < 1e-9 * max(1, a["avg_busbw"]), a["avg_busbw"]
big = max((x for x in rows if x["type"] == "float"), key=lambda x: x["size"])
# the shaped cable carries 2/3 of the data each way: algbw <= 1.5 x its rate
print("# all-reduce of %d bytes: algbw %.4f GB/s, the shaped cable allows %.4f" % (big["size"], big["algbw"], 1.5 * slow))
assert 0.3 * 1.5 * slow < big["algbw"] <= 1.25 * 1.5 * slow, (big, slow)
PY
ok $? "all-reduce: the largest bounded by the shaped cable, algbw and busbw from the times, the average from the rows"

# a floor between the shaped cable and the others: that cable alone is slow
floor=$(python3 -c 'import sys; print("%.0fMb/s" % (2 * max(float(sys.argv[1]), float(sys.argv[2])) / 1e6))' "$fwd" "$rev")
run_ranks --min-bw "$floor"
[ "$st0" = 1 ] && [ "$st1" = 1 ] && [ "$st2" = 1 ]
ok $? "--min-bw $floor: every rank exits 1" || diag "$(tail -5 "$t/err0")"
fails=$(grep -c '^FAIL: ' "$t/out0")
is "$fails" 1 "--min-bw $floor: one failure"
grep -Eq '^FAIL: link 0-1 \(rdma_en2/rdma_en2\) is slower than the floor' "$t/out0"
ok $? "--min-bw $floor: the failure is the shaped cable" || diag "$(grep FAIL "$t/out0")"
python3 - "$t/out0" "$fwd" "$rev" <<'PY'
import re, sys
fwd, rev = float(sys.argv[2]), float(sys.argv[3])
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"^ +(\d+) (\S+) +(\d+) (\S+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +[\d.]+ +[\d.]+  (\w+)$", line)
    if m:
        rows[(int(m[1]), int(m[3]))] = (float(m[6]) * 1e9, float(m[8]) * 1e9, m[9])
assert sorted(rows) == [(0, 1), (0, 2), (1, 2)], rows
f, b, st = rows[(0, 1)]
assert st == "slow" and abs(f / fwd - 1) <= 0.2 and abs(b / rev - 1) <= 0.2, (rows[(0, 1)], fwd, rev)
assert rows[(0, 2)][2] == "ok" and rows[(1, 2)][2] == "ok", rows
PY
ok $? "--min-bw $floor: the printed table shows the shaped cable slow at iperf3's rate, the others ok"
rt_down
done_testing
