#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, studio-mesh4-2cables: the 4 Studios with two cables per pair (jaccl
# on the first; rings of two cables).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start studio-mesh4-2cables
mlx_compare_all
mlx_done
done_testing
