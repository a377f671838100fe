#!/bin/sh
# SPDX-License-Identifier: MIT
# Every golden hostfile the writer produces passes `jaccl-config check`,
# except ethernet.json, which lacks an IP for one host on purpose and must
# be rejected for it.
. "$top_srcdir/tests/lib/tap.sh"

[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
"$JACCL_CONFIG" check --help >/dev/null 2>&1 || skip_all "this build has no check command"

for f in "$top_srcdir"/tests/graph/golden/*.json; do
	name=${f##*/}
	"$JACCL_CONFIG" check "$f" > "$t/out" 2> "$t/err"
	st=$?
	if [ "$name" = ethernet.json ]; then
		[ $st -ne 0 ] && grep -q 'no IP is listed for mac3' "$t/err"
		res=$?
		ok $res "$name: rejected, mac3 has no IP"
	else
		[ $st -eq 0 ] && grep -q ': valid$' "$t/out"
		res=$?
		ok $res "$name: valid for jaccl-config check"
	fi
	[ $res -eq 0 ] || sed 's/^/# /' "$t/out" "$t/err"
done
done_testing
