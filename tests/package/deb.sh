#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian package: built once with dpkg-buildpackage -us -uc -b from a
# copy of the source tree (the tree itself is left as it is), lintian finds
# no error and no warning, and once installed the example bundles, the man
# page and the bash completion are where the system looks for them:
# `jaccl-config --from /usr/share/jaccl-config/examples/studio-mesh4 --dot`
# prints what the build tree's jaccl-config prints for the bundle of the
# source tree (whose DOT the live comparison with mlx.distributed_config
# judges, tests/mlx)
# and `man -w jaccl-config` finds the page. The package is purged again
# whatever happens.
. "${top_srcdir:-.}/tests/lib/tap.sh"
[ "$(id -u)" -eq 0 ] || skip_all "installing a package needs root"
for c in dpkg-buildpackage dh fakeroot apt-get; do
	command -v $c >/dev/null 2>&1 || skip_all "$c is missing (dpkg-dev, debhelper, fakeroot)"
done
[ -z "${JC_IN_PACKAGE_BUILD:-}" ] || skip_all "running inside a package build"
if grep -q -- '--enable-sanitizers' "${top_builddir:-.}/config.status" 2>/dev/null; then
	skip_all "sanitizer build: the plain build builds and tests the package"
fi
# one package test at a time on this machine (the package is system-wide)
if command -v flock >/dev/null 2>&1; then
	exec 9>"${TMPDIR:-/tmp}/jaccl-config-deb-test.lock"
	flock 9
fi
if dpkg-query -W -f='${Status}' jaccl-config 2>/dev/null | grep -q 'ok installed'; then
	skip_all "a jaccl-config package is installed already: not replacing it"
fi
lock="-o DPkg::Lock::Timeout=900"
installed=0
cleanup() {
	if [ $installed = 1 ]; then
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get $lock purge -y -qq jaccl-config >/dev/null 2>&1 ||
		    dpkg --purge jaccl-config >/dev/null 2>&1
	fi
	rm -rf "$t"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# a copy of the source tree, without build folders
mkdir -p "$t/src" &&
    tar -C "$top_srcdir" --exclude='./_build*' --exclude=./.git --exclude=./autom4te.cache -cf - . |
    tar -C "$t/src" -xf - && chmod -R u+w "$t/src"	# make distcheck's tree is read-only
ok $? "a copy of the source tree"
(cd "$t/src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b) \
    >"$t/build.log" 2>&1
r=$?
ok $r "dpkg-buildpackage -us -uc -b builds the package"
[ $r -eq 0 ] || { diag "$(tail -30 "$t/build.log")"; done_testing; exit 1; }
deb=$(ls "$t"/jaccl-config_*.deb)
ok $? "the .deb is there: $(basename "$deb")"

if command -v lintian >/dev/null 2>&1; then
	lintian "$t"/jaccl-config_*.changes >"$t/lintian" 2>&1
	grep -E '^[EW]: ' "$t/lintian" >"$t/lintian.ew"
	[ ! -s "$t/lintian.ew" ]
	ok $? "lintian: no error, no warning"
	[ -s "$t/lintian.ew" ] && diag "$(cat "$t/lintian.ew")"
else
	skip "lintian is not installed"
fi

dpkg-deb -f "$deb" Suggests | grep -q 'graphviz' && dpkg-deb -f "$deb" Suggests | grep -q 'ibverbs-utils'
ok $? "the package suggests graphviz and ibverbs-utils"

# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get $lock install -y -qq --no-install-recommends "$deb" \
    >"$t/install.log" 2>&1
r=$?
[ $r -eq 0 ] && installed=1
ok $r "the package installs"
[ $r -eq 0 ] || diag "$(tail -20 "$t/install.log")"

/usr/bin/jaccl-config --from /usr/share/jaccl-config/examples/studio-mesh4 --dot >"$t/dot" 2>"$t/err"
ok $? "the installed jaccl-config replays the installed example bundle"
"$JACCL_CONFIG" --from "$top_srcdir/data/examples/studio-mesh4" --dot >"$t/want.dot" 2>/dev/null
[ -s "$t/want.dot" ] && cmp -s "$t/dot" "$t/want.dot"
ok $? "... and prints the cabling the build tree prints for the source bundle"
is "$(man -w jaccl-config 2>&1)" "/usr/share/man/man1/jaccl-config.1.gz" "man -w jaccl-config finds the page"
f=/usr/share/bash-completion/completions/jaccl-config
got=$(bash -c '. "$1"; COMP_WORDS=(jaccl-config --backend j); COMP_CWORD=2; _jaccl_config; echo "${COMPREPLY[*]}"' sh "$f" 2>&1)
is "$got" "jaccl jaccl-ring" "the bash completion is installed where bash-completion looks"
[ -f /usr/share/zsh/vendor-completions/_jaccl-config ] && [ -f /usr/share/fish/vendor_completions.d/jaccl-config.fish ]
ok $? "the zsh and fish completions are installed where Debian's shells look"

# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get $lock purge -y -qq jaccl-config >"$t/purge.log" 2>&1
r=$?
[ $r -eq 0 ] && installed=0
ok $r "the package is purged"
[ ! -e /usr/bin/jaccl-config ] && [ ! -e /usr/share/jaccl-config ] && [ ! -e "$f" ]
ok $? "nothing of it is left"
done_testing
