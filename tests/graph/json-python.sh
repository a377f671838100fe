#!/bin/sh
# SPDX-License-Identifier: MIT
# The hostfile serialiser writes the bytes of Python's
# json.dumps(obj, indent=4): checked on the golden hostfiles and on JSON
# cases with escapes, non-ASCII text and empty containers.
. "$top_srcdir/tests/lib/tap.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
redump="$top_builddir/tests/graph/json_redump"
[ -x "$redump" ] || skip_all "tests/graph/json_redump was not built"

for f in "$top_srcdir"/tests/graph/json-cases/*.json "$top_srcdir"/tests/graph/golden/*.json; do
	name=${f#"$top_srcdir"/tests/graph/}
	python3 -c 'import json, sys
sys.stdout.write(json.dumps(json.load(open(sys.argv[1], encoding="utf-8")), indent=4))' "$f" > "$t/want"
	"$redump" "$f" > "$t/got"
	cmp -s "$t/got" "$t/want"
	st=$?
	ok $st "$name: same bytes as Python's json.dumps(indent=4)"
	[ $st -eq 0 ] && continue
	diff "$t/want" "$t/got" | head -20 | sed 's/^/# /'
done
case "$(cat "$top_srcdir/tests/graph/golden/appendix-a-jaccl.json")" in
*'}') ok 0 "golden hostfile ends without a newline, as json.dump" ;;
*) ok 1 "golden hostfile ends without a newline, as json.dump" ;;
esac
done_testing
