#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark of the configure pipeline (not part of make check), on the
# simulated 8-host ring (tests/sim/topologies/mini-ring8.json): wall time
# of `jaccl-config --dot` and of the whole hostfile run (discovery, graph,
# backend, plan, printed commands, hostfile), and, in the same run, the
# discovery done the way mlx.distributed_config does it (the ssh and sudo
# checks in one thread per host, then one ssh per host per command, host
# after host), which is what its --dot costs before any computation.
#
#   sudo bench/configure.sh [TOPOLOGY]      (default: mini-ring8)
#
# Settings: JACCL_CONFIG (default: ./jaccl-config, else _build/jaccl-config),
# RUNS (timed runs, the median is kept; default 3).
# Needs what the test suite's simulated cluster needs (root, netns, sshd).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
export top_srcdir
RUNS=${RUNS:-3}
topo=${1:-mini-ring8}
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$here/lib.sh"
bench_jaccl_config configure.sh
sim_require

dot() {
	"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" --dot > "$t/dot" 2> "$t/err" ||
	    { cat "$t/err" >&2; return 1; }
}

hostfile() {
	"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" --output-hostfile "$t/hf.json" \
	    < /dev/null > "$t/out" 2> "$t/err" || { cat "$t/err" >&2; return 1; }
}

mlx_way() { # as mlx.distributed_config (see the mlx contract, remote commands)
	s="ssh -F $cfg -o BatchMode=yes -o ConnectTimeout=5"
	for h in $(echo "$hosts" | tr ',' ' '); do
		( $s "$h" echo success >/dev/null 2>&1 && $s "$h" sudo ls >/dev/null 2>&1 ) &
	done
	wait
	for h in $(echo "$hosts" | tr ',' ' '); do
		ssh -F "$cfg" "$h" system_profiler SPThunderboltDataType -json >/dev/null </dev/null
	done
	for h in $(echo "$hosts" | tr ',' ' '); do
		ssh -F "$cfg" "$h" networksetup -listallhardwareports >/dev/null </dev/null
	done
	for h in $(echo "$hosts" | tr ',' ' '); do
		ssh -F "$cfg" "$h" ibv_devices >/dev/null </dev/null
	done
	for h in $(echo "$hosts" | tr ',' ' '); do
		ip=$(ssh -F "$cfg" "$h" ipconfig getifaddr en0 </dev/null)
		[ -n "$ip" ] || ssh -F "$cfg" "$h" ipconfig getifaddr en1 >/dev/null </dev/null
	done
}

sim_up "$topo" 2> "$t/up.err" || { cat "$t/up.err" >&2; exit 1; }
hosts=$(sim_hosts)
cfg=$(sim_ssh_config)
n=$(echo "$hosts" | tr ',' '\n' | wc -l)
dot || exit 1	# warm up (page cache, sshd)
d=$(timeit dot) || exit 1
h=$(timeit hostfile) || exit 1
m=$(timeit mlx_way) || exit 1
"$JACCL_CONFIG" check "$t/hf.json" > /dev/null || { echo "configure.sh: the hostfile fails check" >&2; exit 1; }
echo "# $topo ($n hosts), median of $RUNS runs (seconds); $(nproc) CPUs"
printf '%-40s %8s\n' "jaccl-config --dot" "$d"
printf '%-40s %8s\n' "jaccl-config --output-hostfile (all)" "$h"
printf '%-40s %8s\n' "mlx-way discovery only (sequential)" "$m"
printf '# mlx-way discovery / jaccl-config --dot: %sx\n' \
    "$(python3 -c 'import sys; print(f"{float(sys.argv[2]) / float(sys.argv[1]):.1f}")' "$d" "$m")"
