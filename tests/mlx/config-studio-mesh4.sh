#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, studio-mesh4: 4 Mac Studios in a full mesh, one cable per pair
# (jaccl).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
sim_require
mlx_require
mlx_up studio-mesh4 || { echo "Bail out! cannot bring the simulated cluster up"; exit 1; }
mlx_dot
mlx_dot_same
for b in jaccl jaccl-ring ring; do
	mlx_backend $b
	mlx_backend_same $b
done
mlx_auto_setup_same
mlx_replay_same
mlx_done
done_testing
