#!/bin/sh
# SPDX-License-Identifier: MIT
# bounded.sh SECONDS PROGRAM [ARG...]: the log compiler of every test. Runs
# the test with a bound on its wall time (coreutils' timeout, where there is
# one), so that a test that hangs fails, named, with a line its log shows,
# instead of holding the whole suite: on the bound the test gets SIGTERM,
# 30 s later SIGKILL, and the TAP driver reads "Bail out!". The test's wall
# time ends its log, as a TAP comment ("# wall time: N s").
#
# A python3 on PATH that is a version manager's shim (pyenv's, asdf's: a
# shell script that runs a dozen others before the interpreter, on every
# call) is replaced by the interpreter it runs, for the test and its
# children: the tests call python3 hundreds of times.
s=$1
shift
py=$(command -v python3 2>/dev/null) || py=
case $py in
*/shims/python3)
	real=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || real=
	case $real in
	/*/python3*) [ -x "$real" ] && PATH=${real%/*}:$PATH && export PATH ;;
	esac
	;;
esac
command -v timeout >/dev/null 2>&1 || exec "$@"
t0=$(date +%s)
timeout -k 30 "$s" "$@"
r=$?
if [ "$r" -eq 124 ] || [ "$r" -eq 137 ]; then
	echo "Bail out! the test ran over its bound of $s s (TEST_BOUND, tests/lib/bounded.sh)"
fi
echo "# wall time: $(($(date +%s) - t0)) s"
exit "$r"
