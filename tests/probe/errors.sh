# SPDX-License-Identifier: MIT
# What probe does with hosts that cannot be probed: unreachable, a changed
# or unknown host key (and --accept-new), sudo that wants a password,
# garbage from system_profiler, output over the size cap; and a saved
# bundle that replays to the same inventory.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
sim_require

probe() { "$JACCL_CONFIG" probe -F "$(sim_ssh_config)" --connect-timeout 2 "$@"; }

sim_up sudo-password 2>"$t/up.err" || { diag "$(cat "$t/up.err")"; ok 1 "cluster up"; done_testing; exit; }
kh=$(sim_known_hosts)
cp "$kh" "$t/known_hosts.orig"

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

# an unreachable host (an address where nobody answers)
dead=$SIM_NET.99
probe --hosts mini1,$dead >"$t/out" 2>"$t/err"
is "$?" 1 "an unreachable host: exit 1"
printf 'Could not ssh to the following hosts:\n  -  %s\n\nMaybe they are not set-up for password-less ssh?\n' "$dead" >"$t/want"
tail -4 "$t/err" | cmp -s - "$t/want"
ok $? "the unreachable hosts are listed as mlx lists them"
diag "$(cat "$t/err")"
is "$(cat "$t/out")" "" "nothing on stdout"
probe --hosts mini1,$dead --ignore-unreachable >"$t/out" 2>"$t/err"
is "$?" 0 "--ignore-unreachable: exit 0"
grep -q "^jaccl-config: $dead: warning: unreachable, left out" "$t/err"
ok $? "--ignore-unreachable: a warning names the host"
is "$(grep -c '^[a-z0-9]*: Mac' "$t/out")" 1 "--ignore-unreachable: the reachable host is reported"

# a changed host key: always refused
ssh-keygen -q -t ed25519 -N '' -f "$t/otherkey"
awk -v k="$(cut -d' ' -f1,2 "$t/otherkey.pub")" '/^mini2,/ { print $1 " " k; next } { print }' \
    "$t/known_hosts.orig" >"$kh"
probe --hosts mini1,mini2 --accept-new >"$t/out" 2>"$t/err"
is "$?" 1 "a changed host key: exit 1, even with --accept-new"
grep -q "^jaccl-config: mini2: error: host key for mini2 has changed (now ssh-ed25519 SHA256:" "$t/err"
ok $? "the message names the host and the new key's fingerprint"
diag "$(head -1 "$t/err")"

# an unknown host key: refused, or recorded with --accept-new
grep -v '^mini2,' "$t/known_hosts.orig" >"$kh"
probe --hosts mini1,mini2 >"$t/out" 2>"$t/err"
is "$?" 1 "an unknown host key: exit 1"
grep -q "^jaccl-config: mini2: error: host key for mini2 is not known; add it to known_hosts or pass --accept-new" "$t/err"
ok $? "the message says how to accept it"
probe --hosts mini1,mini2 --accept-new >"$t/out" 2>"$t/err"
is "$?" 0 "--accept-new: exit 0"
grep -q "^$(sim_host_ip mini2) ssh-ed25519 " "$kh"
ok $? "--accept-new recorded mini2's key in known_hosts"
probe --hosts mini1,mini2 >"$t/out" 2>"$t/err"
is "$?" 0 "the recorded key is accepted next time"
cp "$t/known_hosts.orig" "$kh"

# --save then --from replays to the same inventory
probe --hosts mini1,mini2 --json --save "$t/bundle" >"$t/live.json" 2>"$t/err"
is "$?" 0 "--save: exit 0"
[ -d "$t/bundle/mini1" ] && [ -d "$t/bundle/mini2" ] && [ -f "$t/bundle/manifest.json" ]
ok $? "--save wrote the host folders"
"$JACCL_CONFIG" probe --json --from "$t/bundle" >"$t/replay.json" 2>"$t/err"
is "$?" 0 "--from: exit 0"
cmp -s "$t/live.json" "$t/replay.json"
ok $? "--from gives the same JSON as the live probe"
"$JACCL_CONFIG" probe --json --from "$t/bundle" --hosts mini2 >"$t/one.json" 2>"$t/err"
is "$(python3 -c 'import json,sys; print(" ".join(h["name"] for h in json.load(open(sys.argv[1]))["hosts"]))' "$t/one.json")" \
    mini2 "--from with --hosts replays only those hosts"

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
probe --hosts mini1,mini2,mini3 >"$t/out" 2>"$t/err"
is "$(grep -c '^mini[0-9]: Mac' "$t/out")" 2 "text output: the two good hosts"
done_testing
