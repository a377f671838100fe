#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds MLX's JACCL for the tests, once per build tree:
#   build.sh PEER_DIR OUT_DIR small|large
# runs PEER_DIR/build-jaccl.sh into OUT_DIR/SIZE and creates OUT_DIR/SIZE.stamp
# when it worked. Otherwise OUT_DIR/SIZE.why holds the reason the tests give
# when they skip (the folder is missing, or the build failed: see SIZE.log).
#   build.sh PEER_DIR OUT_DIR small|large PROGRAM.cpp
# then compiles one program of the tests against that JACCL as its examples
# are (the flags of PEER_DIR/build-jaccl.sh) into OUT_DIR/SIZE/jaccl_PROGRAM,
# or says why not in OUT_DIR/SIZE-PROGRAM.why.
# Never fails, so that "make check" goes on and the tests say why.
peer=$1 out=$2 size=$3 prog=${4:-}
mkdir -p "$out"
if [ -n "$prog" ]; then
	name=$(basename "$prog" .cpp)
	why=$out/$size-$name.why
	rm -f "$why" "$out/$size/jaccl_$name"
	if [ ! -f "$out/$size.stamp" ]; then
		cp "$out/$size.why" "$why" 2>/dev/null || echo "JACCL ($size frames) is not built" >"$why"
		exit 0
	fi
	case $size in small) avail=0 ;; *) avail=1 ;; esac
	if ! ${CXX:-g++} -std=c++20 -O2 -pthread "-D__builtin_available(...)=$avail" -include cstring \
	    -I"$peer/jaccl" -I/usr/include/nlohmann -o "$out/$size/jaccl_$name" "$prog" \
	    "$out/$size/libjaccl.a" -ldl >"$out/$size-$name.log" 2>&1; then
		echo "compiling $prog against JACCL failed: $(tail -n 1 "$out/$size-$name.log")" >"$why"
		echo "jaccl: $(cat "$why")" >&2
	fi
	exit 0
fi
rm -f "$out/$size.why"
if [ ! -f "$peer/build-jaccl.sh" ]; then
	echo "MLX's code not found at $peer (set MLX_PEER at configure time)" >"$out/$size.why"
	echo "jaccl: $(cat "$out/$size.why"): tests that run JACCL will skip" >&2
	exit 0
fi
echo "jaccl: building MLX's JACCL ($size frames) from $peer, once for this build tree"
if sh "$peer/build-jaccl.sh" "$out/$size" "$size" >"$out/$size.log" 2>&1; then
	touch "$out/$size.stamp"
else
	echo "building JACCL with $peer/build-jaccl.sh failed: $(tail -n 1 "$out/$size.log") (see $out/$size.log)" >"$out/$size.why"
	echo "jaccl: $(cat "$out/$size.why")" >&2
fi
exit 0
