#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, garbage: 3 minis, mini2's system_profiler prints noise.
#
# Where we differ on purpose: MLX parses the output unchecked and stops with
# a Python traceback; we exit 1 with one message that names the host and
# the command whose output is not JSON. MLX cannot produce that message, so
# tests/configure/expected keeps the golden files of this bundle.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start garbage
for b in dot auto; do
	if [ $b = dot ]; then
		mlx_dot
		m=$t/m-dot j=$t/j-dot
	else
		mlx_backend auto
		m=$t/m-auto j=$t/j-auto
	fi
	[ "$(cat "$m.st")" != 0 ] && grep -q '^Traceback' "$m.err" && grep -q 'JSONDecodeError' "$m.err"
	ok $? "garbage $b: MLX stops with a Python traceback (JSONDecodeError)"
	[ "$(cat "$j.st")" = 1 ] && ! grep -q Traceback "$j.err" &&
	    grep -q '^jaccl-config: mini2: error: system_profiler-SPThunderboltDataType.json: not valid JSON' "$j.err"
	ok $? "garbage $b: we exit 1 naming mini2 and the output that is not JSON"
	[ $? = 0 ] || _mx_show "$j.err"
done
is "$(ls "$t"/m-auto.json "$t"/j-auto.json 2>/dev/null)" "" "garbage: neither writes a hostfile"
mlx_done
done_testing
