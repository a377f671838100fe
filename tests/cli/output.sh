#!/bin/sh
# SPDX-License-Identifier: MIT
# The one output path: every command's standard output goes through it, so
# a write that fails (a full disk, a reader that went away) fails the
# command with a message, whatever the command. The expected texts are the
# C library's own strerror(3) words for ENOSPC and EPIPE, read from Python.
. "${top_srcdir:-.}/tests/lib/tap.sh"

hf=$top_srcdir/tests/check/hostfiles/auto-jaccl-ring.json
a=$top_srcdir/tests/configure/appendix-a
b=$top_srcdir/tests/doctor/bundles/configured
enospc=$(python3 -c 'import errno, os; print(os.strerror(errno.ENOSPC))')
epipe=$(python3 -c 'import errno, os; print(os.strerror(errno.EPIPE))')

# each command, as it succeeds on a working standard output
set -- \
    "check" "check $hf" \
    "check --json" "check --json $hf" \
    "configure" "--from $a" \
    "configure --json" "--from $a --json" \
    "configure --dot" "--from $a --dot" \
    "probe" "probe --from $b" \
    "probe --json" "probe --from $b --json" \
    "doctor --json" "doctor --from $b --json" \
    "--help" "--help"

# run NAME ARGS: exit 0 on a normal standard output (the baseline)
while [ $# -gt 0 ]; do
	name=$1 args=$2
	shift 2
	# shellcheck disable=SC2086
	"$JACCL_CONFIG" $args >"$t/out" 2>"$t/err" </dev/null
	is "$?" 0 "$name: exit 0 when standard output works"

	if [ -w /dev/full ]; then
		# shellcheck disable=SC2086
		"$JACCL_CONFIG" $args >/dev/full 2>"$t/err" </dev/null
		is "$?" 1 "$name: a full disk fails the command (exit 1)"
		grep -qx "jaccl-config: error: cannot write to standard output: $enospc" "$t/err"
		ok $? "$name: and says why"
	else
		skip "/dev/full is not available"
		skip "/dev/full is not available"
	fi

	# a pipe whose reader has already gone: every write gets EPIPE
	# shellcheck disable=SC2086
	python3 - "$JACCL_CONFIG" $args >"$t/pipe" 2>&1 <<'EOT'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=w,
                   stderr=subprocess.PIPE)
os.close(w)
print(p.returncode)
sys.stdout.write(p.stderr.decode(errors="replace"))
EOT
	is "$(head -n 1 "$t/pipe")" 1 "$name: a closed pipe fails the command (exit 1)"
	grep -qx "jaccl-config: error: cannot write to standard output: $epipe" "$t/pipe"
	ok $? "$name: and says why"
done
done_testing
