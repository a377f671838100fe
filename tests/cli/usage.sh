#!/bin/sh
# SPDX-License-Identifier: MIT
# Command line behaviour shared with mlx.distributed_config: usage errors
# exit 2 with the usage line and the message, as argparse reports them.
. "${top_srcdir:-.}/tests/lib/tap.sh"

"$JACCL_CONFIG" --version >"$t/out"
ok $? "--version exits 0"
grep -q '^jaccl-config [0-9]' "$t/out"; ok $? "--version names the program"

"$JACCL_CONFIG" --hosts a,,b >"$t/out" 2>"$t/err"
is "$?" 2 "an empty host name is a usage error (exit 2)"
grep -q '^usage: jaccl-config' "$t/err"; ok $? "usage line printed"
grep -q 'error: Hostname cannot be empty' "$t/err"; ok $? "mlx's message for an empty host"
[ ! -s "$t/out" ]; ok $? "nothing on standard output"

"$JACCL_CONFIG" --backend mpi >"$t/out" 2>"$t/err"
is "$?" 2 "an unknown backend is a usage error"
grep -q "invalid choice: 'mpi' (choose from 'ring', 'jaccl', 'jaccl-ring')" "$t/err"
ok $? "argparse's invalid choice message"

"$JACCL_CONFIG" --over wifi >/dev/null 2>"$t/err"
is "$?" 2 "an unknown --over is a usage error"

"$JACCL_CONFIG" --env 'A B=1' >/dev/null 2>"$t/err"
is "$?" 2 "an --env key with a space is a usage error"

"$JACCL_CONFIG" --no-such-option >/dev/null 2>"$t/err"
is "$?" 2 "an unknown option is a usage error"
grep -q 'unrecognized argument' "$t/err"; ok $? "unknown option named"

"$JACCL_CONFIG" frobnicate >/dev/null 2>"$t/err"
is "$?" 2 "an unknown command is a usage error"

"$JACCL_CONFIG" --hosts 'a,b;reboot' >/dev/null 2>"$t/err"
is "$?" 2 "a host with shell syntax is refused"
grep -q "invalid host 'b;reboot'" "$t/err"; ok $? "the bad host is quoted"

"$JACCL_CONFIG" --hosts a --hosts b --starting-port 0 >/dev/null 2>"$t/err"
is "$?" 2 "port 0 is a usage error"

"$JACCL_CONFIG" check --dot x >/dev/null 2>"$t/err"
is "$?" 2 "an option of another command is refused"
done_testing
