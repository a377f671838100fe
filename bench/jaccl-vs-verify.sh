#!/bin/bash
# SPDX-License-Identifier: MIT
# verify's all-reduce against MLX's own JACCL (the baseline), on the same
# simulated cluster and the same fabric in one run: network namespaces
# joined by veth cables, the userspace verbs device softverbs under both,
# JACCL's allreduce_bench and verify-rank's all-reduce sweep one after the
# other, then both bus bandwidths side by side per size with their ratio.
# The goal: verify within 10% of JACCL from 1 MiB up, neither slower nor
# flattering, so that what verify reports is what a JACCL job will get.
# Root; not part of make check (run from a built tree).
#
# Usage: bench/jaccl-vs-verify.sh [mesh|ring] [RANKS] [small|large]
#   (default: mesh 4 small; a ring has one cable per neighbour, or
#   JVB_WIRES of them)
#   JVB_MAX_MB     largest all-reduce (default 16)
#   JVB_ITERS      allreduce_bench timed iterations (default 10)
#   JVB_ROUNDS     JACCL then verify, this many times (default 2); the best
#                  of each per size is compared (the machine is shared)
#   JACCL_CONFIG, JACCL_BUILD (built JACCL: tests/jaccl of the build tree),
#   SOFTVERBS_LIB  default to the build tree _build/
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$here/..}
kind=${1:-mesh} n=${2:-4} frames=${3:-small}
maxmb=${JVB_MAX_MB:-16} iters=${JVB_ITERS:-10} wires=${JVB_WIRES:-1}
rounds=${JVB_ROUNDS:-2}
b=$top_srcdir/_build
JC=${JACCL_CONFIG:-$b/jaccl-config}
JB=${JACCL_BUILD:-$b/tests/jaccl}
SV=${SOFTVERBS_LIB:-$b/tests/softverbs/.libs/libsoftverbs.so}
RT_PREFIX="jvb$$"
. "$top_srcdir/tests/rt/netns.sh"
. "$top_srcdir/tests/jaccl/lib.sh"
die() { echo "jaccl-vs-verify: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
[ -x "$JC" ] || die "$JC is not built"
[ -x "$JB/$frames/jaccl_allreduce_bench" ] || die "JACCL ($frames frames) is not built in $JB (make check builds it)"
[ -f "$SV" ] || die "no softverbs library at $SV"
case $kind in mesh|ring) ;; *) die "kind: mesh or ring" ;; esac
case $frames in small|large) ;; *) die "frames: small or large" ;; esac
t=$(mktemp -d)
trap 'rt_down; rm -rf "$t"' EXIT
mkdir "$t/lib" && ln -s "$SV" "$t/lib/librdma.dylib"

rt_up "$n"
if [ "$kind" = mesh ]; then
	for i in $(seq 0 $((n - 1))); do
		for j in $(seq $((i + 1)) $((n - 1))); do rt_cable "$i" "$j"; done
	done
	rt_matrix "$t/devs.json"
	ring=
else
	for i in $(seq 0 $((n - 1))); do
		for w in $(seq 1 "$wires"); do rt_cable "$i" $(((i + 1) % n)); done
	done
	rt_matrix "$t/devs.json" list
	ring=1
fi

port=34100
run() { # OUTPREFIX PROGRAM ARGS... on every rank, mlx.launch's environment
	local out=$1 r pids=""
	shift
	port=$((port + 1))
	jaccl_port=$port
	for r in $(seq 0 $((n - 1))); do
		# JACCL's coordinator: one connection at a time (tests/jaccl/lib.sh)
		[ "$r" = 0 ] || [ "$out" = "${out#jaccl}" ] || jaccl_accepted $((r - 1))
		rt_exec "$r" env -i PATH="$PATH" LD_LIBRARY_PATH="$t/lib" \
		    JACCL_IBVERBS_LIB="$SV" JACCL_VERIFY_FRAMES="$frames" \
		    JACCL_VERIFY_MB=8 JACCL_VERIFY_MAX_MB="$maxmb" \
		    MLX_RANK="$r" MLX_IBV_DEVICES="$t/devs.json" \
		    MLX_JACCL_COORDINATOR="$RT_MGMT.10:$port" ${ring:+MLX_JACCL_RING=1} \
		    timeout 900 "$@" >"$t/$out.$r" 2>"$t/$out.err.$r" &
		pids="$pids $!"
	done
	wait $pids
}

echo "== $kind of $n ranks${ring:+, $wires cable(s) per neighbour}, $frames frames, softverbs on veth"
for k in $(seq 1 "$rounds"); do
	run "jaccl$k" "$JB/$frames/jaccl_allreduce_bench" -c -w 2 -n "$iters" -b 1K -e "${maxmb}M" -f 2
	run "verify$k" "$JC" verify-rank --fabric verbs --timeout 30 --json
done
python3 - "$t" "$rounds" "$n" <<'PY'
import json, sys
d, rounds, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
jac, ver, ok = {}, {}, True
for k in range(1, rounds + 1):
    for line in open(f"{d}/jaccl{k}.0"):
        f = line.split()
        if f and f[0].isdigit():
            # from the time column: its busbw column has 2 decimals of GB/s
            size, us = int(f[0]), float(f[3])
            bw = size / us / 1e3 * 2 * (n - 1) / n
            old = jac.get(size, (0, "OK"))
            jac[size] = (max(old[0], bw), "OK" if old[1] == "OK" and f[-1] == "OK" else "FAIL")
    try:
        r = json.load(open(f"{d}/verify{k}.0"))
    except Exception as e:
        sys.exit(f"jaccl-vs-verify: verify-rank gave no report ({e})")
    ok = ok and r["ok"] and r["allreduce"]["wrong"] == 0
    for x in r["allreduce"]["rows"]:
        if x["type"] == "float":
            ver[x["size"]] = max(ver.get(x["size"], 0), x["busbw"])
print(f"{'size (B)':>12} {'JACCL busbw':>12} {'verify busbw':>13} {'verify/JACCL':>13}  check")
worst = None
for size in sorted(set(jac) & set(ver)):
    jb, chk = jac[size]
    vb = ver[size]
    ratio = vb / jb if jb > 0 else float("inf")
    if size >= 1 << 20:
        worst = ratio if worst is None or abs(ratio - 1) > abs(worst - 1) else worst
    print(f"{size:>12} {jb:>12.3f} {vb:>13.3f} {ratio:>13.2f}  {chk}")
print(f"best of {rounds} runs each; verify all right: {ok}")
if worst is not None:
    print(f"from 1 MiB up, the ratio furthest from 1: {worst:.2f} "
          f"({'within' if abs(worst - 1) <= 0.10 else 'OUTSIDE'} the 10% goal)")
PY
