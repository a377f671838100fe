#!/bin/sh
# SPDX-License-Identifier: MIT
# The package's build-time test (debian/rules exports JC_IN_PACKAGE_BUILD)
# runs only the tests that need neither root nor a network: a test that
# would start namespaces, sshd or servers skips whole, saying why, even
# when the package is built as root.
. "${top_srcdir:-.}/tests/lib/tap.sh"

grep -q '^export JC_IN_PACKAGE_BUILD = 1$' "$top_srcdir/debian/rules"
ok $? "debian/rules exports JC_IN_PACKAGE_BUILD to the build-time test"
for s in sim/selftest.sh sim/stock.sh rt/verify-rank.sh softverbs/links.sh parse/linux-netns.sh; do
	JC_IN_PACKAGE_BUILD=1 sh "$top_srcdir/tests/$s" </dev/null >"$t/out" 2>/dev/null
	first=$(head -n 1 "$t/out")
	case $first in
	"1..0 # SKIP a package build: "*) ok 0 "$s skips whole in a package build" ;;
	*) ok 1 "$s skips whole in a package build"; diag "first line: $first" ;;
	esac
done
done_testing
