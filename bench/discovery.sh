#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark of discovery (not part of make check): wall time of
# `jaccl-config probe` on simulated clusters of 1, 2, 4, 8 and 16 Macs, and
# in the same run the same discovery done the way mlx.distributed_config
# does it: the ssh check and `sudo ls` in one thread per host, then one ssh
# per host per command, host after host (system_profiler, networksetup,
# ibv_devices, ipconfig getifaddr en0, and en1 when en0 has no address).
#
#   sudo bench/discovery.sh [SIZES]      (default sizes: 1 2 4 8 16)
#
# Settings: JACCL_CONFIG (default: ./jaccl-config, else _build/jaccl-config),
# RUNS (timed runs per size, the median is kept; default 3).
# Needs what the test suite's simulated cluster needs (root, netns, sshd).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
export top_srcdir
RUNS=${RUNS:-3}
sizes=${*:-1 2 4 8 16}
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$here/lib.sh"
bench_jaccl_config discovery.sh
sim_require

ours() { # the probe, all hosts at once, one round trip each
	"$JACCL_CONFIG" probe --json --hosts "$hosts" -F "$cfg" >/dev/null 2>"$t/err" ||
	    { cat "$t/err" >&2; return 1; }
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

per_host() { # per_host FUNCTION: fake commands one run of FUNCTION costs a host
	c0=$(calls)
	"$1" >/dev/null || return 1
	c1=$(calls)
	echo $(( (c1 - c0) / n ))
}

echo "# discovery wall time, median of $RUNS runs (seconds); $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg 2>/dev/null)"
printf '%6s %14s %14s %10s\n' hosts jaccl-config mlx-way speedup
first=
for n in $sizes; do
	ring "$n" >"$t/ring$n.json"
	sim_up "$t/ring$n.json" 2>"$t/up.err" || { cat "$t/up.err" >&2; exit 1; }
	hosts=$(sim_hosts)
	cfg=$(sim_ssh_config)
	ours >/dev/null || exit 1	# warm up (page cache, sshd)
	[ -n "${c_ours:-}" ] || { c_ours=$(per_host ours); c_mlx=$(per_host mlx_way); }
	a=$(timeit ours) || exit 1
	b=$(timeit mlx_way) || exit 1
	[ -n "$first" ] || first=$a
	printf '%6s %14s %14s %9sx\n' "$n" "$a" "$b" \
	    "$(python3 -c 'import sys; print(f"{float(sys.argv[2]) / float(sys.argv[1]):.1f}")' "$a" "$b")"
	eval "t_$n=$a"
	sim_down
done
echo "# fake macOS commands run per host: jaccl-config $c_ours, mlx-way $c_mlx (all hosts"
echo "# share this machine's CPUs, real Macs do not; KC_FAST=0: a python process each)"
printf '# jaccl-config: largest / smallest cluster time: %s\n' \
    "$(python3 -c 'import sys; print(f"{float(sys.argv[2]) / float(sys.argv[1]):.2f}")' "$first" "$a")"
