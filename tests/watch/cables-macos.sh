#!/bin/sh
# SPDX-License-Identifier: MIT
# watch on the simulated Mac Studio mesh: the first snapshot is the
# topology's cabling (cluster.json, compiled from the topology, not from
# the program); then, each acted on only once watch has shown the state
# before it: a cable pulled gives an `unplugged` event naming both ports,
# a cable replugged to another port `moved`, a link down to 40 Gb/s
# `speed` (and RDMA PORT_DOWN on both ends, as on a Mac), an address
# removed from the kernel `address`, the cable back `plugged`. SIGINT ends
# it with status 0 and no remote loop or ssh session left in any host.
# Plain lines when stdout is not a terminal, an in-place table on one.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/watch/lib.sh"
sim_require

sim_up studio-mesh4 2>"$t/up.err" || { diag "$(cat "$t/up.err")"; ok 1 "cluster up"; done_testing; exit; }
H1=m3-ultra-1 H2=m3-ultra-2 H3=m3-ultra-3 H4=m3-ultra-4
ALL=$H1,$H2,$H3,$H4
cp "$(sim_cluster_json)" "$t/cluster0.json"
ip -n "$(sim_ns $H1)" addr add 192.168.77.1/30 dev en4
ok $? "an address on $H1 en4 (kernel)"

watch_start "$t/ev" --json --interval 0.5 --hosts "$ALL"

wait_event "$t/ev" '"event":"snapshot"'
ok $? "a first snapshot" || diag "$(cat "$t/ev.err")"
got=$(WEV_FMT='"\n".join(sorted("|".join(sorted(x["host"]+" "+x["iface"] for x in c["ends"])) + " %s" % c["gbps"] for c in e["cables"]))' wev "$t/ev" snapshot)
want=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("\n".join(sorted("|".join(sorted([c["a"] + " " + c["a_if"], c["b"] + " " + c["b_if"]])) + " " + c["speed"].split()[0] for c in d["cables"])))' "$t/cluster0.json")
is "$got" "$want" "the snapshot's cables are the topology's, at its speeds"
is "$(WEV_FMT='sorted(set(x["rdma"] for c in e["cables"] for x in c["ends"]))' wev "$t/ev" snapshot)" \
    "['PORT_ACTIVE']" "every RDMA port active, as ibv_devinfo says at 80 Gb/s"
is "$(WEV_FMT='[x["address"] for c in e["cables"] for x in c["ends"] if x["host"] == "'$H1'" and x["iface"] == "en4"]' wev "$t/ev" snapshot)" \
    "['192.168.77.1']" "the kernel's address on $H1 en4"

# pulled: both ends named, as the topology cabled them
peer=$(python3 -c '
import json, sys
for c in json.load(open(sys.argv[1]))["cables"]:
    for me, o in (("a", "b"), ("b", "a")):
        if c[me] == sys.argv[2] and c[me + "_if"] == "en3":
            print(c[o] + " " + c[o + "_if"])' "$t/cluster0.json" "$H1")
sim_unplug "$H1" en3
ok $? "unplug $H1 en3"
wait_event "$t/ev" '"event":"unplugged"'
ok $? "an unplugged event"
is "$(wev_ends "$t/ev" unplugged before)" "$(printf '%s\n' "$H1 en3" "$peer" | sort | paste -sd'|' -)" \
    "it names $H1 en3 and its peer $peer"
is "$(WEV_FMT='e["after"]' wev "$t/ev" unplugged)" "None" "nothing after it"
is "$(ip -n "$(sim_ns "$H1")" -o link show en3 | grep -c NO-CARRIER)" 1 "the kernel agrees: en3 has no carrier"

# replugged elsewhere: H1 en5 (cabled to H2 en5) now goes to H2 en6
sim_plug "$H1" en5 "$H2" en6
ok $? "replug $H1 en5 from $H2 en5 to $H2 en6"
wait_event "$t/ev" '"event":"moved"'
ok $? "a moved event"
is "$(wev_ends "$t/ev" moved before)" "$H1 en5|$H2 en5" "moved from $H2 en5"
is "$(wev_ends "$t/ev" moved after)" "$H1 en5|$H2 en6" "to $H2 en6"
is "$(grep -c '"event":"unplugged"' "$t/ev")" 1 "a move is not reported as an unplug"

# 40 Gb/s: speed, and RDMA goes down on both ends
sim_speed "$H2" en3 40
ok $? "$H2 en3 at 40 Gb/s"
wait_event "$t/ev" '"event":"speed"'
ok $? "a speed event"
is "$(WEV_FMT='"%s -> %s" % (e["before"]["gbps"], e["after"]["gbps"])' wev "$t/ev" speed)" "80 -> 40" \
    "80 -> 40 Gb/s"
is "$(wev_ends "$t/ev" speed after)" "$H2 en3|$H3 en3" "on the cable $H2 en3 -- $H3 en3"
# one rdma event per end (each host is looked at in its own time)
wait_event "$t/ev" '"event":"rdma".*"host":"'$H2'","iface":"en3","text"' &&
    wait_event "$t/ev" '"event":"rdma".*"host":"'$H3'","iface":"en3","text"'
ok $? "an rdma event for each end"
is "$(python3 -c '
import json, sys
out = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] == "rdma" and (e["host"], e["iface"]) in ((sys.argv[2], "en3"), (sys.argv[3], "en3")):
        a = [x for x in e["after"]["ends"] if (x["host"], x["iface"]) == (e["host"], e["iface"])][0]
        out[e["host"]] = "%s %s %s" % (e["host"], e["iface"], a["rdma"])
