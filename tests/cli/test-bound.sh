#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/lib/bounded.sh, the log compiler of every test: a test that ends
# keeps its output and status; one that hangs past the bound is stopped
# with a "Bail out!" line the TAP driver reports.
. "${top_srcdir:-.}/tests/lib/tap.sh"
b=$top_srcdir/tests/lib/bounded.sh

out=$(sh "$b" 60 sh -c 'echo ok 1; exit 3')
is "$?:$out" "3:ok 1" "a test within its bound: its output and status"
command -v timeout >/dev/null 2>&1 || { skip "no timeout(1) here: tests run unbounded"; done_testing; exit; }
out=$(sh "$b" 1 sh -c 'echo "ok 1 - started"; exec sleep 600')
st=$?
is "$st" 124 "a test that hangs: stopped at the bound (status 124)"
is "$out" "ok 1 - started
Bail out! the test ran over its bound of 1 s (TEST_BOUND, tests/lib/bounded.sh)" \
    "... its output kept, then a Bail out! line naming the bound"
done_testing
