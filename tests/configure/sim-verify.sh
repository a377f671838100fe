#!/bin/sh
# SPDX-License-Identifier: MIT
# The whole job in one command on a simulated cluster of Linux hosts:
# discovery, --auto-setup, the hostfile, then --verify measures every cable
# of the ring over TCP and checks the all-reduce results.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require
sim_up linux-mesh4 || { ok 1 "linux-mesh4: cluster up"; done_testing; exit 1; }
cfg=$(sim_ssh_config)
export JACCL_VERIFY_MB=8 JACCL_VERIFY_MAX_MB=1
"$JACCL_CONFIG" --hosts "$(sim_hosts)" -F "$cfg" --connect-timeout 60 --command-timeout 300 \
    --state-dir "$t/st" --auto-setup --output-hostfile "$t/hf.json" --verify --timeout 20 \
    < /dev/null > "$t/out" 2> "$t/err"
r=$?
ok $r "--auto-setup --output-hostfile --verify succeeds"
[ $r -eq 0 ] || { sed 's/^/# /' "$t/err" | tail -20; sed 's/^/# /' "$t/out" | tail -20; }
"$JACCL_CONFIG" check "$t/hf.json" > /dev/null 2>&1
ok $? "the hostfile written passes check"
grep -Eq '^summary: 4 hosts, [0-9]+ links, 0 failed: PASS$' "$t/out"
ok $? "the verification table ends with a passing summary" || grep '^summary' "$t/out" | sed 's/^/# /'
grep -q 'Out of bounds values : 0 OK' "$t/out"
ok $? "the all-reduce results are right"
"$JACCL_CONFIG" restore -F "$cfg" --connect-timeout 60 --command-timeout 300 --state-dir "$t/st" \
    > /dev/null 2>&1
ok $? "restore afterwards"
done_testing
