#!/bin/sh
# SPDX-License-Identifier: MIT
# Replay every real and simulated capture set and compare the inventory with
# the set's EXPECTED.json (ports, RDMA devices and states, hardware ports,
# ifconfig facts, cables found by matching peer ids across the set's hosts).
. "${top_srcdir:-.}/tests/lib/tap.sh"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
dump=${top_builddir:-.}/tests/parse/inventory_dump
[ -x "$dump" ] || skip_all "inventory_dump not built"
sets=
for d in "$top_srcdir"/tests/captures/*/ "$top_srcdir"/tests/captures-sim/*/; do
	[ -f "$d/EXPECTED.json" ] && sets="$sets $d"
done
# shellcheck disable=SC2086
python3 "$top_srcdir/tests/parse/check_captures.py" "$dump" $sets
