#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark of `jaccl-config check` on a 10 MB hostfile (not part of make
# check): CPU time (user + system, from getrusage of the child) of checking
# the 200000-host ring hostfile that tests/check/big-hostfiles.py makes,
# against the baseline of reading the same file the way MLX does
# (mlx.launch's Hostfile.from_file is json.load: `python3 -c 'import json;
# json.load(open(F))'`), measured in the same run; the median of RUNS runs
# of each, and their ratio. Several builds can be compared in one run
# (for example the one before a change and the one after it); with
# valgrind installed, also their instruction counts (callgrind), which do
# not depend on the load of the machine.
#
#   bench/check-bench.sh [JACCL_CONFIG...]
#
# Settings: RUNS (default 5), FILE (another hostfile to time), CALLGRIND=0
# to skip the instruction counts.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
if [ $# -eq 0 ]; then
	for c in ./jaccl-config "$top_srcdir/_build/jaccl-config" "$top_srcdir/jaccl-config"; do
		[ -x "$c" ] && set -- "$c" && break
	done
fi
[ $# -gt 0 ] || { echo "check-bench.sh: build jaccl-config first (or name it)" >&2; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
if [ -z "${FILE:-}" ]; then
	python3 "$top_srcdir/tests/check/big-hostfiles.py" "$t" big-ring
	FILE=$t/big-ring.json
fi
python3 - "$FILE" "${RUNS:-5}" "${CALLGRIND:-1}" "$t" "$@" <<'PY'
import os, resource, shutil, statistics, subprocess, sys

path, runs, callgrind, tmp, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3] != "0", \
    sys.argv[4], sys.argv[5:]

def cpu(argv):
    """CPU seconds (user + system) of one run of argv, from getrusage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

baseline = [sys.executable, "-c", "import json, sys; json.load(open(sys.argv[1]))", path]
commands = [("json.load (baseline)", baseline)] + \
    [("check %s" % b, [b, "check", path]) for b in builds]
times = {name: [] for name, _ in commands}
for _ in range(runs):                   # interleaved, so load changes hit all alike
    for name, argv in commands:
        times[name].append(cpu(argv))
base = statistics.median(times[commands[0][0]])
print("file: %s (%d bytes), median of %d runs, CPU time = user + system"
      % (os.path.basename(path), os.path.getsize(path), runs))
for name, _ in commands:
    m = statistics.median(times[name])
    print("  %-50s %6.3f s   %5.2fx the baseline" % (name, m, m / base if base else 0))

if callgrind and shutil.which("valgrind") and builds:
    counts = []
    for b in builds:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                        b, "check", path], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        total = None
        with open(out) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    total = int(line.split()[1])
        counts.append(total)
        os.unlink(out)
    print("instructions (callgrind):")
    for b, c in zip(builds, counts):
        rel = "   %5.2fx the first" % (c / counts[0]) if counts[0] and c else ""
        print("  %-50s %14s%s" % ("check " + b, "{:,}".format(c) if c else "?", rel))
PY
