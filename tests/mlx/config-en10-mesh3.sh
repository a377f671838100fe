#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, en10-mesh3: 3 Studios whose ports are en9 .. en14 (MLX sorts
# interface names as strings: en10 before en2).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
sim_require
mlx_require
mlx_up en10-mesh3 || { echo "Bail out! cannot bring the simulated cluster up"; exit 1; }
mlx_dot
mlx_dot_same
for b in jaccl jaccl-ring ring; do
	mlx_backend $b
	mlx_backend_same $b
done
mlx_auto_setup_same
mlx_done
done_testing
