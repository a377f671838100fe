#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's Quick start. On a fresh Debian 12 machine, as root:
#   sh tests/bootstrap.sh demo    install the build dependencies, build, run the whole
#                                 pipeline on a bundled cluster, check the example hostfiles
#   sh tests/bootstrap.sh check   install what the tests need, build, run the whole suite
#                                 (then once more under ASan+UBSan, and the fuzzers briefly)
# Each mode works on its own; neither needs the other to have run first.
set -eu
cd "$(dirname "$0")/.."
mode=${1:-check}

BUILD_DEPS="autoconf automake libtool pkg-config make gcc libc6-dev libssh-dev libjansson-dev libgraphviz-dev libxml2-dev libibverbs-dev libxxhash-dev"
TEST_DEPS="graphviz openssh-server openssh-client iproute2 iputils-ping python3 mandoc clang libclang-rt-14-dev util-linux procps iperf3 nftables g++ nlohmann-json3-dev zsh fish sudo ruby man-db dpkg-dev debhelper fakeroot lintian rsync"

install() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "bootstrap: missing packages:$missing (run as root, or install them)" >&2
		exit 1
	fi
	echo "bootstrap: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

build() { # build DIR [configure args...]
	dir=$1; shift
	[ -x configure ] && [ configure -nt configure.ac ] && [ configure -nt Makefile.am ] || autoreconf -fi >/dev/null
	mkdir -p "$dir"
	(cd "$dir" && { [ -f Makefile ] && [ "$(cat .jc-config 2>/dev/null)" = "$*" ] || { ../configure -q "$@" && echo "$*" > .jc-config; }; } && make -s -j"$(nproc)")
}

case $mode in
demo)
	install $BUILD_DEPS
	build _build
	# the whole pipeline on a bundled cluster (a saved probe of 4 Mac Studios)
	ex=data/examples/studio-mesh4
	echo "\$ jaccl-config --from $ex --dot"
	_build/jaccl-config --from "$ex" --dot
	echo "\$ jaccl-config --from $ex --output-hostfile _build/studio-mesh4.json"
	_build/jaccl-config --from "$ex" --output-hostfile _build/studio-mesh4.json < /dev/null
	echo "\$ jaccl-config check _build/studio-mesh4.json"
	_build/jaccl-config check _build/studio-mesh4.json
	for f in data/hostfiles/*.json; do
		echo "\$ jaccl-config check $f"
		_build/jaccl-config check "$f" || true
	done
	;;
check)
	install $BUILD_DEPS $TEST_DEPS
	build _build
	status=0
	(cd _build && make -s -j"$(nproc)" check) || status=1
	if [ "${JC_SKIP_SANITIZERS:-0}" != 1 ]; then
		build _build-asan --enable-sanitizers CC=gcc CFLAGS="-O1 -g"
		(cd _build-asan && ASAN_OPTIONS=detect_leaks=1 make -s -j"$(nproc)" check) || status=1
	fi
	if [ "${JC_SKIP_FUZZ:-0}" != 1 ] && command -v clang >/dev/null 2>&1; then
		build _build-fuzz --enable-fuzzing CC=clang CFLAGS="-O1 -g"
		(cd _build-fuzz && make -s fuzz-smoke) || status=1
	fi
	exit $status
	;;
*)
	echo "usage: sh tests/bootstrap.sh demo|check" >&2
	exit 2
	;;
esac
