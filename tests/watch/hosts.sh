#!/bin/sh
# SPDX-License-Identifier: MIT
# watch when hosts go away, on the simulated two-node cluster: a host whose
# management link goes down (its session stalls: nothing arrives, nothing
# fails) is reported gone, reconnected when the link is back (host-back),
# and watched again (a cable pulled afterwards is seen). A host whose sshd
# is killed is gone at once; after --max-reconnects refused reconnections
# it is given up (host-lost), and when every host is given up watch ends
# with status 3 (unreachable) and says why. A host unreachable from the
# start fails the command as mlx.distributed_config would, unless
# --ignore-unreachable; one whose outputs are garbage fails it with 1.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/watch/lib.sh"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require

sim_up two-node 2>"$t/up.err" || { diag "$(cat "$t/up.err")"; ok 1 "cluster up"; done_testing; exit; }

watch_start "$t/ev" --json --interval 0.5 --hosts h0,h1
wait_event "$t/ev" '"event":"snapshot"'
ok $? "a first snapshot" || diag "$(cat "$t/ev.err")"

# h1's management link down: the session stalls
sim_mgmt_down h1
ok $? "h1's management link down"
wait_event "$t/ev" '"event":"host-gone","time":"[^"]*","host":"h1"'
ok $? "h1 is reported gone" || diag "$(cat "$t/ev" "$t/ev.err")"
grep '"event":"host-gone"' "$t/ev" | grep -q '"host":"h0"'
ok $((!$?)) "h0 is not"
sim_mgmt_up h1
ok $? "h1's management link up again"
wait_event "$t/ev" '"event":"host-back","time":"[^"]*","host":"h1"'
ok $? "h1 is back" || diag "$(cat "$t/ev" "$t/ev.err")"
# watched again: a change on h1 after its return is seen
n0=$(grep -c . "$t/ev")
if1=$(python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["cables"][0]
print(c["b_if"] if c["b"] == "h1" else c["a_if"])' "$(sim_cluster_json)")
sim_unplug h1 "$if1"
ok $? "unplug h1 $if1"
wait_event "$t/ev" '"event":"unplugged"'
ok $? "the cable pulled after h1's return is reported"
watch_stop TERM
is "$WATCH_RC" 0 "SIGTERM: exit status 0"
wait_no_loops h0 h1
ok $? "no remote loop or ssh session left (h1's stalled one included)"
sim_plug h1 "$if1"

# sshd killed on every host: gone at once, given up after 2 refusals, exit 3
watch_start "$t/ev2" --json --interval 0.5 --max-reconnects 2 --hosts h0,h1
wait_event "$t/ev2" '"event":"snapshot"'
ok $? "a first snapshot (second run)" || diag "$(cat "$t/ev2.err")"
sim_sshd_kill h1
wait_event "$t/ev2" '"event":"host-lost","time":"[^"]*","host":"h1"'
ok $? "h1 without sshd: given up" || diag "$(cat "$t/ev2" "$t/ev2.err")"
is "$(WEV_FMT='e["attempt"]' wev "$t/ev2" host-lost)" 2 "after --max-reconnects 2 tries"
kill -0 "$WATCH_PID" 2>/dev/null
ok $? "watch goes on while h0 is there"
sim_sshd_kill h0
wait "$WATCH_PID"
is "$?" 3 "every host given up: exit status 3 (unreachable)"
grep -q 'every host is gone' "$t/ev2.err"
ok $? "and a clear error" || diag "$(cat "$t/ev2.err")"
is "$(grep -c '"event":"host-lost"' "$t/ev2")" 2 "each host reported given up"

# unreachable from the start (no sshd on either host now)
"$JACCL_CONFIG" watch -F "$(sim_ssh_config)" --connect-timeout 2 --hosts h0,h1 >"$t/out" 2>"$t/err"
is "$?" 3 "unreachable at the start: exit status 3"
grep -q 'Could not ssh to the following hosts' "$t/err"
ok $? "with mlx's list of hosts" || diag "$(cat "$t/err")"
"$JACCL_CONFIG" watch -F "$(sim_ssh_config)" --connect-timeout 2 --hosts h0,h1 \
    --ignore-unreachable >"$t/out" 2>"$t/err"
is "$?" 3 "--ignore-unreachable with no host left: exit status 3"
grep -q 'no reachable host left to watch' "$t/err"
ok $? "no reachable host left" || diag "$(cat "$t/err")"

# a host whose outputs cannot be understood at the start: an error naming
# it, exit 1, as probe (tests/probe/garbage.sh); bounded, so that a watch
# that would wait for it forever fails instead of hanging
sim_up garbage 2>"$t/up.err" || { diag "$(cat "$t/up.err")"; ok 1 "cluster up"; done_testing; exit; }
timeout 120 "$JACCL_CONFIG" watch -F "$(sim_ssh_config)" --connect-timeout 2 --hosts mini1,mini2,mini3 \
    --interval 0.5 >"$t/out" 2>"$t/err"
is "$?" 1 "garbage from mini2's system_profiler: exit 1"
grep -q '^jaccl-config: mini2: error: ' "$t/err"
ok $? "the error names mini2" || diag "$(cat "$t/err")"
wait_no_loops mini1 mini2 mini3
ok $? "no remote loop or ssh session left"
done_testing
