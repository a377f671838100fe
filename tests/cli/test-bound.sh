#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/lib/bounded.sh, the log compiler of every test: a test that ends
# keeps its output and status; one that hangs past the bound is stopped
# with a "Bail out!" line the TAP driver reports; either way the log ends
# with the test's wall time, a TAP comment.
. "${top_srcdir:-.}/tests/lib/tap.sh"
b=$top_srcdir/tests/lib/bounded.sh

command -v timeout >/dev/null 2>&1 || { skip "no timeout(1) here: tests run unbounded"; done_testing; exit; }
out=$(sh "$b" 60 sh -c 'echo ok 1; exit 3')
is "$?:$(echo "$out" | sed '$s/^# wall time: [0-9]* s$/# wall time/')" "3:ok 1
# wall time" "a test within its bound: its output and status, then its wall time"
out=$(sh "$b" 1 sh -c 'echo "ok 1 - started"; exec sleep 600')
st=$?
is "$st" 124 "a test that hangs: stopped at the bound (status 124)"
is "$(echo "$out" | sed '$s/^# wall time: [0-9]* s$/# wall time/')" "ok 1 - started
Bail out! the test ran over its bound of 1 s (TEST_BOUND, tests/lib/bounded.sh)
# wall time" \
    "... its output kept, then a Bail out! line naming the bound"
# a python3 that is a version manager's shim: the test gets the interpreter
d=$(mktemp -d) && mkdir "$d/shims" "$d/real" || exit 1
trap 'rm -rf "$d"' EXIT
printf '#!/bin/sh\ncase $1 in -c) echo %s/real/python3;; esac\n' "$d" >"$d/shims/python3"
printf '#!/bin/sh\necho real\n' >"$d/real/python3"
chmod +x "$d/shims/python3" "$d/real/python3"
out=$(PATH=$d/shims:$PATH sh "$b" 60 sh -c 'command -v python3')
is "$(echo "$out" | head -1)" "$d/real/python3" "python3 a shim: the interpreter it runs comes first on the test's PATH"
done_testing
