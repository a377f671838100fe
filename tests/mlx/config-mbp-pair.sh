#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config and jaccl-config on the same simulated
# cluster, mbp-pair: 2 MacBook Pros whose ports map TB1 = en1, TB2 = en6,
# TB3 = en2, en0 being Wi-Fi (jaccl over one cable).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start mbp-pair
mlx_compare_all
mlx_done
done_testing
