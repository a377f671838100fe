#!/bin/sh
# SPDX-License-Identifier: MIT
# bounded.sh SECONDS PROGRAM [ARG...]: the log compiler of every test. Runs
# the test with a bound on its wall time (coreutils' timeout, where there is
# one), so that a test that hangs fails, named, with a line its log shows,
# instead of holding the whole suite: on the bound the test gets SIGTERM,
# 30 s later SIGKILL, and the TAP driver reads "Bail out!".
s=$1
shift
command -v timeout >/dev/null 2>&1 || exec "$@"
timeout -k 30 "$s" "$@"
r=$?
if [ "$r" -eq 124 ] || [ "$r" -eq 137 ]; then
	echo "Bail out! the test ran over its bound of $s s (TEST_BOUND, tests/lib/bounded.sh)"
fi
exit "$r"
