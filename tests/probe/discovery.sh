# SPDX-License-Identifier: MIT
# Discovery on simulated clusters of 2, 4 and 8 hosts finds exactly the
# cables of the topology, and a plain --dot (which asks less) the same. Sourced by discovery-macos.sh and discovery-linux.sh
# with the topologies to try in $topologies.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require

for topo in $topologies; do
	if ! sim_up "$topo" 2>"$t/up.err"; then
		ok 1 "$(basename "$topo" .json): cluster up"
		diag "$(cat "$t/up.err")"
		continue
	fi
	name=$(basename "$topo" .json)
	n=$(echo "$(sim_hosts)" | tr ',' '\n' | wc -l)
	rm -rf "$t/b"
	"$JACCL_CONFIG" probe --json --hosts "$(sim_hosts)" -F "$(sim_ssh_config)" \
	    --save "$t/b" >"$t/inv.json" 2>"$t/err"
	rc=$?
	is "$rc" 0 "$name: probe of $n hosts exits 0"
	[ "$rc" -eq 0 ] || diag "$(cat "$t/err")"
	got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["hosts"]), len(d["errors"]))' "$t/inv.json" 2>&1)
	is "$got" "$n 0" "$name: $n hosts in the inventory, no error"
	python3 "$top_srcdir/tests/probe/cables.py" "$t/inv.json" "$(sim_cluster_json)" >"$t/cmp" 2>&1
	ok $? "$name: the cables found are the topology's cables"
	diag "$(cat "$t/cmp")"
	# a plain --dot asks only what the cables need: the same DOT as from
	# the bundle of every output
	"$JACCL_CONFIG" --dot --hosts "$(sim_hosts)" -F "$(sim_ssh_config)" >"$t/live.dot" 2>&1
	"$JACCL_CONFIG" --dot --from "$t/b" >"$t/bundle.dot" 2>&1
	cmp -s "$t/live.dot" "$t/bundle.dot" && grep -q -- ' -- ' "$t/live.dot"
	ok $? "$name: --dot live draws the cables the bundle of every output gives"
	cmp -s "$t/live.dot" "$t/bundle.dot" || diag "$(diff "$t/bundle.dot" "$t/live.dot")"
	sim_down
done
done_testing
