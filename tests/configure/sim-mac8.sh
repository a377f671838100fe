#!/bin/sh
# SPDX-License-Identifier: MIT
# configure --auto-setup, a second run and restore on the simulated cluster
# mini-ring8.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/configure/sim-lib.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
sim_require
apply_suite mini-ring8 
done_testing
