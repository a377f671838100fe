# SPDX-License-Identifier: MIT
# A host whose system_profiler prints garbage: a clear error naming that
# host, exit 1, and the other hosts probed and printed all the same; also
# --verbose's log of each remote command.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require

probe() { "$JACCL_CONFIG" probe -F "$(sim_ssh_config)" --connect-timeout 2 "$@"; }

# garbage from system_profiler on one host: an error for it, the others fine
sim_up garbage 2>"$t/up.err" || { diag "$(cat "$t/up.err")"; ok 1 "cluster up"; done_testing; exit; }
probe --hosts mini1,mini2,mini3 --json >"$t/out" 2>"$t/err"
is "$?" 1 "a host with garbage from system_profiler: exit 1"
grep -q '^jaccl-config: mini2: error: ' "$t/err"
ok $? "the error names that host"
diag "$(cat "$t/err")"
is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(h["name"] for h in d["hosts"]), "/", " ".join(e["host"] for e in d["errors"]))' "$t/out")" \
    "mini1 mini3 / mini2" "the others are still probed; the JSON lists the error"
probe --hosts mini1,mini2,mini3 -v >"$t/out" 2>"$t/err"
is "$(grep -c '^mini[0-9]: Mac' "$t/out")" 2 "text output: the two good hosts"
grep -q '^jaccl-config: mini3: sudo -n true 2>&1 || sudo -n -ll 2>&1: exit 0, [0-9.]* s$' "$t/err"
ok $? "--verbose: each remote command with its exit status and time"
done_testing
