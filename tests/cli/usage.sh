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

for bad in 10.0.0.0/33 10.0.0.1/24 10.0.0/24 10.0.0.0/31; do
	"$JACCL_CONFIG" --subnet "$bad" >"$t/out" 2>"$t/err"
	is "$?" 2 "--subnet $bad is a usage error"
	grep -q "error: argument --subnet: '$bad'" "$t/err"; ok $? "--subnet $bad: the range quoted"
done
"$JACCL_CONFIG" --over ethernet --subnet 10.254.0.0/16 >/dev/null 2>"$t/err"
is "$?" 2 "--subnet with --over ethernet (no cable to number) is a usage error"

"$JACCL_CONFIG" frobnicate >/dev/null 2>"$t/err"
is "$?" 2 "an unknown command is a usage error"

"$JACCL_CONFIG" --hosts 'a,b;reboot' >/dev/null 2>"$t/err"
is "$?" 2 "a host with shell syntax is refused"
grep -q "invalid host 'b;reboot'" "$t/err"; ok $? "the bad host is quoted"

"$JACCL_CONFIG" --hosts a --hosts b --starting-port 0 >/dev/null 2>"$t/err"
is "$?" 2 "port 0 is a usage error"

"$JACCL_CONFIG" check --dot x >/dev/null 2>"$t/err"
is "$?" 2 "an option of another command is refused"

# every kind of option the table declares, parsed from the table alone
a=$top_srcdir/tests/configure/appendix-a
"$JACCL_CONFIG" --connect-timeout 0 >/dev/null 2>"$t/err"
is "$?" 2 "seconds: 0 is a usage error"
grep -qx "jaccl-config: error: argument --connect-timeout: invalid value: '0'" "$t/err"
ok $? "seconds: the option and the value named"
"$JACCL_CONFIG" launch --connections-per-ip 0 -- true >/dev/null 2>"$t/err"
is "$?" 2 "number: 0 connections is a usage error"
grep -qx "jaccl-config: error: argument --connections-per-ip: Number should be positive: '0'" "$t/err"
ok $? "number: mlx.launch's message"
"$JACCL_CONFIG" verify --hostfile x --fabric ib >/dev/null 2>"$t/err"
grep -q "argument --fabric: invalid choice: 'ib' (choose from 'verbs', 'tcp')" "$t/err"
ok $? "choice: the values listed"
"$JACCL_CONFIG" check -p 40000 --json "$top_srcdir/tests/check/hostfiles/auto-jaccl-ring.json" >"$t/out" 2>/dev/null
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["coordinator"].endswith(":40000")' "$t/out"
ok $? "a short option with its value (-p 40000)"
"$JACCL_CONFIG" --from "$a" --env B=2 --env A=1 --json >"$t/out" 2>/dev/null </dev/null
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["hostfile"]["envs"] == ["B=2", "A=1"]' "$t/out"
ok $? "a repeated option keeps every value, in order"
"$JACCL_CONFIG" --from "$a" --no-auto-setup --auto-setup >/dev/null 2>"$t/err" </dev/null
is "$?" 1 "the last of --no-auto-setup --auto-setup wins (setup refused on a bundle)"
"$JACCL_CONFIG" --from "$a" --auto-setup --no-auto-setup >/dev/null 2>"$t/err" </dev/null
is "$?" 0 "the last of --auto-setup --no-auto-setup wins (commands printed)"
# --remote-bin: a name that would reach the hosts' shell is checked first
for bad in 'rel/jaccl-config' 'jaccl config' '$(reboot)' '/opt/../x'; do
	"$JACCL_CONFIG" verify --hostfile x --remote-bin "$bad" >/dev/null 2>"$t/err"
	is "$?" 2 "verify --remote-bin '$bad' is a usage error"
done
grep -q "argument --remote-bin: '/opt/../x' is neither an absolute path nor a program name" "$t/err"
ok $? "--remote-bin: the name quoted"
JACCL_CONFIG_REMOTE='a b' "$JACCL_CONFIG" verify --hostfile x >/dev/null 2>"$t/err"
grep -q "JACCL_CONFIG_REMOTE: 'a b' is neither" "$t/err"
ok $? "JACCL_CONFIG_REMOTE is checked the same way, and named"
"$JACCL_CONFIG" launch --hosts a --remote-bin /x -- python3 >/dev/null 2>"$t/err"
is "$?" 2 "launch --remote-bin with a command that is not jaccl-config is a usage error"
"$JACCL_CONFIG" --hosts a --remote-bin /x >/dev/null 2>"$t/err" </dev/null
is "$?" 2 "configure --remote-bin without --verify is a usage error"
done_testing
