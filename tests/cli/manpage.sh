#!/bin/sh
# SPDX-License-Identifier: MIT
# The man page is well formed, and it and --help name the same commands and
# the same long options.
. "${top_srcdir:-.}/tests/lib/tap.sh"
page="$top_srcdir/man/jaccl-config.1"

if command -v mandoc >/dev/null 2>&1; then
	mandoc -Tlint -W warning "$page" >"$t/lint" 2>&1
	ok $? "mandoc -Tlint finds no warning"
	[ -s "$t/lint" ] && diag "$(cat "$t/lint")"
elif command -v groff >/dev/null 2>&1; then
	groff -mdoc -ww -z "$page" >"$t/lint" 2>&1 && [ ! -s "$t/lint" ]
	ok $? "groff -ww finds no warning"
else
	skip "neither mandoc nor groff is installed"
fi

help_all "$t/help"
ok $? "--help and each command's --help exit 0"
"$JACCL_CONFIG" --help >"$t/top"
[ "$(wc -l <"$t/top")" -le 60 ]
ok $? "the top-level --help is an overview ($(wc -l <"$t/top") lines, 60 at most)"
grep -q "^A command's options: 'jaccl-config COMMAND --help'" "$t/top"
ok $? "... and says where the rest is"

sed -n '/^Commands:/,/^$/p' "$t/help" | awk 'NR > 1 && NF { print $1 }' | sort -u >"$t/help.cmds"
grep '^\.It Cm ' "$page" | awk '{ print $3 }' | sort -u >"$t/man.cmds"
diff "$t/help.cmds" "$t/man.cmds" >"$t/d1"
ok $? "the same commands in --help and the man page"
[ -s "$t/d1" ] && diag "$(cat "$t/d1")"
[ -s "$t/help.cmds" ]; ok $? "--help lists commands"

grep -o -- '--[a-z][a-z-]*' "$t/help" | sort -u >"$t/help.opts"
grep -o 'Fl -[a-z][a-z-]*' "$page" | sed 's/^Fl -/--/' | sort -u >"$t/man.opts"
diff "$t/help.opts" "$t/man.opts" >"$t/d2"
ok $? "the same long options in --help and the man page"
[ -s "$t/d2" ] && diag "$(cat "$t/d2")"

grep -o -- '^  -[a-zA-Z],' "$t/help" | tr -d ' ,' | sort -u >"$t/help.short"
grep -o 'Fl [a-zA-Z] ,' "$page" | sed 's/^Fl \(.\) ,/-\1/' | sort -u >"$t/man.short"
diff "$t/help.short" "$t/man.short" >"$t/d3"
ok $? "the same short options in --help and the man page"
[ -s "$t/d3" ] && diag "$(cat "$t/d3")"

# Every command's --help lists only options the man page documents.
for c in $(cat "$t/help.cmds"); do
	"$JACCL_CONFIG" "$c" --help >"$t/h.$c" 2>&1
	ok $? "$c --help exits 0"
done

# The exit statuses of --help (status and code) are those of the man page's
# EXIT STATUS, in the same order.
sed -n '/^Exit status:/,/^$/p' "$t/help" | awk 'NR > 1 && NF { print $1, $2 }' >"$t/help.exits"
sed -n '/^\.Sh EXIT STATUS/,/^\.Sh /p' "$page" |
    awk '/^\.It [0-9]+$/ { st = $2; next } st != "" && /^\.Ql [a-z-]+ :$/ { print st, $2; st = "" }' >"$t/man.exits"
[ "$(wc -l <"$t/help.exits")" -ge 9 ] && cmp -s "$t/help.exits" "$t/man.exits"
ok $? "the same exit statuses and codes in --help and the man page"
cmp -s "$t/help.exits" "$t/man.exits" || diag "$(diff "$t/help.exits" "$t/man.exits")"
is "$(head -3 "$t/help.exits" | paste -sd' ' -)" "0 ok 1 failed 2 usage" "0, 1 and 2 keep their meaning"
is "$(cut -d' ' -f1 "$t/help.exits" | sort -un | wc -l)" "$(wc -l <"$t/help.exits" | tr -d ' ')" \
    "every class has its own status"
done_testing
