#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, en10-mesh3: 3 Studios whose ports are en9 .. en14 (MLX sorts
# interface names as strings: en10 before en2).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start en10-mesh3
mlx_compare_all
mlx_done
done_testing
