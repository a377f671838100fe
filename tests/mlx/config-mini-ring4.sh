#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, mini-ring4: 4 Mac minis in a ring (jaccl-ring; no mesh).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start mini-ring4
mlx_compare_all
mlx_done
done_testing
