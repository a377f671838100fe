# SPDX-License-Identifier: MIT
# The SSH transport's unit test against a simulated host's sshd.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require
sim_up two-node 2>"$t/up.err" || { cat "$t/up.err" >&2; echo "Bail out! cluster did not come up"; exit 1; }
JC_SSH_CONFIG=$(sim_ssh_config) JC_HOST=h0 "$top_builddir/tests/unit/test_transport"
