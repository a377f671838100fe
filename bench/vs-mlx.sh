#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark against MLX itself (not part of make check): MLX's own
# mlx.distributed_config and jaccl-config on the same simulated Mac cluster
# (rings of Mac minis), in one invocation, interleaved run by run (the order
# alternates): --dot, and --auto-setup (the hosts' Thunderbolt network is
# reset before each setup run, so both tools always find the same state).
# Per size: the median wall times, their ratio (mlx / jaccl-config), the
# median CPU time of jaccl-config's own process per host, and the remote
# commands each tool runs per host (counted by the fake macOS commands),
# and the CPU time the simulated hosts used per host for our --dot (the
# machine's, less ours): with every host on this machine's few CPUs, it
# bounds how flat the times can be.
#
#   sudo bench/vs-mlx.sh [SIZES]        (default sizes: 2 4 7 16)
#
# then on full meshes of Mac Studios (MESH="7" by default, MESH="" none)
# only the commands each tool runs per host, --dot and --auto-setup.
#
# Settings: JACCL_CONFIG (default: ./jaccl-config, else _build/jaccl-config),
# MLX_DISTRIBUTED_CONFIG (default: the MLX peer's bin/mlx.distributed_config
# in ../shared/peers/mlx or ../../shared/peers/mlx of the source tree, else
# mlx.distributed_config on PATH), RUNS (timed runs of each, the median is
# kept; default 3), KC_FAST=0 (the simulator's old path: a python process
# per fake command). mlx.distributed_config reaches the hosts with the ssh
# on PATH; a wrapper first on PATH adds the cluster's -F config.
# Goals: at 7 hosts --dot at least 15x and --auto-setup at least 10x faster
# than mlx.distributed_config; jaccl-config's 16-host time at most 2x its
# 2-host time; its own CPU time at most 10 ms per host.
# Needs what the test suite's simulated cluster needs (root, netns, sshd).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
export top_srcdir
RUNS=${RUNS:-3}
sizes=${*:-2 4 7 16}
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$here/lib.sh"
bench_jaccl_config vs-mlx.sh
JACCL_CONFIG=$(cd "$(dirname "$JACCL_CONFIG")" && pwd)/$(basename "$JACCL_CONFIG")
if [ -z "${MLX_DISTRIBUTED_CONFIG:-}" ]; then
	for c in "$top_srcdir/../shared/peers/mlx/bin/mlx.distributed_config" \
	    "$top_srcdir/../../shared/peers/mlx/bin/mlx.distributed_config" \
	    "$(command -v mlx.distributed_config 2>/dev/null)"; do
		[ -n "$c" ] && [ -x "$c" ] && MLX_DISTRIBUTED_CONFIG=$c && break
	done
fi
[ -x "${MLX_DISTRIBUTED_CONFIG:-}" ] ||
    { echo "vs-mlx.sh: no mlx.distributed_config (set MLX_DISTRIBUTED_CONFIG)" >&2; exit 1; }
sim_require

mkdir -p "$t/bin"
ssh_path=$(command -v ssh)

ours_dot() { measure "$t/o" "$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" --dot; }
mlx_dot() { measure "$t/m" env PATH="$t/bin:$PATH" "$MLX_DISTRIBUTED_CONFIG" --hosts "$hosts" --dot; }
ours_setup() {
	net_reset
	rm -rf "$t/state"
	measure "$t/o" "$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" --auto-setup \
	    --state-dir "$t/state" --output-hostfile "$t/hf-ours.json"
}
mlx_setup() {
	net_reset
	measure "$t/m" env PATH="$t/bin:$PATH" "$MLX_DISTRIBUTED_CONFIG" --hosts "$hosts" \
	    --auto-setup --output-hostfile "$t/hf-mlx.json"
}

# one FUNCTION: run it once, fail loudly unless it exits 0; prints its line
one() {
	_l=$("$1") || return 1
	set -- "$1" $_l
	if [ "$5" != 0 ]; then
		echo "vs-mlx.sh: $1 exited $5:" >&2
		cat "$t/o.err" "$t/m.err" >&2
		return 1
	fi
	echo "$2 $3 $4 $6"
}

