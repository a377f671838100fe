#!/bin/sh
# SPDX-License-Identifier: MIT
# Cabling cases made from the real captures of tests/captures by trimming
# (files left out, keys deleted; nothing added): probe bundles replayed with
# --from. The two MacBook Pros of osaurus-m5max-mbp-pair are cabled
# Thunderbolt 2 to Thunderbolt 2 (local's bus 1, receptacle 2; the peer's
# bus 1, receptacle 2, which its networksetup list maps to en6), at 80 Gb/s;
# local's capture has no networksetup list.
. "${top_srcdir:-.}/tests/lib/tap.sh"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed to trim the captures"
cap=$top_srcdir/tests/captures/osaurus-m5max-mbp-pair
sp=system_profiler-SPThunderboltDataType.json
ns=networksetup-listallhardwareports.txt

# bundle NAME HOST:FILE...: a bundle of the given capture files, unchanged
bundle() {
	b=$t/$1
	shift
	for hf in "$@"; do
		mkdir -p "$b/${hf%%:*}"
		cp "$cap/${hf%%:*}/${hf#*:}" "$b/${hf%%:*}/"
	done
}

# 1. A cable without an interface name. mlx.distributed_config's
# extract_connectivity() looks every port up in networksetup's list
# (iface_map[f"Thunderbolt {tag}"]), which raises KeyError here: mlx draws
# no graph at all, so there is no mlx text to match for this cable.
bundle one-end local:$sp peer:$sp peer:$ns
bundle no-iface local:$sp peer:$sp
for case in one-end no-iface; do
	"$JACCL_CONFIG" configure --from "$t/$case" --hosts local,peer --dot >"$t/dot" 2>"$t/err"
	ok $? "$case: --dot succeeds"
	is "$(grep -c -- ' -- ' "$t/dot")" 1 "$case: --dot draws the cable once"
	"$JACCL_CONFIG" configure --from "$t/$case" --hosts local,peer --dot -v >"$t/dotv" 2>"$t/err"
	python3 - "$t/dotv" >"$t/edges" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# each edge statement: "a -- b [attributes]" (cgraph may break the attributes over lines)
for m in re.finditer(r'(\w+) -- (\w+)\s*\[(.*?)\];', text, re.S):
    print(m.group(1), m.group(2), " ".join(m.group(3).split()))
PY
	is "$(wc -l <"$t/edges")" 1 "$case: --dot -v draws one edge, no second end, no \"missing\""
done
"$JACCL_CONFIG" configure --from "$t/one-end" --hosts local,peer --dot >"$t/dot" 2>/dev/null
is "$(grep -- ' -- ' "$t/dot")" '  a -- b [label="?/en6\nno interface at local Thunderbolt 2"]' \
	"one end unknown: the known name, ? for the other, and why"
"$JACCL_CONFIG" configure --from "$t/no-iface" --hosts local,peer --dot >"$t/dot" 2>/dev/null
is "$(grep -- ' -- ' "$t/dot")" \
	'  a -- b [label="?/?\nno interface at local Thunderbolt 2 and peer Thunderbolt 2"]' \
	"no name at either end: ?/? and why"
"$JACCL_CONFIG" configure --from "$t/no-iface" --hosts local,peer --dot -v >"$t/dotv" 2>/dev/null
grep -q '80 Gb/s' "$t/dotv"
ok $? "--dot -v: the cable's link rate"
"$JACCL_CONFIG" configure --from "$t/no-iface" --hosts local,peer --dot >/dev/null 2>"$t/err"
is "$(grep -c 'no network interface at local Thunderbolt 2 and peer Thunderbolt 2' "$t/err")" 1 \
	"one warning for the cable, naming both ends"
done_testing
