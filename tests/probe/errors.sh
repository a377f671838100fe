# SPDX-License-Identifier: MIT
# Probing reachable hosts: sudo that wants a password, progress on a
# terminal, --hostfile, and a saved bundle that replays to the same
# inventory.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
SIM_SANITIZE=1	# also in the sanitizer build
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

sim_down

done_testing
