# SPDX-License-Identifier: MIT
# TAP helpers for the shell tests (sourced). Every test ends with done_testing.
set -u
LC_ALL=C
export LC_ALL
: "${JACCL_CONFIG:=${top_builddir:-.}/jaccl-config}"
: "${top_srcdir:=.}"
_tap_n=0
_tap_failed=0

ok() { # ok CONDITION-STATUS DESCRIPTION; returns 0 when it passed, else 1
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_tap_n - $2"
		return 0
	fi
	echo "not ok $_tap_n - $2"
	_tap_failed=$((_tap_failed + 1))
	return 1
}
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - # SKIP $*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
# need_root WHY: skip the whole test unless it runs as root, and inside a
# package build (JC_IN_PACKAGE_BUILD, which debian/rules sets) whoever runs
# it: there no test starts namespaces, sshd or servers on the build machine.
need_root() {
	[ -z "${JC_IN_PACKAGE_BUILD:-}" ] || skip_all "a package build: $*"
	[ "$(id -u)" -eq 0 ] || skip_all "$*"
}
# plain_build_only WHY: skip the whole test in a sanitizer build, for a
# test whose time goes to the simulated hosts or a peer's code while the C
# code it runs runs under the sanitizers in the rest of the suite.
plain_build_only() {
	if grep -q -- '--enable-sanitizers' "${top_builddir:-.}/config.status" 2>/dev/null; then
		skip_all "sanitizer build: $*"
	fi
}
# help_all FILE: the overview of --help, then each command's --help (the
# overview lists a few options; each command's own --help has all of its)
help_all() {
	"$JACCL_CONFIG" --help >"$1" || return 1
	for _h_c in $(sed -n '/^Commands:/,/^$/p' "$1" | awk 'NR > 1 && NF { print $1 }'); do
		"$JACCL_CONFIG" "$_h_c" --help >>"$1" 2>&1 || return 1
	done
}
is() { # is GOT WANT DESCRIPTION; returns ok's status
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; diag "got:  $1" "want: $2"; return 1; fi
}
done_testing() { echo "1..$_tap_n"; [ "$_tap_failed" -eq 0 ]; }
# Every test gets a scratch folder $t, removed when it exits.
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

# wait_event FILE PATTERN: wait (up to 100 s) until a line of FILE matches
# the extended regular expression PATTERN (e.g. a trace line the ranks write
# with JACCL_VERIFY_TRACE); 0 when it did, 1 when it never came. Fault tests
# act on such events, never after a fixed delay.
wait_event() {
	for _we in $(seq 1 2000); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# only SECTION: true unless JC_TEST_ONLY="SECTION..." names other sections
# (to run one part of a long test, e.g. in a loop while hunting a race)
only() {
	[ -z "${JC_TEST_ONLY:-}" ] && return 0
	case " $JC_TEST_ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}
