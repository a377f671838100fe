#!/bin/bash
# SPDX-License-Identifier: MIT
# Benchmarks of the built-in runtime's tcp fabric on veth cables (root;
# not part of make check). In one run:
#  1. one cable between two namespaces: iperf3 (one stream, 3 s) against
#     verify-rank's per-link bandwidth on the same cable; goal ratio >= 0.9;
#  2. a 4-rank ring (jaccl-ring, one cable per neighbour): all-reduce busbw
#     at the largest size against the mean per-link bandwidth; goal >= 0.8.
# Usage: bench/rt-bench.sh [path/to/jaccl-config]
#   RT_BENCH_MB      per-link volume of verify-rank (default 2048)
#   RT_BENCH_MAX_MB  largest all-reduce (default 256)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$here/..}
JC=${1:-${JACCL_CONFIG:-$top_srcdir/_build/jaccl-config}}
MB=${RT_BENCH_MB:-2048}
MAXMB=${RT_BENCH_MAX_MB:-256}
RT_PREFIX="rtb$$"
. "$top_srcdir/tests/rt/netns.sh"
[ "$(id -u)" = 0 ] || { echo "rt-bench: needs root" >&2; exit 1; }
command -v iperf3 >/dev/null || { echo "rt-bench: needs iperf3" >&2; exit 1; }
[ -x "$JC" ] || { echo "rt-bench: $JC is not built" >&2; exit 1; }
t=$(mktemp -d)
trap 'rt_down; rm -rf "$t"' EXIT

run_ranks() { # N [ring] -- ARGS
	local n=$1 ring=$2 r pids=""
	shift 2
	for r in $(seq 0 $((n - 1))); do
		rt_exec "$r" env -i PATH="$PATH" JACCL_VERIFY_MB="$MB" \
		    JACCL_VERIFY_MAX_MB="$MAXMB" MLX_RANK="$r" \
		    MLX_IBV_DEVICES="$t/devs.json" MLX_JACCL_COORDINATOR="$RT_MGMT.10:32323" \
		    ${ring:+MLX_JACCL_RING=1} timeout 600 "$JC" verify-rank --fabric tcp \
		    --timeout 20 --json "$@" >"$t/out$r" 2>"$t/err$r" &
		pids="$pids $!"
	done
	wait $pids
}

echo "== 1. one veth cable: iperf3 vs verify-rank"
rt_up 2
rt_cable 0 1
rt_matrix "$t/devs.json"
rt_exec 1 iperf3 -s -1 -B 10.234.1.2 -p 5201 >/dev/null 2>&1 &
sleep 1
rt_exec 0 iperf3 -c 10.234.1.2 -B 10.234.1.1 -p 5201 -t 3 -J >"$t/iperf.json" 2>/dev/null
wait
run_ranks 2 "" 
python3 - "$t/iperf.json" "$t/out0" <<'PY'
import json, sys
ip = json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8e9
r = json.load(open(sys.argv[2]))
l = r["links"][0]
ab, ba = l["a_to_b"]["GBps"], l["b_to_a"]["GBps"]
print(f"iperf3 (1 stream, 3 s):      {ip:7.2f} GB/s ({ip*8:6.1f} Gb/s)")
print(f"verify-rank rank 0 -> 1:     {ab:7.2f} GB/s ({ab*8:6.1f} Gb/s)  ratio {ab/ip:.2f} (goal >= 0.9)")
print(f"verify-rank rank 1 -> 0:     {ba:7.2f} GB/s ({ba*8:6.1f} Gb/s)  ratio {ba/ip:.2f}")
print(f"latency p50 / p99:           {l['latency_us']['median']:.1f} / {l['latency_us']['p99']:.1f} us")
PY
rt_down

echo "== 2. ring of 4 (jaccl-ring): all-reduce busbw vs per-link bandwidth"
rt_up 4
for i in 0 1 2 3; do rt_cable "$i" $(( (i + 1) % 4 )); done
rt_matrix "$t/devs.json" list
run_ranks 4 ring
python3 - "$t/out0" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
links = [l for l in r["links"] if l["status"] == "ok"]
link = sum(min(l["a_to_b"]["GBps"], l["b_to_a"]["GBps"]) for l in links) / max(len(links), 1)
rows = [x for x in r["allreduce"]["rows"] if x["type"] == "float"]
print(f"{'size':>12} {'time(us)':>10} {'algbw':>8} {'busbw':>8}")
for x in rows:
    print(f"{x['size']:>12} {x['time_us']:>10.1f} {x['algbw']:>8.2f} {x['busbw']:>8.2f}")
big = rows[-1]
print(f"per-link (mean of min direction): {link:.2f} GB/s; all links at once: {r['all_links'].get('GBps', 0):.2f} GB/s")
print(f"busbw at {big['size']>>20} MiB: {big['busbw']:.2f} GB/s  ratio {big['busbw']/link:.2f} (goal >= 0.8)  wrong={r['allreduce']['wrong']}")
PY
