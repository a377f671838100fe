#!/bin/sh
# SPDX-License-Identifier: MIT
# The zsh completion the build generates, driven through zsh's own
# completion system: an interactive zsh on a pseudo-terminal (zsh/zpty)
# with the generated file first in $fpath types a command line and TAB;
# compadd is wrapped to write down every match offered. They must be what
# --help lists: the commands, each command's options, option values, the
# Host names of ~/.ssh/config for --hosts, directories for --from.
. "${top_srcdir:-.}/tests/lib/tap.sh"
fn=${top_builddir:-.}/completions/zsh/_jaccl-config
[ -f "$fn" ] || skip_all "the zsh completion was not generated (make all)"
command -v zsh >/dev/null 2>&1 || skip_all "zsh is not installed"
zsh -f -c 'zmodload zsh/zpty' 2>/dev/null || skip_all "zsh has no zpty module"
mkdir -p "$t/fn" "$t/home/.ssh" "$t/w/bundles/mesh" && cp "$fn" "$t/fn/" && : >"$t/w/hf.json" || exit 1
printf 'Host mac1 mac2\nHost *.lan\nHost studio\n' >"$t/home/.ssh/config"

cat >"$t/setup.zsh" <<'EOS'
PROMPT='' RPROMPT=''
fpath=($CAPDIR $fpath)
autoload -Uz compinit
compinit -u -D
compadd() {
	local -a __h
	builtin compadd -O __h "$@"
	(( $#__h )) && print -rl -- $__h >> $CAPFILE
	builtin compadd "$@"
}
bindkey '^I' complete-word
# say when a completion has finished (the driver waits for it)
_capture_pre() { comppostfuncs+=(_capture_post) }
_capture_post() { print -n "__COMP""LETED__" > /dev/tty }
compprefuncs=(_capture_pre)
print __REA''DY__
EOS
cat >"$t/drive.zsh" <<'EOS'
# drive.zsh LINE: type LINE then TAB in an interactive zsh; the matches
# land in $CAPFILE, zsh's own messages in $CAPFILE.tty
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "source ${(q)SETUP}"
zpty -r -m z line '*__READY__*' || exit 1
zpty -w -n z "$1"$'\t'
zpty -r -m z line '*__COMPLETED__*' || exit 1
print -r -- "$line" >> $CAPFILE.tty
zpty -d z
EOS

# comp LINE: the matches offered after LINE, sorted
comp() {
	: >"$t/cap"
	: >"$t/cap.tty"
	(cd "$t/w" && HOME=$t/home CAPDIR=$t/fn CAPFILE=$t/cap SETUP=$t/setup.zsh \
	    timeout 60 zsh -f "$t/drive.zsh" "$1")
	sort -u "$t/cap"
}

"$JACCL_CONFIG" --help >"$t/help" || exit 1
sed -n '/^Commands:/,/^$/p' "$t/help" | awk 'NR > 1 && NF { print $1 }' | sort >"$t/cmds"
comp 'jaccl-config ' >"$t/got"
[ -s "$t/cmds" ] && cmp -s "$t/cmds" "$t/got"
ok $? "zsh: the commands are those of --help"
cmp -s "$t/cmds" "$t/got" || diag "$(diff "$t/cmds" "$t/got")" "$(tail -5 "$t/cap.tty")"
grep -q 'comparguments\|_arguments:' "$t/cap.tty" && diag "$(grep '_arguments' "$t/cap.tty")"

for c in $(cat "$t/cmds"); do
	"$JACCL_CONFIG" "$c" --help >"$t/h.$c" 2>&1
	if [ "$c" = configure ]; then
		sed -n '/^Options of configure/,/^$/p; /^Common options:/,/^$/p' "$t/h.$c" >"$t/sec"
	else
		cp "$t/h.$c" "$t/sec"
	fi
	awk '$1 ~ /^--[a-z]/ { print $1 } $1 ~ /^-[a-zA-Z],$/ { print $2 }' "$t/sec" | sort -u >"$t/want.$c"
	comp "jaccl-config $c --" >"$t/got.$c"
	[ -s "$t/want.$c" ] && cmp -s "$t/want.$c" "$t/got.$c"
	ok $? "zsh: $c: the long options of '$c --help'"
	cmp -s "$t/want.$c" "$t/got.$c" || diag "$(diff "$t/want.$c" "$t/got.$c")" "$(grep -a 'rror\|_arguments' "$t/cap.tty")"
done

is "$(comp 'jaccl-config --backend ' | paste -sd' ' -)" "jaccl jaccl-ring ring" "zsh: --backend values"
is "$(comp 'jaccl-config verify --fabric ' | paste -sd' ' -)" "tcp verbs" "zsh: verify --fabric values"
is "$(comp 'jaccl-config --over=' | paste -sd' ' -)" "ethernet thunderbolt" "zsh: --over= values"
comp 'jaccl-config --side-channel h' >"$t/got"
grep -qx hf.json "$t/got" && ! grep -q tcp "$t/got"
ok $? "zsh: --side-channel PATH completes files too"
is "$(comp 'jaccl-config --side-channel t' | paste -sd' ' -)" "tcp" "zsh: --side-channel t: tcp"
is "$(comp 'jaccl-config --hosts ' | paste -sd' ' -)" "mac1 mac2 studio" "zsh: --hosts: Host names of ~/.ssh/config"
is "$(comp 'jaccl-config --from ' | grep -c hf.json)" "0" "zsh: --from offers no plain file"
comp 'jaccl-config --from ' | grep -q '^bundles'
ok $? "zsh: --from offers directories"
done_testing
