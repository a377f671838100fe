#!/bin/sh
# SPDX-License-Identifier: MIT
# configure --auto-setup, a second run and restore on the simulated cluster
# studio-mesh4, and the rollback when sudo fails on one host.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/configure/sim-lib.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require
apply_suite studio-mesh4 rollback
done_testing
