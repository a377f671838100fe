#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's Layout block names each module of src/ and src/rt/ (a .c
# file, by its name without .c) exactly once, and names no module that is
# not there: the tree, not the README, is the source.
. "${top_srcdir:-.}/tests/lib/tap.sh"

readme=$top_srcdir/README.md
# the lines of the src/ and src/rt/ entries of the Layout block
awk '/^## Layout/ { on = 1 } on && /^```/ { n++; if (n == 2) exit; next }
	on && n == 1 && /^src\/cli\// { exit }
	on && n == 1 { print }' "$readme" >"$t/block"
[ -s "$t/block" ]
ok $? "the README has a Layout block with src/ and src/rt/"
words() { tr -c 'A-Za-z0-9_\n' '\n' <"$t/block" | grep -v '^$'; }
missing= twice=
for f in "$top_srcdir"/src/*.c "$top_srcdir"/src/rt/*.c; do
	m=$(basename "$f" .c)
	c=$(words | grep -cx "$m")
	[ "$c" -eq 0 ] && missing="$missing $m"
	[ "$c" -gt 1 ] && twice="$twice $m"
done
is "$missing" "" "every module of src/ and src/rt/ is named"
is "$twice" "" "no module is named twice"
done_testing
