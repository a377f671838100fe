# SPDX-License-Identifier: MIT
# Discovery on simulated Linux clusters of 2, 4 and 8 hosts.
topologies="linux-pair linux-mesh4 $top_srcdir/tests/probe/topologies/linux-ring8.json"
. "$top_srcdir/tests/probe/discovery.sh"
