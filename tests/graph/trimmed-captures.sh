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

# 2. A peer Mac without a domain UUID: the same captures with the peer
# item's domain_uuid_key and services_title deleted, on local's side only
# (the peer still names local's port) or on both. mlx's
# extract_connectivity() keeps only items with a domain_uuid_key, so it
# sees no cable there either (connected_to is None).
trim() {	# SRC DST: the capture without its peer Macs' UUID and services
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for bus in d["SPThunderboltDataType"]:
    for item in bus.get("_items", []):
        if "services_title" in item:
            del item["services_title"]
            item.pop("domain_uuid_key", None)
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
}
bundle uuid-one local:$sp peer:$sp peer:$ns
trim "$cap/local/$sp" "$t/uuid-one/local/$sp"
bundle uuid-both local:$sp peer:$sp peer:$ns
trim "$cap/local/$sp" "$t/uuid-both/local/$sp"
trim "$cap/peer/$sp" "$t/uuid-both/peer/$sp"
for case in uuid-one uuid-both; do
	"$JACCL_CONFIG" probe --from "$t/$case" --hosts local,peer >"$t/out" 2>&1
	grep -q '^    2      ?        80 Gb/s    -> peer en6 (inferred: no domain UUID)$' "$t/out"
	ok $? "$case: probe pairs local's Thunderbolt 2 with the peer's en6, marked inferred"
	grep -q 'Thunderbolt 2: the Mac cabled here (MacBook Pro, Mac17,6) reports no domain UUID' "$t/out"
	ok $? "$case: probe notes the port and what is known of the peer"
	"$JACCL_CONFIG" probe --from "$t/$case" --hosts local,peer --json >"$t/json" 2>/dev/null
	python3 - "$t/json" >"$t/ports" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hosts = d["hosts"] if isinstance(d, dict) else d
for h in hosts:
    for p in h["ports"]:
        if p.get("receptacle") == "2":
            print(h["name"], p["peer_name"], p["peer_model"], p["peer_no_id"], p["peer_inferred"],
                  p["peer_id"] is not None)
PY
	is "$(sed -n 1p "$t/ports")" "local MacBook Pro Mac17,6 True True True" \
	    "$case: --json: local's port, its peer's name and model, no id, inferred"
	"$JACCL_CONFIG" configure --from "$t/$case" --hosts local,peer --dot -v >"$t/dotv" 2>"$t/err"
	grep -q 'inferred (no domain UUID)' "$t/dotv"
	ok $? "$case: --dot -v marks the cable inferred"
	grep -q '^jaccl-config: local: warning: Thunderbolt 2: the Mac cabled here (MacBook Pro, Mac17,6) reports no domain UUID; paired' "$t/err"
	ok $? "$case: configure warns, naming the port"
done
# the same files with a third host that fits as well: never guess
bundle uuid-two local:$sp peer:$sp peer:$ns
trim "$cap/local/$sp" "$t/uuid-two/local/$sp"
trim "$cap/peer/$sp" "$t/uuid-two/peer/$sp"
mkdir -p "$t/uuid-two/peer2"
# a copy of the peer with ids of its own (each UUID's first digit changed)
sed 's/"0000000\([0-9]\)-/"9000000\1-/' "$t/uuid-two/peer/$sp" >"$t/uuid-two/peer2/$sp"
cp "$cap/peer/$ns" "$t/uuid-two/peer2/"
"$JACCL_CONFIG" probe --from "$t/uuid-two" --hosts local,peer,peer2 >"$t/out" 2>&1
grep -q '^    2      ?        80 Gb/s    -> MacBook Pro Mac17,6 (no domain UUID, not paired)$' "$t/out"
ok $? "two hosts fit: local's port is not paired, what is known is shown"
"$JACCL_CONFIG" configure --from "$t/uuid-two" --hosts local,peer,peer2 --dot >/dev/null 2>"$t/err"
grep -q '^jaccl-config: local: warning: Thunderbolt 2: the Mac cabled here (MacBook Pro, Mac17,6) reports no domain UUID, and not exactly one port' "$t/err"
ok $? "two hosts fit: configure says the cable is not used"
done_testing
