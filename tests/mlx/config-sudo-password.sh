#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, sudo-password: 2 minis, one whose sudo wants a password (--auto-
# setup falls back to printing the commands).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start sudo-password
mlx_compare_all
mlx_done
done_testing
