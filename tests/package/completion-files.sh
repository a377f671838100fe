#!/bin/sh
# SPDX-License-Identifier: MIT
# The zsh and fish completions the build generates: valid for their shell
# (when it is installed), and they name every command and every long option
# that --help lists; fish's own completion engine offers the values of
# --backend and each command's options.
. "${top_srcdir:-.}/tests/lib/tap.sh"
zsh_f=${top_builddir:-.}/completions/zsh/_jaccl-config
fish_f=${top_builddir:-.}/completions/fish/jaccl-config.fish
[ -f "$zsh_f" ] && [ -f "$fish_f" ] || skip_all "the completions were not generated (make all)"

help_all "$t/help" || exit 1
sed -n '/^Commands:/,/^$/p' "$t/help" | awk 'NR > 1 && NF { print $1 }' | sort >"$t/cmds"
awk '$1 ~ /^-[a-zA-Z],$/ { print $2 } $1 ~ /^--[a-z]/ { print $1 }' "$t/help" | sort -u >"$t/opts"
[ -s "$t/cmds" ] && [ -s "$t/opts" ]
ok $? "--help lists commands and options"

"$JACCL_CONFIG" completion tcsh >"$t/out" 2>"$t/err"
is "$?" 2 "completion for a shell it does not know: usage error"
grep -q 'expected one of bash, zsh, fish' "$t/err"; ok $? "... naming the shells it knows"

head -1 "$zsh_f" | grep -qx '#compdef jaccl-config'
ok $? "zsh: the file starts with #compdef jaccl-config"
for f in "$zsh_f" "$fish_f"; do
	miss=
	for c in $(cat "$t/cmds"); do
		grep -q -- "[' ]$c[': ]" "$f" || miss="$miss $c"
	done
	for o in $(cat "$t/opts"); do
		n=${o#--}
		grep -q -- "$o\\|-l $n\\b" "$f" || miss="$miss $o"
	done
	is "$miss" "" "$(basename "$f"): every command and long option of --help"
done

if command -v zsh >/dev/null 2>&1; then
	zsh -n "$zsh_f"
	ok $? "zsh -n accepts the zsh completion"
else
	skip "zsh is not installed"
fi
if command -v fish >/dev/null 2>&1; then
	fish -n "$fish_f"
	ok $? "fish -n accepts the fish completion"
	got=$(HOME=$t fish -c "source '$fish_f'; complete -C 'jaccl-config --backend '" | cut -f1 | sort | paste -sd' ' -)
	is "$got" "jaccl jaccl-ring ring" "fish: --backend offers the three backends"
	got=$(HOME=$t fish -c "source '$fish_f'; complete -C 'jaccl-config check --'" | cut -f1 | sort | paste -sd' ' -)
	is "$got" "--backend --help --json --starting-port --verbose --version" "fish: check's long options"
	got=$(HOME=$t fish -c "source '$fish_f'; complete -C 'jaccl-config '" | cut -f1 | sort)
	is "$got" "$(cat "$t/cmds")" "fish: the commands"
else
	skip "fish is not installed"
fi
done_testing
