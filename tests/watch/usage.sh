#!/bin/sh
# SPDX-License-Identifier: MIT
# watch's command line: bad values are usage errors (status 2) that name
# the option, before any host is contacted.
. "${top_srcdir:-.}/tests/lib/tap.sh"

w() { "$JACCL_CONFIG" watch --hosts 192.0.2.1 --connect-timeout 1 "$@" >"$t/out" 2>"$t/err"; }

w --until-event bogus
is "$?" 2 "--until-event with an unknown kind: exit 2"
grep -q "argument --until-event: unknown event 'bogus'" "$t/err"
ok $? "the error names the option and the kind" || diag "$(cat "$t/err")"
w --until-event unplugged,nope
is "$?" 2 "one unknown kind in a list: exit 2"
w --until-event ''
is "$?" 2 "an empty --until-event: exit 2"
w --interval 0
is "$?" 2 "--interval 0: exit 2"
grep -q "argument --interval" "$t/err"
ok $? "naming --interval"
w --count 0
is "$?" 2 "--count 0: exit 2"
w --max-reconnects 0
is "$?" 2 "--max-reconnects 0: exit 2"
w extra
is "$?" 2 "a positional argument: exit 2"
grep -q "unrecognized arguments: extra" "$t/err"
ok $? "named as unrecognized"
w --from /nonexistent
is "$?" 2 "--from (a bundle cannot be watched): exit 2"
is "$(cat "$t/out")" "" "nothing on standard output for any of them"
"$JACCL_CONFIG" watch --help >"$t/out" 2>&1
is "$?" 0 "watch --help: exit 0"
for o in --interval --count --until-event --max-reconnects --json --hosts --hostfile; do
	grep -q -- "$o" "$t/out"
	ok $? "watch --help lists $o"
done
done_testing
