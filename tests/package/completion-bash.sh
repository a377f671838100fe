#!/bin/sh
# SPDX-License-Identifier: MIT
# The bash completion the build generates, driven the way bash drives it
# (COMP_WORDS, COMP_CWORD, then the function), offers what --help lists:
# the commands, each command's options, the values of --backend, --over,
# --fabric and --side-channel, files and directories where an option takes
# one, and the Host names of ~/.ssh/config (or of -F FILE) for --hosts.
. "${top_srcdir:-.}/tests/lib/tap.sh"
script=${top_builddir:-.}/completions/bash/jaccl-config
[ -f "$script" ] || skip_all "the bash completion was not generated (make all)"
command -v bash >/dev/null 2>&1 || skip_all "bash is not installed"
script=$(cd "$(dirname "$script")" && pwd)/$(basename "$script")

# comp CWORD WORD...: the completions, one a line, sorted
comp() {
	HOME=$t/home bash -c '
		. "$1" || exit 1
		shift
		COMP_CWORD=$1
		shift
		COMP_WORDS=("$@")
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_jaccl_config jaccl-config "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		for w in "${COMPREPLY[@]}"; do printf "%s\n" "$w"; done' sh "$script" "$@" 2>"$t/comp.err" | sort
}
lines() { tr ' ' '\n' | sed '/^$/d' | sort; }

bash -n "$script"
ok $? "the script is valid bash"

# the commands: first column of --help's Commands section
help_all "$t/help" || exit 1
sed -n '/^Commands:/,/^$/p' "$t/help" | awk 'NR > 1 && NF { print $1 }' | sort >"$t/want"
comp 1 jaccl-config "" >"$t/got"
[ -s "$t/want" ] && cmp -s "$t/want" "$t/got"
ok $? "the commands are those of --help"
cmp -s "$t/want" "$t/got" || diag "$(diff "$t/want" "$t/got")"
is "$(comp 1 jaccl-config ver | paste -sd' ' -)" "verify verify-rank" "a command by its prefix"
is "$(comp 1 jaccl-config completion)" "" "the hidden build helper is not offered"

# each command's options: the -x and --name of its own --help
for c in $(cat "$t/want"); do
	"$JACCL_CONFIG" "$c" --help >"$t/h.$c" 2>&1
	if [ "$c" = configure ]; then
		sed -n '/^Options of configure/,/^$/p; /^Common options:/,/^$/p' "$t/h.$c" >"$t/sec"
	else
		cp "$t/h.$c" "$t/sec"
	fi
	awk '$1 ~ /^-[a-zA-Z],$/ { sub(",", "", $1); print $1; print $2 }
	    $1 ~ /^--[a-z]/ { print $1 }' "$t/sec" | sort -u >"$t/want.$c"
	comp 2 jaccl-config "$c" - >"$t/got.$c"
	[ -s "$t/want.$c" ] && cmp -s "$t/want.$c" "$t/got.$c"
	ok $? "$c: the options of '$c --help'"
	cmp -s "$t/want.$c" "$t/got.$c" || diag "$(diff "$t/want.$c" "$t/got.$c")"
done
comp 1 jaccl-config --a >"$t/got"
grep -qx -- --auto-setup "$t/got" && grep -qx -- --accept-new "$t/got" && [ "$(wc -l <"$t/got")" -eq 2 ]
ok $? "without a command, configure's options"

# option values: the words of the argument name --help shows
for o in backend over fabric side-channel; do
	want=$(grep -o -- "--$o [a-z|A-Z-]*" "$t/help" | head -1 | sed 's/^[^ ]* //' |
	    tr '|' '\n' | grep -v '^[A-Z]' | sort | paste -sd' ' -)
	mkdir -p "$t/empty" && cd "$t/empty" || exit 1
	got=$(comp 2 jaccl-config --$o "" | paste -sd' ' -)
	cd - >/dev/null || exit 1
	[ -n "$want" ]
	is "$got" "$want" "--$o offers $want"
done
is "$(comp 3 jaccl-config verify --fabric t)" "tcp" "verify --fabric t: tcp"
is "$(comp 3 jaccl-config --backend = jaccl- )" "jaccl-ring" "--backend=jaccl-: jaccl-ring"
is "$(comp 3 jaccl-config --over = )" "$(printf 'ethernet\nthunderbolt')" "--over=: both values"

# files and directories
mkdir -p "$t/w/bundles/mesh" "$t/w/hf.d" && : >"$t/w/hf.json" && : >"$t/w/hosts.txt"
cd "$t/w" || exit 1
is "$(comp 2 jaccl-config --hostfile h | paste -sd' ' -)" "hf.d hf.json hosts.txt" "--hostfile completes files"
is "$(comp 2 jaccl-config --output-hostfile hf. | paste -sd' ' -)" "hf.d hf.json" "--output-hostfile completes files"
is "$(comp 2 jaccl-config --from "" | paste -sd' ' -)" "bundles hf.d" "--from completes directories only"
is "$(comp 2 jaccl-config --from bundles/ )" "bundles/mesh" "--from completes inside a directory"
is "$(comp 2 jaccl-config check hf.j)" "hf.json" "check HOSTFILE completes files"
is "$(comp 2 jaccl-config --side-channel h)" "$(printf 'hf.d\nhf.json\nhosts.txt')" "--side-channel PATH completes files too"
cd - >/dev/null || exit 1

# --hosts: the Host lines of ~/.ssh/config, patterns left out
mkdir -p "$t/home/.ssh"
printf 'Host mac1 mac2\n  User admin\nHost *.lan !mac3 mini?\n  Port 22\nhost studio\nHost *\n' >"$t/home/.ssh/config"
printf 'Host other1\n' >"$t/other.conf"
is "$(comp 2 jaccl-config --hosts "" | paste -sd' ' -)" "mac1 mac2 studio" "--hosts: Host names of ~/.ssh/config"
is "$(comp 2 jaccl-config --hosts mac1,m | paste -sd' ' -)" "mac1,mac1 mac1,mac2" "--hosts: the name after the last comma"
is "$(comp 3 jaccl-config probe --hosts s)" "studio" "probe --hosts"
is "$(comp 4 jaccl-config -F "$t/other.conf" --hosts "")" "other1" "--hosts with -F FILE: that file's hosts"

# after launch's --: the command to run
comp 4 jaccl-config launch -- bas >"$t/got"
grep -qx bash "$t/got"
ok $? "launch -- completes a command name"
# free-text values complete nothing
is "$(comp 2 jaccl-config --connect-timeout "")" "" "--connect-timeout offers nothing"
done_testing
