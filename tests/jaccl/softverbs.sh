#!/bin/bash
# SPDX-License-Identifier: MIT
# MLX's own JACCL (built from MLX's code by mk/jaccl.am, unchanged) over the
# userspace verbs device softverbs, each rank in its own network namespace
# joined by veth cables and started with only mlx.launch's environment:
# minimal_env, minimal_barrier and allreduce_bench -c on meshes of 2, 3
# and 4 ranks and on rings of 4 with 1 and 2 cables per neighbour, in both
# frame sizes. Results are checked against hand-computed sums and
# allreduce_bench's own check of every row. Needs root.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${top_srcdir:-.}/tests/lib/tap.sh"
RT_PREFIX="jv$$"
. "$top_srcdir/tests/rt/netns.sh"
. "$top_srcdir/tests/jaccl/lib.sh"

need_root "needs root for network namespaces"
command -v ip >/dev/null || skip_all "iproute2 missing"
jaccl_need small
jaccl_need large
ip netns add "$RT_PREFIX-probe" 2>/dev/null || skip_all "cannot create network namespaces"
ip netns del "$RT_PREFIX-probe"
trap 'rt_down; rm -rf "$t"' EXIT

# Sizes that take every path without huge buffers: 1 KiB (one frame, and a
# tail of count % N elements on 3 ranks), 16 KiB, 64 KiB and 256 KiB (the
# reduce-scatter path above 32 KiB, several frames), 1 MiB and 4 MiB (the
# largest frame class, 512 KiB, in large builds: shards of >= 512 KiB on
# 2 ranks and many pipelined frames everywhere).
BENCH_ARGS="-c -w 1 -n 1 -b 1K -e 4M -f 4"
BENCH_ROWS=7

# topo NAME: mesh2 mesh3 mesh4 ring4x1 ring4x2
topo() {
	local n c i j
	case $1 in
	mesh*)
		n=${1#mesh}
		rt_up "$n"
		for i in $(seq 0 $((n - 1))); do
			for j in $(seq $((i + 1)) $((n - 1))); do rt_cable "$i" "$j"; done
		done
		rt_matrix "$t/devs.json"
		JRING=
		;;
	ring4x*)
		c=${1#ring4x}
		rt_up 4
		for i in 0 1 2 3; do
			for j in $(seq 1 "$c"); do rt_cable "$i" $(((i + 1) % 4)); done
		done
		rt_matrix "$t/devs.json" list
		JRING=1
		;;
	esac
}

check_env() { # every rank: "Rank r of N" and the sums N, 2N, ... 10N
	local n=$rt_n r want
	want="Result: $(seq 1 10 | awk -v n="$n" '{printf "%s ", $1 * n}')"
	for r in $(seq 0 $((n - 1))); do
		grep -qx "Rank $r of $n" "$t/o$r" && grep -qxF "$want" "$t/o$r" || return 1
	done
}

check_barrier() {
	local n=$rt_n r
	for r in $(seq 0 $((n - 1))); do
		grep -qx "rank $r: post-barrier all_sum OK ($((n * (n + 1) / 2)))" "$t/o$r" ||
			return 1
	done
}

check_bench() { # rank 0's table: every size a row, every row OK
	local rows good
	rows=$(grep -cE '^[0-9]+ ' "$t/o0")
	good=$(grep -E '^[0-9]+ ' "$t/o0" | awk '$NF == "OK"' | wc -l)
	[ "$rows" = "$BENCH_ROWS" ] && [ "$good" = "$BENCH_ROWS" ] &&
		grep -q "^# Ranks: *$rt_n\$" "$t/o0" && grep -q '^# Done' "$t/o0"
}

for tp in mesh2 mesh3 mesh4 ring4x1 ring4x2; do
	topo "$tp"
	for size in small large; do
		jaccl_ranks "$size" minimal_env
		jaccl_all_zero && check_env
		ok $? "$tp, $size frames: minimal_env, every rank's all_sum right" || jaccl_show
		jaccl_ranks "$size" minimal_barrier
		jaccl_all_zero && check_barrier
		ok $? "$tp, $size frames: minimal_barrier, every rank through" || jaccl_show
		jaccl_ranks "$size" allreduce_bench $BENCH_ARGS
		jaccl_all_zero && check_bench
		ok $? "$tp, $size frames: allreduce_bench -c, every row OK on every rank" ||
			{ jaccl_show; grep -E '^[0-9]+ ' "$t/o0" | while IFS= read -r l; do diag "$l"; done; }
	done
	rt_down
done
done_testing
