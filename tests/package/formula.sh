#!/bin/sh
# SPDX-License-Identifier: MIT
# The Homebrew formula (packaging/homebrew/jaccl-config.rb) is valid Ruby,
# has the version of configure.ac, and its dependencies are the libraries
# configure.ac asks pkg-config for, mapped to Homebrew's names by the table
# below (which also gives the Debian -dev packages, compared with
# debian/control's Build-Depends). Its test replays an installed example.
. "${top_srcdir:-.}/tests/lib/tap.sh"
rb=$top_srcdir/packaging/homebrew/jaccl-config.rb
ac=$top_srcdir/configure.ac
ctl=$top_srcdir/debian/control

# pkg-config module -> Homebrew formula (macos: from the system) -> Debian package
cat >"$t/map" <<'MAP'
jansson jansson libjansson-dev
libssh libssh libssh-dev
libxml-2.0 macos:libxml2 libxml2-dev
libcgraph graphviz libgraphviz-dev
libibverbs - libibverbs-dev
libxxhash xxhash libxxhash-dev
MAP

if command -v ruby >/dev/null 2>&1; then
	ruby -c "$rb" >"$t/ruby" 2>&1
	ok $? "ruby -c: the formula parses"
	[ -s "$t/ruby" ] && diag "$(cat "$t/ruby")"
else
	skip "ruby is not installed"
fi

# the modules of configure.ac: PKG_CHECK_MODULES and JC_REQUIRE's second argument
sed -n 's/^\(PKG_CHECK_MODULES\|JC_REQUIRE\)(\[[A-Z0-9_]*\], *\[\([a-z0-9.-]*\).*/\2/p' "$ac" | sort -u >"$t/modules"
[ "$(wc -l <"$t/modules")" -ge 4 ]
ok $? "configure.ac asks pkg-config for $(paste -sd' ' "$t/modules")"
miss=$(awk 'NR == FNR { m[$1] = 1; next } !($1 in m) { print $1 }' "$t/map" "$t/modules")
is "$miss" "" "every module of configure.ac is in the table"

# the formula's run-time dependencies
sed -n 's/^ *depends_on "\([^"]*\)"$/\1/p' "$rb" | sort >"$t/brew.got"
sed -n 's/^ *uses_from_macos "\([^"]*\)"$/macos:\1/p' "$rb" | sort >>"$t/brew.got"
sort -o "$t/brew.got" "$t/brew.got"
awk 'NR == FNR { m[$1] = 1; next } ($1 in m) && $2 != "-" { print $2 }' "$t/modules" "$t/map" | sort >"$t/brew.want"
cmp -s "$t/brew.want" "$t/brew.got"
ok $? "the formula depends on what configure.ac needs: $(paste -sd' ' "$t/brew.want")"
cmp -s "$t/brew.want" "$t/brew.got" || diag "$(diff "$t/brew.want" "$t/brew.got")"
grep -q '^  depends_on "pkgconf" => :build$' "$rb"
ok $? "pkgconf is a build dependency"
sed -n '/^  head do$/,/^  end$/p' "$rb" | grep -q 'depends_on "autoconf" => :build'
ok $? "the head block builds from git with autoconf"
# JC_REQUIRE names the Homebrew formula in its message: the same names
sed -n 's/^JC_REQUIRE(\[[A-Z0-9_]*\], *\[\([a-z0-9.-]*\).*\], *\[\([a-z0-9-]*\)\], *\[\([a-z0-9-]*\)\])$/\1 \3/p' "$ac" |
    sort >"$t/hint"
awk 'NR == FNR { m[$1] = $2; next } { sub("^macos:", "", m[$1]); print $1, m[$1] }' "$t/map" "$t/hint" >"$t/hint.want"
[ -s "$t/hint" ] && cmp -s "$t/hint" "$t/hint.want"
ok $? "configure's 'brew install' hints name the same formulae"

# the version
v=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$ac")
grep -q "jaccl-config-$v.tar.gz\"" "$rb"
ok $? "the formula's tarball is version $v"

# the test block replays an installed example and checks the DOT
sed -n '/^  test do$/,/^  end$/p' "$rb" >"$t/testblock"
grep -q 'jaccl-config --from #{pkgshare}/examples/studio-mesh4 --dot' "$t/testblock" &&
    grep -q 'assert_' "$t/testblock"
ok $? "test do runs --from on an installed example and asserts on the DOT"
[ -d "$top_srcdir/data/examples/studio-mesh4" ]
ok $? "... and that example is in the tree"

# Debian: Build-Depends are the -dev packages of the same modules
sed -n '/^Build-Depends:/,/^[A-Z]/p' "$ctl" | tr ',' '\n' | sed 's/^Build-Depends://; s/^ *//; s/ *(.*//; s/ .*//' |
    grep -- '-dev$' | sort >"$t/deb.got"
awk 'NR == FNR { m[$1] = 1; next } ($1 in m) { print $3 }' "$t/modules" "$t/map" | sort >"$t/deb.want"
cmp -s "$t/deb.want" "$t/deb.got"
ok $? "debian/control Build-Depends on $(paste -sd' ' "$t/deb.want")"
cmp -s "$t/deb.want" "$t/deb.got" || diag "$(diff "$t/deb.want" "$t/deb.got")"
head -1 "$top_srcdir/debian/changelog" | grep -q "^jaccl-config ($v-[0-9]*)"
ok $? "debian/changelog is at version $v"
done_testing
