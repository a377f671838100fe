#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, mesh4-tb4-link: 4 Mac Studios in a full mesh where the
# m3-ultra-2 -- m3-ultra-3 cable is a Thunderbolt 4 cable (40 Gb/s), on
# which RDMA is down.
#
# Where we differ on purpose: MLX asks only whether each host lists RDMA
# devices, so it writes a jaccl mesh (and a jaccl-ring ring) that sends RDMA
# over the TB4 cable, whose ports the hosts themselves report PORT_DOWN:
# JACCL cannot open those links. We leave out cables that cannot carry RDMA:
# automatic choice jaccl-ring over a ring that avoids that cable, --backend
# jaccl refused with the cable named. The addresses (every cable gets its
# /30, the TCP ring included) and the ring backend's hostfile are MLX's.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start mesh4-tb4-link
mlx_dot
mlx_dot_same
mlx_backend ring
mlx_backend_same ring

# the ports of the TB4 cable, as the hosts report them
tb4=$(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))
for cb in c["cables"]:
    if cb.get("speed", "").startswith("40"):
        print(cb["a"], "rdma_" + cb["a_if"], cb["b"], "rdma_" + cb["b_if"])' "$(sim_cluster_json)")
set -- $tb4
is "$(sim_exec "$1" ibv_devinfo -d "$2" | awk '/state:/ { print $2 }'):$(sim_exec "$3" ibv_devinfo -d "$4" | awk '/state:/ { print $2 }')" \
    PORT_DOWN:PORT_DOWN "tb4-link: the hosts report RDMA down on both ends of the TB4 cable"

mlx_backend jaccl-ring
is "$(cat "$t/j-jaccl-ring.st"):$(cat "$t/m-jaccl-ring.st")" 0:0 "tb4-link jaccl-ring: both write a hostfile"
[ -n "$(mlx_dead_links "$t/m-jaccl-ring.json")" ]
ok $? "tb4-link jaccl-ring: MLX's ring uses the TB4 cable"
is "$(mlx_dead_links "$t/j-jaccl-ring.json")" "" "tb4-link jaccl-ring: ours uses only cables whose RDMA ports are active"
python3 "$MX_PY" commands "$t/m-jaccl-ring.out" "$t/j-jaccl-ring.out" > "$t/cmd.diff"
ok $? "tb4-link jaccl-ring: the setup commands MLX prints (every cable addressed)"

mlx_backend jaccl
is "$(cat "$t/m-jaccl.st"):$(cat "$t/j-jaccl.st")" 0:4 "tb4-link jaccl: MLX writes a mesh, we refuse (exit 4: the cabling cannot serve the backend)"
[ -n "$(mlx_dead_links "$t/m-jaccl.json")" ]
ok $? "tb4-link jaccl: MLX's mesh links two hosts over the TB4 cable"
grep -q "no cable between $1 and $3 can carry RDMA" "$t/j-jaccl.err"
ok $? "tb4-link jaccl: we name the pair and the reason"
[ $? = 0 ] || _mx_show "$t/j-jaccl.err"

mlx_auto_setup_same hostfile-differs
python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["backend"], json.load(open(sys.argv[2]))["backend"])' \
    "$t/m-auto.json" "$t/j-auto.json" > "$t/backends"
is "$(cat "$t/backends")" "jaccl jaccl-ring" "tb4-link automatic choice: MLX jaccl, ours jaccl-ring"
is "$(mlx_dead_links "$t/j-auto.json")" "" "tb4-link automatic choice: ours uses only cables whose RDMA ports are active"
mlx_replay_same
mlx_done
done_testing
