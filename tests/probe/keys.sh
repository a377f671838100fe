# SPDX-License-Identifier: MIT
# Hosts that cannot be reached: no answer (reported together as mlx does,
# or left out with --ignore-unreachable), a changed host key (always
# refused), an unknown host key (refused, or recorded with --accept-new),
# a user whose key is refused (each exit 3); and a target written
# user@host:port.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require

probe() { "$JACCL_CONFIG" probe -F "$(sim_ssh_config)" --connect-timeout 2 "$@"; }

sim_up sudo-password 2>"$t/up.err" || { diag "$(cat "$t/up.err")"; ok 1 "cluster up"; done_testing; exit; }
kh=$(sim_known_hosts)
cp "$kh" "$t/known_hosts.orig"
# an unreachable host (an address where nobody answers)
dead=$SIM_NET.99
probe --hosts mini1,$dead >"$t/out" 2>"$t/err"
is "$?" 3 "an unreachable host: exit 3"
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
is "$?" 3 "a changed host key: exit 3, even with --accept-new"
grep -q "^jaccl-config: mini2: error: host key for mini2 has changed (now ssh-ed25519 SHA256:" "$t/err"
ok $? "the message names the host and the new key's fingerprint"
diag "$(head -1 "$t/err")"

# an unknown host key: refused, or recorded with --accept-new
grep -v '^mini2,' "$t/known_hosts.orig" >"$kh"
probe --hosts mini1,mini2 >"$t/out" 2>"$t/err"
is "$?" 3 "an unknown host key: exit 3"
grep -q "^jaccl-config: mini2: error: host key for mini2 is not known; add it to known_hosts or pass --accept-new" "$t/err"
ok $? "the message says how to accept it"
probe --hosts mini1,mini2 --accept-new >"$t/out" 2>"$t/err"
is "$?" 0 "--accept-new: exit 0"
grep -q "^$(sim_host_ip mini2) ssh-ed25519 " "$kh"
ok $? "--accept-new recorded mini2's key in known_hosts"
probe --hosts mini1,mini2 >"$t/out" 2>"$t/err"
is "$?" 0 "the recorded key is accepted next time"
cp "$t/known_hosts.orig" "$kh"

# user@host:port overrides the configuration's user and port (the user
# that logs in: root on the old Macs, admin on a stock Mac)
u=$(sim_user mini1)
probe --hosts "$u@mini1:22,nosuchuser@mini2" --ignore-unreachable --json >"$t/out" 2>"$t/err"
is "$(python3 -c 'import json,sys; print(" ".join(h["name"] + "/" + h["user"] + "/" + str(h["port"]) for h in json.load(open(sys.argv[1]))["hosts"]))' "$t/out")" \
    "mini1/$u/22" "$u@mini1:22 is probed as mini1, user $u, port 22"
grep -q "^jaccl-config: mini2: warning: unreachable, left out: permission denied for nosuchuser@mini2" "$t/err"
ok $? "the user of nosuchuser@mini2 is the one that logs in (and is refused)"
probe --hosts mini1,nosuchuser@mini2 --json >"$t/out" 2>"$t/err"
is "$?" 3 "a host refusing the key: exit 3"
is "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"]["code"])' "$t/out" 2>&1)" \
    "unreachable" "a host refusing the key: --json error code unreachable"

done_testing
