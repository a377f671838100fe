# SPDX-License-Identifier: MIT
# Helpers of the benchmarks on the simulated cluster (sourced after
# tests/lib/tap.sh and tests/lib/sim.sh): the jaccl-config to measure, wall
# and CPU times of one run, medians and ratios, the ring and mesh topology generators,
# and a reset of the hosts' Thunderbolt network between setup runs.

# bench_jaccl_config NAME: set JACCL_CONFIG (./jaccl-config, else
# _build/jaccl-config, else the source tree's) unless it is set; NAME is
# the benchmark's name for the error message.
bench_jaccl_config() {
	if [ -z "${JACCL_CONFIG:-}" ] || [ ! -x "${JACCL_CONFIG:-}" ]; then
		for c in ./jaccl-config "$top_srcdir/_build/jaccl-config" "$top_srcdir/jaccl-config"; do
			[ -x "$c" ] && JACCL_CONFIG=$c && break
		done
	fi
	[ -x "${JACCL_CONFIG:-}" ] ||
	    { echo "$1: build jaccl-config first (or set JACCL_CONFIG)" >&2; exit 1; }
}

now() { python3 -c 'import time; print(time.monotonic())'; }
elapsed() { python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.3f}")' "$1" "$2"; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# ratio A B: B / A with one decimal ("-" when A is 0)
ratio() { python3 -c 'import sys; a, b = map(float, sys.argv[1:]); print(f"{b / a:.1f}" if a else "-")' "$1" "$2"; }

# measure OUT CMD...: run CMD (stdin /dev/null, stdout and stderr in OUT.out
# and OUT.err) and print "WALL USER SYS STATUS MACHINE" in seconds: the wall
# time, the CPU time of CMD's own process as wait4() reports it, its exit
# status, and the CPU time the whole machine used meanwhile (/proc/stat:
# CMD, and on the simulated cluster every host's sshd, shells and fake
# commands). jaccl-config starts no process of its own (libssh runs in its
# threads), so for it USER and SYS are its getrusage(RUSAGE_SELF) with
# every thread and no child. The python that measures starts before the
# clock and is not counted.
measure() {
	_m_out=$1
	shift
	python3 - "$_m_out" "$@" <<'PY'
import os, sys, time
out = sys.argv[1]
argv = sys.argv[2:]
fo = os.open(out + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
fe = os.open(out + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
fi = os.open(os.devnull, os.O_RDONLY)
def busy():
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (v[0] + v[1] + v[2] + v[5] + v[6]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0
c0 = busy()
t0 = time.monotonic()
pid = os.posix_spawnp(argv[0], argv, os.environ,
                      file_actions=[(os.POSIX_SPAWN_DUP2, fi, 0), (os.POSIX_SPAWN_DUP2, fo, 1),
                                    (os.POSIX_SPAWN_DUP2, fe, 2)])
_, st, ru = os.wait4(pid, 0)
t1 = time.monotonic()
c1 = busy()
print(f"{t1 - t0:.3f} {ru.ru_utime:.4f} {ru.ru_stime:.4f} {os.waitstatus_to_exitcode(st)} "
      f"{c1 - c0:.2f}")
PY
}

# timeit FUNCTION: median wall time of RUNS runs of FUNCTION, in seconds
timeit() {
	_b_ts=
	for _b_r in $(seq 1 "$RUNS"); do
		_b_a=$(now)
		"$1" || return 1
		_b_b=$(now)
		_b_ts="$_b_ts $(elapsed "$_b_a" "$_b_b")"
	done
	echo "$_b_ts" | median
}

# ring N: a topology of N Mac mini M4 Pro, a ring of TB5 cables (port 1 to
# the next host's port 2; one cable for two hosts, none for one)
ring() {
	python3 - "$1" <<'PY'
import json, sys
n = int(sys.argv[1])
hosts = [{"name": f"m{i}"} for i in range(n)]
cables = []
if n == 2:
    cables = [{"a": "m0", "a_port": 1, "b": "m1", "b_port": 2}]
elif n > 2:
    cables = [{"a": f"m{i}", "a_port": 1, "b": f"m{(i + 1) % n}", "b_port": 2} for i in range(n)]
print(json.dumps({"name": f"bench-ring{n}", "defaults": {"model": "Mac16,11"},
                  "hosts": hosts, "cables": cables}))
PY
}

# mesh N: a topology of N Mac Studio M3 Ultra (6 ports: N <= 7), every
# pair cabled once, host i's cable to its k-th other host on port k
mesh() {
	python3 - "$1" <<'PY'
import json, sys
n = int(sys.argv[1])
hosts = [{"name": f"s{i}"} for i in range(n)]
cables = []
for i in range(n):
    for j in range(i + 1, n):
        cables.append({"a": f"s{i}", "a_port": j, "b": f"s{j}", "b_port": i + 1})
print(json.dumps({"name": f"bench-mesh{n}", "defaults": {"model": "Mac15,14"},
                  "hosts": hosts, "cables": cables}))
PY
}

# calls: remote commands the fake macOS tools have run so far, all hosts,
# and each run of sudo: a kind Mac's sudo is a fake (calls.log counts it),
# a stock Mac's the real one, which logs each run to sudo.log, one line each
calls() { cat "$SIM_DIR"/hosts/*/calls.log "$SIM_DIR"/hosts/*/sudo.log 2>/dev/null | wc -l; }

# net_reset: every host of the current cluster as it came up: no IPv4
# address on a Thunderbolt interface, no route through one, bridge0 and the
# network services as the fake commands start them (their state file gone)
net_reset() {
	for _b_h in $(sim_hosts | tr , ' '); do
		_b_ns=$(sim_ns "$_b_h")
		for _b_if in $(ip -n "$_b_ns" -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
			case $_b_if in lo | en0 | eth0) continue ;; esac
			ip -n "$_b_ns" -4 addr flush dev "$_b_if" 2>/dev/null
			ip -n "$_b_ns" -4 route flush dev "$_b_if" 2>/dev/null
		done
		rm -f "$SIM_DIR/hosts/$_b_h/state.json"
	done
}