print(", ".join(sorted(out.values())))' "$t/ev" "$H2" "$H3")" "$H2 en3 PORT_DOWN, $H3 en3 PORT_DOWN" \
    "RDMA PORT_DOWN on both ends at 40 Gb/s" || diag "$(grep '"event":"rdma"' "$t/ev")"

# an address removed in the kernel
ip -n "$(sim_ns $H1)" addr del 192.168.77.1/30 dev en4
ok $? "address removed from $H1 en4"
wait_event "$t/ev" '"event":"address"'
ok $? "an address event"
is "$(WEV_FMT='"%s %s %s -> %s" % (e["host"], e["iface"], [x for x in e["before"]["ends"] if x["host"] == e["host"]][0]["address"], [x for x in e["after"]["ends"] if x["host"] == e["host"]][0]["address"])' wev "$t/ev" address)" \
    "$H1 en4 192.168.77.1 -> None" "it names $H1 en4 and the address lost"

# back where it was
sim_plug "$H1" en3
ok $? "plug $H1 en3 back"
wait_event "$t/ev" '"event":"plugged"'
ok $? "a plugged event"
is "$(wev_ends "$t/ev" plugged after)" "$(printf '%s\n' "$H1 en3" "$peer" | sort | paste -sd'|' -)" \
    "the cable is back between $H1 en3 and $peer"

# every event has a time
is "$(python3 -c '
import json, sys, re
bad = [l for l in open(sys.argv[1]) if not re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", json.loads(l).get("time", ""))]
print(len(bad))' "$t/ev")" 0 "every event carries its UTC time"

# SIGINT: status 0, nothing left on the hosts
for h in $H1 $H2 $H3 $H4; do
	[ "$(remote_loops $h)" -gt 0 ] || diag "$h: no remote loop seen while watching"
done
is "$(remote_loops $H1)" 2 "while watching: one remote loop and its ssh session on $H1" ||
    diag "$(ip netns pids "$(sim_ns $H1)" | xargs -I{} sh -c 'tr "\0" " " </proc/{}/cmdline | cut -c1-80; echo')"
watch_stop INT
is "$WATCH_RC" 0 "SIGINT: exit status 0"
wait_no_loops $H1 $H2 $H3 $H4
ok $? "no remote loop or ssh session left on any host"
is "$(cat "$t/ev.err")" "" "nothing on stderr"

# plain lines when stdout is not a terminal
"$JACCL_CONFIG" watch -F "$(sim_ssh_config)" --hosts "$ALL" --count 1 >"$t/plain" 2>"$t/plain.err"
is "$?" 0 "--count 1: exit 0 after one snapshot"
grep -Eq '^[0-9T:.-]+Z snapshot: 6 cables$' "$t/plain"
ok $? "a snapshot line with its time" || diag "$(cat "$t/plain" "$t/plain.err")"
grep -q "$H2 en3 <-> $H3 en3 .* 40 Gb/s" "$t/plain"
ok $? "a line per cable, with its speed"
grep -q "$(printf '\033')" "$t/plain"
ok $((!$?)) "no escape sequence when stdout is not a terminal"

# on a terminal: redrawn in place, cursor given back (script(1) gives one)
if command -v script >/dev/null 2>&1; then
	script -qec "$JACCL_CONFIG watch -F $(sim_ssh_config) --hosts $ALL --count 2 --interval 0.5" /dev/null \
	    >"$t/tty" 2>&1
	grep -q "$(printf '\033\\[H\033\\[2J')" "$t/tty" && grep -q "$H1 en3 <-> " "$t/tty"
	ok $? "on a terminal: the table is redrawn in place"
	tail -c 20 "$t/tty" | grep -q "$(printf '\033\\[?25h')"
	ok $? "on a terminal: the cursor is shown again at the end"
else
	skip "script(1) missing: no terminal to test the display"
	skip "script(1) missing"
fi
done_testing
