#!/bin/sh
# SPDX-License-Identifier: MIT
# Who may call whom, read off the objects with nm (a symbol one object
# leaves undefined and another of the two libraries defines is a call or a
# reference from the first to the second):
#   - a backend (plugins/platform-linux.o, platform-macos.o) is reached
#     only through its ops table: the only symbols of a backend that any
#     other object uses are the tables jc_platform_*. The persist file
#     helpers of Linux, which plan.c once called by name (plan.o and
#     platform-linux.o then called each other), are the Linux backend's.
#   - output.o (the messages and JSON documents) uses nothing of the
#     command table (cli.o) nor of a command (cmd_*.o): the exit-code table
#     both read is exitcode.o, below them.
. "${top_srcdir:-.}/tests/lib/tap.sh"

command -v nm >/dev/null 2>&1 || skip_all "nm (binutils) is not installed"
b=${top_builddir:-.}

# edges: "FROM TO SYMBOL" for each symbol FROM uses and TO defines
for a in "$b/src/libjaccl.a" "$b/src/cli/libjcli.a"; do
	nm -A "$a" 2>/dev/null
done | awk '
	{ split($1, p, ":"); obj = p[2] }
	NF == 3 && $2 ~ /^[TDRBC]$/ { def[$3] = obj }
	$2 == "U" { use[obj " " $3] = 1 }
	END {
		for (k in use) {
			split(k, q, " ")
			if ((q[2] in def) && def[q[2]] != q[1]) print q[1], def[q[2]], q[2]
		}
	}' | sort >"$t/edges"

[ -s "$t/edges" ]
ok $? "the two libraries' objects read with nm"
grep -q '^cmd_configure\.o output\.o ' "$t/edges"
ok $? "an edge known to exist is seen (cmd_configure.o prints through output.o)"

bad=$(awk '$2 ~ /^platform-(linux|macos)\.o$/ && $3 !~ /^jc_platform_/' "$t/edges")
is "$bad" "" "a backend's only symbol used elsewhere is its ops table"
is "$(awk '$1 == "plan.o" && $2 ~ /^platform-/ && $2 != "platform.o"' "$t/edges")" "" \
    "plan.o names no backend"
bad=$(awk '$1 == "output.o" && ($2 == "cli.o" || $2 ~ /^cmd_/)' "$t/edges")
is "$bad" "" "output.o uses nothing of cli.o or of a command"
grep -q '^output\.o exitcode\.o cli_exit_code$' "$t/edges"
ok $? "output.o takes the --json codes from exitcode.o"
done_testing