# per_host FUNCTION: fake commands one run of FUNCTION costs a host
per_host() {
	_c0=$(calls)
	one "$1" >/dev/null || return 1
	_c1=$(calls)
	echo $(((_c1 - _c0) / n))
}

echo "# jaccl-config against mlx.distributed_config on simulated Mac mini rings, median of $RUNS"
echo "# interleaved runs (seconds); $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)," \
    "fake commands: $([ "${KC_FAST:-1}" = 1 ] && echo fast path || echo python path)"
printf '%5s %9s %9s %7s %9s %9s %7s %8s %8s %9s %13s %13s\n' hosts dot-ours dot-mlx ratio \
    setup-ours setup-mlx ratio cpu/host cpu/host sim-cpu "cmds/host dot" "cmds/host set"
printf '%5s %9s %9s %7s %9s %9s %7s %8s %8s %9s %13s %13s\n' "" "" "" "" "" "" "" "dot ms" \
    "setup ms" "/host ms" "ours/mlx" "ours/mlx"
status=0
for n in $sizes; do
	ring "$n" >"$t/ring$n.json"
	sim_up "$t/ring$n.json" 2>"$t/up.err" || { cat "$t/up.err" >&2; exit 1; }
	hosts=$(sim_hosts)
	cfg=$(sim_ssh_config)
	printf '#!/bin/sh\nexec "%s" -F "%s" "$@"\n' "$ssh_path" "$cfg" >"$t/bin/ssh"
	chmod 755 "$t/bin/ssh"
	# warm up (page cache, sshd), then the commands per host of one run each
	one ours_dot >/dev/null && one mlx_dot >/dev/null || exit 1
	cd_o=$(per_host ours_dot) && cd_m=$(per_host mlx_dot) &&
	    cs_o=$(per_host ours_setup) && cs_m=$(per_host mlx_setup) || exit 1
	do_w= dm_w= so_w= sm_w= do_c= so_c= do_h=
	for r in $(seq 1 "$RUNS"); do
		if [ $((r % 2)) = 1 ]; then
			a=$(one ours_dot) && b=$(one mlx_dot) || exit 1
			c=$(one ours_setup) && d=$(one mlx_setup) || exit 1
		else
			b=$(one mlx_dot) && a=$(one ours_dot) || exit 1
			d=$(one mlx_setup) && c=$(one ours_setup) || exit 1
		fi
		set -- $a $b $c $d
		do_w="$do_w $1" dm_w="$dm_w $5" so_w="$so_w $9" sm_w="$sm_w ${13}"
		do_c="$do_c $(python3 -c 'import sys; print(f"{(float(sys.argv[1]) + float(sys.argv[2])) * 1000 / int(sys.argv[3]):.2f}")' "$2" "$3" "$n")"
		so_c="$so_c $(python3 -c 'import sys; print(f"{(float(sys.argv[1]) + float(sys.argv[2])) * 1000 / int(sys.argv[3]):.2f}")' "${10}" "${11}" "$n")"
		# what the simulated hosts used for it: the machine's CPU time
		# during ours, less ours
		do_h="$do_h $(python3 -c 'import sys; print(f"{(float(sys.argv[1]) - float(sys.argv[2]) - float(sys.argv[3])) * 1000 / int(sys.argv[4]):.0f}")' "$4" "$2" "$3" "$n")"
	done
	d_o=$(echo "$do_w" | median) d_m=$(echo "$dm_w" | median)
	s_o=$(echo "$so_w" | median) s_m=$(echo "$sm_w" | median)
	h_o=$(echo "$do_h" | median)
	printf '%5s %9s %9s %6sx %9s %9s %6sx %8s %8s %9s %13s %13s\n' "$n" "$d_o" "$d_m" \
	    "$(ratio "$d_o" "$d_m")" "$s_o" "$s_m" "$(ratio "$s_o" "$s_m")" \
	    "$(echo "$do_c" | median)" "$(echo "$so_c" | median)" "$h_o" "$cd_o/$cd_m" "$cs_o/$cs_m"
	eval "dot_$n=$d_o set_$n=$s_o simcpu_$n=$h_o"
	eval "dotr_$n=$(ratio "$d_o" "$d_m") setr_$n=$(ratio "$s_o" "$s_m")"
	eval "cpu_$n=\"$do_c $so_c\""
	sim_down
