#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, studio-mesh4: 4 Mac Studios in a full mesh, one cable per pair
# (jaccl).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start studio-mesh4
mlx_compare_all
mlx_done
done_testing
