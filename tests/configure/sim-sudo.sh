#!/bin/sh
# SPDX-License-Identifier: MIT
# --auto-setup on a cluster where one host's sudo wants a password: mlx's
# warning naming that host, the commands printed instead (without waiting,
# standard input is not a terminal), nothing changed on any host.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
sim_require
sim_up sudo-password || { ok 1 "cluster up"; done_testing; exit 1; }
timeout 300 "$JACCL_CONFIG" --hosts "$(sim_hosts)" -F "$(sim_ssh_config)" --connect-timeout 60 --state-dir "$t/st" \
    --auto-setup < /dev/null > "$t/out" 2> "$t/err"
ok $? "--auto-setup without passwordless sudo on every host: exit 0, no wait"
grep -q 'warning: Automatic setup requested but the following hosts do not have passwordless sudo' "$t/err" &&
    grep -qx ' -  mini2' "$t/err" && ! grep -qx ' -  mini1' "$t/err"
ok $? "mlx's warning, naming mini2 only"
grep -qx 'Setup for mini1' "$t/out" && grep -qx 'Setup for mini2' "$t/out" &&
    grep -qx 'sudo ifconfig bridge0 down\( deletem en[0-9]*\)*' "$t/out" && grep -qx 'Hostfile' "$t/out"
ok $? "the commands of every host are printed, then the hostfile"
! grep -q '^\[#\]' "$t/err"
ok $? "no command was run"
is "$(cat "$(sim_mutations mini1)" "$(sim_mutations mini2)")" "" "no host was changed"
[ ! -e "$t/st/last-setup.json" ]
ok $? "no state was saved"
done_testing
