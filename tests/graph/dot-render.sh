#!/bin/sh
# SPDX-License-Identifier: MIT
# The DOT text (mlx-compatible and extended) renders with Graphviz's dot.
. "$top_srcdir/tests/lib/tap.sh"

command -v dot >/dev/null 2>&1 || skip_all "Graphviz dot is not installed"
sample="$top_builddir/tests/graph/dot_sample"
[ -x "$sample" ] || skip_all "tests/graph/dot_sample was not built"

png_ok() { # file: non-empty PNG
	[ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]
}

for s in appendix rich; do
	for v in "" -v; do
		name="$s${v:+ extended}"
		"$sample" $s $v > "$t/g.dot" 2> "$t/err"
		ok $? "$name: DOT written"
		dot -Tpng "$t/g.dot" -o "$t/g.png" 2> "$t/dot.err"
		st=$?
		[ $st -eq 0 ] && ! grep -qi 'warning\|error' "$t/dot.err" && png_ok "$t/g.png"
		ok $? "$name: dot renders a PNG without warnings"
		[ $st -eq 0 ] || sed 's/^/# /' "$t/dot.err"
	done
done
cmp -s "$t/g.dot" /dev/null
ok $((!$?)) "extended DOT is not empty"
"$sample" appendix > "$t/a.dot"
cmp -s "$t/a.dot" "$top_srcdir/tests/graph/golden/appendix-a.dot"
ok $? "appendix A DOT is the golden (mlx's) text"
done_testing
