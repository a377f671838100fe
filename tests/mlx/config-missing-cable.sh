#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, missing-cable: 4 Studios meant as a mesh with one cable missing (an
# incomplete mesh: jaccl-ring).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start missing-cable
mlx_compare_all
mlx_done
done_testing
