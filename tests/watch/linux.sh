#!/bin/sh
# SPDX-License-Identifier: MIT
# watch on the Linux personality (plain namespaces, the machine's own ip,
# sysfs and neighbours; no fake command): the first snapshot is the
# topology's cable, a cable pulled gives `unplugged` naming both ports, put
# back `plugged`, an address removed in the kernel `address`, and SIGINT
# ends it cleanly. (No speed event: a veth has no link rate to change. A
# move is not asserted: a Linux host names its peer by the neighbour it has
# learnt, which may take longer than one look, so a quick replug elsewhere
# may be seen as an unplug then a plug.)
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/watch/lib.sh"
sim_require

sim_up linux-pair 2>"$t/up.err" || { diag "$(cat "$t/up.err")"; ok 1 "cluster up"; done_testing; exit; }
ip -n "$(sim_ns lx2)" addr add 192.168.78.2/30 dev eth1
ok $? "an address on lx2 eth1 (kernel)"

# --until-event: watch ends by itself after the first unplug
watch_start "$t/ev0" --json --interval 0.5 --until-event unplugged,moved --hosts lx1,lx2
wait_event "$t/ev0" '"event":"snapshot"'
ok $? "a first snapshot" || diag "$(cat "$t/ev0.err")"
is "$(WEV_FMT='"\n".join("|".join(sorted(x["host"]+" "+x["iface"] for x in c["ends"])) for c in e["cables"])' wev "$t/ev0" snapshot)" \
    "lx1 eth1|lx2 eth1" "the topology's one cable, lx1 eth1 -- lx2 eth1"
w0=$WATCH_PID
watch_start "$t/ev" --json --interval 0.5 --hosts lx1,lx2
wait_event "$t/ev" '"event":"snapshot"'
ok $? "a second watch, to follow the rest"

sim_unplug lx1 eth1
ok $? "unplug lx1 eth1"
wait "$w0"
is "$?" 0 "--until-event unplugged,moved: the first watch ended by itself, status 0"
is "$(tail -n 1 "$t/ev0" | python3 -c 'import json, sys; print(json.load(sys.stdin)["event"])')" \
    unplugged "its last line is the unplugged event"
wait_event "$t/ev" '"event":"unplugged"'
ok $? "an unplugged event"
is "$(wev_ends "$t/ev" unplugged before)" "lx1 eth1|lx2 eth1" "it names both ports"

sim_plug lx1 eth1
ok $? "plug it back"
wait_event "$t/ev" '"event":"plugged"'
ok $? "a plugged event"
is "$(wev_ends "$t/ev" plugged after)" "lx1 eth1|lx2 eth1" "the same two ports"
# the address survived the replug (as on a Mac); now it goes
wait_event "$t/ev" '"event":"plugged".*"address":"192.168.78.2"'
ok $? "the address is still there after the replug"
ip -n "$(sim_ns lx2)" addr del 192.168.78.2/30 dev eth1
wait_event "$t/ev" '"event":"address"'
ok $? "an address event"
is "$(WEV_FMT='e["host"] + " " + e["iface"]' wev "$t/ev" address)" "lx2 eth1" "on lx2 eth1"

watch_stop INT
is "$WATCH_RC" 0 "SIGINT: exit status 0"
wait_no_loops lx1 lx2
ok $? "no remote loop or ssh session left"
done_testing
