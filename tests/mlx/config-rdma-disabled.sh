#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, rdma-disabled: 3 minis in a triangle, one with RDMA disabled (ring
# over TCP).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start rdma-disabled
mlx_compare_all
mlx_done
done_testing
