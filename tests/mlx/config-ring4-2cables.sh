#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, studio-ring4-2cables: 4 Mac Studio M4 Max in a ring with two cables
# between neighbours (jaccl-ring with lists of devices).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start studio-ring4-2cables
mlx_compare_all
mlx_done
done_testing
