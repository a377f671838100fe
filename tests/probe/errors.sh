# SPDX-License-Identifier: MIT
# Hosts that are reached but not fully usable: sudo that wants a password,
# garbage from system_profiler, output over the size cap; progress on a
# terminal and --verbose; --hostfile; and a saved bundle that replays to the
# same inventory.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
sim_require

probe() { "$JACCL_CONFIG" probe -F "$(sim_ssh_config)" --connect-timeout 2 "$@"; }

sim_up sudo-password 2>"$t/up.err" || { diag "$(cat "$t/up.err")"; ok 1 "cluster up"; done_testing; exit; }
# sudo that wants a password: reported as "sudo: no", not an error
probe --hosts mini1,mini2 >"$t/out" 2>"$t/err"
is "$?" 0 "probe of two hosts exits 0"
sudo2=$(sed -n '/^mini2:/,/^$/p' "$t/out" | sed -n 's/^  sudo: *//p')
is "$sudo2" "no (needs a password)" "mini2, whose sudo wants a password: sudo no"
sudo1=$(sed -n '/^mini1:/,/^$/p' "$t/out" | sed -n 's/^  sudo: *//p')
is "$sudo1" "yes (passwordless)" "mini1: passwordless sudo"
grep -q '^    1 .*-> mini2 ' "$t/out"
ok $? "mini1's port 1 is shown cabled to mini2"
is "$(cat "$t/err")" "" "nothing on stderr when it is not a terminal"

# the hosts of a hostfile (mlx.launch format), saved as a bundle; --from
# replays the bundle to the same inventory
printf '[{"ssh": "mini2", "ips": []}, {"ssh": "mini1", "ips": []}]\n' >"$t/hostfile.json"
probe --hostfile "$t/hostfile.json" --json --save "$t/bundle" >"$t/live.json" 2>"$t/err"
is "$?" 0 "--hostfile --save: exit 0"
is "$(python3 -c 'import json,sys; print(" ".join(h["name"] for h in json.load(open(sys.argv[1]))["hosts"]))' "$t/live.json")" \
    "mini2 mini1" "--hostfile: its hosts, in its order"
[ -d "$t/bundle/mini1" ] && [ -d "$t/bundle/mini2" ] && [ -f "$t/bundle/manifest.json" ]
ok $? "--save wrote the host folders and the manifest"
"$JACCL_CONFIG" probe --json --from "$t/bundle" >"$t/replay.json" 2>"$t/err"
is "$?" 0 "--from: exit 0"
cmp -s "$t/live.json" "$t/replay.json"
ok $? "--from gives the same JSON as the live probe"
"$JACCL_CONFIG" probe --json --from "$t/bundle" --hosts mini1 >"$t/one.json" 2>"$t/err"
is "$(python3 -c 'import json,sys; print(" ".join(h["name"] for h in json.load(open(sys.argv[1]))["hosts"]))' "$t/one.json")" \
    mini1 "--from with --hosts replays only those hosts"
printf '[]\n' >"$t/empty.json"
probe --hostfile "$t/empty.json" >"$t/out" 2>"$t/err"
is "$?" 1 "an empty hostfile: exit 1"

# progress on a terminal (script(1) gives one)
if command -v script >/dev/null 2>&1; then
	script -qec "$JACCL_CONFIG probe -F $(sim_ssh_config) --hosts mini1,mini2 >/dev/null" /dev/null \
	    >"$t/tty" 2>&1
	grep -q 'mini2 *connecting' "$t/tty" && grep -q 'mini2 *done' "$t/tty"
	ok $? "on a terminal: a line per host with its state"
else
	skip "script(1) missing: no terminal to test the progress display"
fi

# remote output over the size cap
big=$SIM_DIR/hosts/mini1/bin/hostname
printf '#!/bin/sh\nhead -c 17000000 /dev/zero | tr "\\\\000" x\n' >"$big"
chmod 755 "$big"
probe --hosts mini1,mini2 --json >"$t/out" 2>"$t/err"
is "$?" 1 "output over the cap: exit 1"
grep -q "^jaccl-config: mini1: error: .*more than 16 MiB" "$t/err"
ok $? "the message says the output was too large"
is "$(python3 -c 'import json,sys; print(" ".join(h["name"] for h in json.load(open(sys.argv[1]))["hosts"]))' "$t/out")" \
    mini2 "the other host is still probed"
rm -f "$big"
sim_down

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
grep -q '^jaccl-config: mini3: sudo -n true: exit 0, [0-9.]* s$' "$t/err"
ok $? "--verbose: each remote command with its exit status and time"
done_testing
