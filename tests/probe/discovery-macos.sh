# SPDX-License-Identifier: MIT
# Discovery on simulated Mac clusters of 2, 4 and 8 hosts.
topologies="two-node mini-ring4 mini-ring8"
. "$top_srcdir/tests/probe/discovery.sh"