done

# full meshes of Mac Studios (MESH, default 7; "" for none): the commands
# each tool runs per host, --dot and --auto-setup, one run each
mesh_cmds=
for n in ${MESH-7}; do
	mesh "$n" >"$t/mesh$n.json"
	sim_up "$t/mesh$n.json" 2>"$t/up.err" || { cat "$t/up.err" >&2; exit 1; }
	hosts=$(sim_hosts)
	cfg=$(sim_ssh_config)
	printf '#!/bin/sh\nexec "%s" -F "%s" "$@"\n' "$ssh_path" "$cfg" >"$t/bin/ssh"
	chmod 755 "$t/bin/ssh"
	cd_o=$(per_host ours_dot) && cd_m=$(per_host mlx_dot) &&
	    cs_o=$(per_host ours_setup) && cs_m=$(per_host mlx_setup) || exit 1
	mesh_cmds="$mesh_cmds
# mesh of $n: commands per host, --dot ours/mlx $cd_o/$cd_m, --auto-setup ours/mlx $cs_o/$cs_m"
	eval "meshset_o_$n=$cs_o meshset_m_$n=$cs_m"
	sim_down
done
[ -n "$mesh_cmds" ] && echo "${mesh_cmds#?}"

# the goals, for the sizes that ran
goal() { # goal DESCRIPTION PYTHON-CONDITION
	if python3 -c "import sys; sys.exit(0 if ($2) else 1)"; then
		echo "# goal met:    $1"
	else
		echo "# goal missed: $1"
		status=1
	fi
}
case " $sizes " in *" 7 "*)
	goal "--dot at 7 hosts >= 15x faster than mlx (${dotr_7}x)" "$dotr_7 >= 15"
	goal "--auto-setup at 7 hosts >= 10x faster than mlx (${setr_7}x)" "$setr_7 >= 10" ;;
esac
case " $sizes " in *" 2 "*" 16 "*)
	goal "16-host --dot at most 2x the 2-host --dot ($dot_16 s / $dot_2 s)" "$dot_16 <= 2 * $dot_2"
	goal "16-host --auto-setup at most 2x the 2-host one ($set_16 s / $set_2 s)" \
	    "$set_16 <= 2 * $set_2"
	# what the machine cannot go below: the CPU the 16 simulated hosts
	# themselves used for one --dot (sshd, shells, fake commands), shared
	# by this machine's CPUs, where real Macs would each use their own
	echo "# bound: 16 simulated hosts x $simcpu_16 ms of CPU for one --dot / $(nproc) CPUs =" \
	    "$(python3 -c 'import sys; print(f"{16 * float(sys.argv[1]) / 1000 / int(sys.argv[2]):.3f}")' \
	    "$simcpu_16" "$(nproc)") s of wall at the least (2x the 2-host --dot: $(python3 -c \
	    'import sys; print(f"{2 * float(sys.argv[1]):.3f}")' "$dot_2") s)" ;;
esac
worst=0
for n in $sizes; do
	eval "v=\$cpu_$n"
	for x in $v; do
		worst=$(python3 -c 'import sys; print(max(float(sys.argv[1]), float(sys.argv[2])))' "$worst" "$x")
	done
done
goal "jaccl-config's own CPU time at most 10 ms per host (worst run: $worst ms)" "$worst <= 10"
for n in ${MESH-7}; do
	eval "o=\$meshset_o_$n m=\$meshset_m_$n"
	goal "--auto-setup on a mesh of $n: no more macOS commands per host than mlx ($o / $m)" \
	    "$o <= $m"
done
exit $status
