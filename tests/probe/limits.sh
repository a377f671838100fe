# SPDX-License-Identifier: MIT
# Bounds of a probe: remote output over the size cap is refused, a remote
# command that hangs is killed after --command-timeout; the other hosts are
# probed all the same.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require

probe() { "$JACCL_CONFIG" probe -F "$(sim_ssh_config)" --connect-timeout 2 "$@"; }

sim_up sudo-password 2>"$t/up.err" || { diag "$(cat "$t/up.err")"; ok 1 "cluster up"; done_testing; exit; }

# remote output over the size cap
big=$SIM_DIR/hosts/mini1/bin/sysctl
printf '#!/bin/sh\nhead -c 17000000 /dev/zero | tr "\\\\000" x\n' >"$big"
chmod 755 "$big"
probe --hosts mini1,mini2 --json >"$t/out" 2>"$t/err"
is "$?" 1 "output over the cap: exit 1"
grep -q "^jaccl-config: mini1: error: .*more than 16 MiB" "$t/err"
ok $? "the message says the output was too large"
is "$(python3 -c 'import json,sys; print(" ".join(h["name"] for h in json.load(open(sys.argv[1]))["hosts"]))' "$t/out")" \
    mini2 "the other host is still probed"
rm -f "$big"

# a remote command that hangs (and forks) is stopped after --command-timeout
slow=$SIM_DIR/hosts/mini1/bin/sysctl
printf '#!/bin/sh\nsleep 300\necho late\n' >"$slow"
chmod 755 "$slow"
probe --hosts mini1,mini2 --command-timeout 2 --save "$t/slow" >"$t/out" 2>"$t/err"
is "$?" 0 "a hung command: the probe still ends, exit 0"
is "$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print([o["status"] for h in m["hosts"] if h["name"]=="mini1" for f,o in h["outputs"].items() if f=="sysctl.txt"])' "$t/slow/manifest.json")" \
    "[143]" "the hung command was killed with SIGTERM (status 143)"
rm -f "$slow"
done_testing
