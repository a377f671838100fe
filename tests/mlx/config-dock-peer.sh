#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, dock-peer: 3 minis, mini1 -- mini2 direct, mini1 -- mini3 through
# a dock that only mini1 sees (mini3 sees mini1 directly). Neither a mesh nor
# a ring: both tools refuse every backend and change nothing.
#
# Where we differ on purpose: mini1 lists mini3 inside the dock's entry,
# which has no domain UUID, so MLX knows the docked cable only from mini3's
# side. It draws an edge only from the host listed first, so its graph loses
# that cable, and its mesh check names mini1 -- mini3 as the missing pair. We
# take a cable seen from either end: the graph shows it, and the pair named
# missing is mini2 -- mini3, the one with no cable at all.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start dock-peer

mlx_dot
is "$(mlx_class "$(cat "$t/j-dot.st")")" "$(cat "$t/m-dot.st")" "dock-peer --dot: exit status as MLX's"
# the docked cable, from the topology: a -- c with mini1's and mini3's interfaces
dock=$(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
for cb in c["cables"]:
    if cb.get("via_dock"):
        print("  a -- c [label=\"%s/%s\"]" % (cb["a_if"], cb["b_if"]))' "$(sim_cluster_json)")
grep -vxF "$dock" "$t/j.dot" > "$t/j-nodock.dot"
cmp -s "$t/m.dot" "$t/j-nodock.dot"
ok $? "dock-peer --dot: MLX's graph, plus the docked cable"
grep -qxF "$dock" "$t/j.dot" && ! grep -qxF "$dock" "$t/m.dot"
ok $? "dock-peer --dot: the docked cable ($dock) is drawn by us, not by MLX"
[ $? = 0 ] || diag "$(diff -u "$t/m.dot" "$t/j.dot")"

for b in auto jaccl-ring ring; do
	mlx_backend $b
	mlx_backend_same $b
done
mlx_backend jaccl
is "$(cat "$t/j-jaccl.st"):$(cat "$t/m-jaccl.st")" 4:1 "dock-peer jaccl: both refuse (MLX exit 1, ours 4: the cabling cannot serve the backend)"
grep -q 'Incomplete mesh, mini1 is not connected to mini3' "$t/m-jaccl.err" &&
    grep -q 'Incomplete mesh, mini2 is not connected to mini3$' "$t/j-jaccl.err"
ok $? "dock-peer jaccl: MLX names mini1 -- mini3 (the docked cable it misses), we name mini2 -- mini3"
[ $? = 0 ] || _mx_show "$t/m-jaccl.err" "$t/j-jaccl.err"

mlx_auto_setup_same
is "$(grep -c '^addr' "$t/sj"):$(grep -c '^addr' "$t/sm")" "3:3" \
    "dock-peer --auto-setup: no address set by either (only the management ones)"
mlx_replay_same
mlx_done
done_testing
