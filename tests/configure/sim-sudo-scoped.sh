#!/bin/sh
# SPDX-License-Identifier: MIT
# Least privilege on stock Macs: the rule `jaccl-config sudoers --persist`
# prints passes the real visudo and is the only rule of both hosts (macOS's
# sudoers asks a password for anything else, so `sudo -n true` and
# `sudo -n /bin/sh` are refused); under it --auto-setup, --auto-setup
# --persist, restore and a rollback run, each privileged command under its
# own sudo (sudo's own log on the host), and each leaves the addresses,
# routes, bridge and services it should (read in the hosts' namespaces).
# A rule without the --persist commands: --auto-setup --persist names what
# is missing and changes nothing.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/configure/sim-lib.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require
sim_require_stock
sim_up sudo-scoped || { ok 1 "cluster up"; done_testing; exit 1; }
cfg=$(sim_ssh_config)
hosts=$(sim_hosts)
slow="--connect-timeout 60 --command-timeout 300"
st=$t/state

# _svcs H: the network services of H (its own networksetup, run as root here)
_svcs() { sim_exec "$1" /usr/sbin/networksetup -listallnetworkservices 2>&1; }
_all_state() { _state "$1"; for h in mini1 mini2; do echo "== $h services"; _svcs $h; done >> "$1"; }
# _log_from H: sudo log lines after the mark
_mark() { for h in mini1 mini2; do wc -l < "$SIM_DIR/hosts/$h/sudo.log" > "$t/mark.$h"; done; }
# (the probe's sudo -n true, refused, left out)
_log_from() {
	tail -n +$(($(cat "$t/mark.$1") + 1)) "$SIM_DIR/hosts/$1/sudo.log" | grep -v 'COMMAND=/usr/bin/true$'
}

"$JACCL_CONFIG" sudoers -F "$cfg" $slow --hosts "$hosts" --persist > "$t/rule" 2> "$t/rule.err"
ok $? "jaccl-config sudoers --hosts ... --persist: exit 0"
visudo -cf "$t/rule" > "$t/visudo" 2>&1
ok $? "visudo -cf accepts the printed file"
grep -q 'visudo -cf' "$t/rule" && grep -q '/etc/sudoers.d/' "$t/rule"
ok $? "the file says how to check and install it"
grep -q '^%admin ALL = (root) NOPASSWD: JACCL_CONFIG_MACOS$' "$t/rule" &&
    ! grep -q 'NOPASSWD: *ALL' "$t/rule" && ! grep -q '/bin/sh' "$t/rule"
ok $? "the rule names its commands only: no ALL, no shell"
sim_sudoers mini1 "$t/rule" && sim_sudoers mini2 "$t/rule"
ok $? "the rule installed as the only rule of mini1 and mini2"
sim_ssh mini2 'sudo -n true' < /dev/null > /dev/null 2>&1
a=$?
sim_ssh mini2 'sudo -n /bin/sh -c :' < /dev/null > /dev/null 2>&1
b=$?
ok $((a == 0 || b == 0)) "under it sudo -n true and sudo -n /bin/sh are refused"

_all_state "$t/before"
_mark
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup \
    --output-hostfile "$t/hf.json" < /dev/null > "$t/out" 2> "$t/err"
r=$?
ok $r "--auto-setup under the rule: exit 0"
[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -20
! grep -q 'do not have passwordless sudo' "$t/err"
ok $? "... no warning about sudo"
grep -qx '\[#\] mini2: sudo -n ifconfig en2 inet 192.168.0.2 netmask 255.255.255.252' "$t/err"
ok $? "the commands echoed as before"
bad=
for h in mini1 mini2; do
	ne=$(grep -c "^\[#\] $h: " "$t/err")
	nl=$(_log_from $h | grep -c 'COMMAND=/sbin/\(ifconfig\|route\) ')
	_log_from $h | grep -q 'COMMAND=/bin/sh\|password is required' && bad="$bad $h:sh-or-refused"
	[ "$ne" -gt 0 ] && [ "$ne" = "$nl" ] || bad="$bad $h:$ne/$nl"
done
is "$bad" "" "one sudo per command echoed, by its path, on each host (sudo's logs); no /bin/sh"
sim_exec mini1 ip -4 -o addr show dev en2 | grep -q ' 192.168.0.1/30 ' &&
    sim_exec mini2 ip -4 -o addr show dev en2 | grep -q ' 192.168.0.2/30 ' &&
    sim_exec mini1 ping -c1 -W2 -I en2 192.168.0.2 > /dev/null 2>&1
ok $? "the /30 is on both ends of the cable and the peer answers"

"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$st" > "$t/out" 2> "$t/err"
r=$?
ok $r "restore under the rule: exit 0"
[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -20
_all_state "$t/after"
cmp -s "$t/before" "$t/after"
ok $? "restore puts both hosts back as they were"
cmp -s "$t/before" "$t/after" || diff -u "$t/before" "$t/after" | sed 's/^/# /' | head -20

_mark
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup --persist \
    --output-hostfile "$t/hf.json" < /dev/null > "$t/out" 2> "$t/err"
r=$?
ok $r "--auto-setup --persist under the rule: exit 0"
[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -20
_svcs mini2 | grep -qx 'jaccl-config Thunderbolt 1' && _svcs mini2 | grep -qx '\*Thunderbolt Bridge'
ok $? "mini2 has its service and the bridge's service is off (its networksetup)"
grep -q '^\[#\] mini2: sudo -n networksetup -createnetworkservice ' "$t/err" &&
    _log_from mini2 | grep -q "COMMAND=/usr/sbin/networksetup -createnetworkservice 'jaccl-config Thunderbolt 1' 'Thunderbolt 1'$"
ok $? "networksetup ran, under its own sudo (the echo, sudo's log)"
"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$st" > "$t/out" 2> "$t/err"
ok $? "restore after --persist: exit 0"
_all_state "$t/after"
cmp -s "$t/before" "$t/after"
ok $? "... both hosts as they were, services included"
cmp -s "$t/before" "$t/after" || diff -u "$t/before" "$t/after" | sed 's/^/# /' | head -20

# a rollback: mini2's third privileged command fails (fail-sudo)
echo 3 > "$SIM_DIR/hosts/mini2/fail-sudo"
_mark
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup \
    --output-hostfile "$t/hf.json" < /dev/null > "$t/out" 2> "$t/err"
r=$?
rm -f "$SIM_DIR/hosts/mini2/fail-sudo" "$SIM_DIR/hosts/mini2/fail-sudo.count"
is "$r" 5 "a failure on mini2's third command: every host put back (exit 5)"
grep -q 'every host was put back as it was' "$t/err"
ok $? "... and said so"
_log_from mini2 | grep -q 'COMMAND=/sbin/ifconfig bridge0 addm en2$\|COMMAND=/sbin/ifconfig bridge0 up$' &&
    ! _log_from mini2 | grep -q 'password is required'
ok $? "the rollback's commands ran under the rule (sudo's log)"
_all_state "$t/after"
cmp -s "$t/before" "$t/after"
ok $? "... both hosts as they were"
cmp -s "$t/before" "$t/after" || diff -u "$t/before" "$t/after" | sed 's/^/# /' | head -20

# a rule without --persist's commands: the gate names them, nothing runs
"$JACCL_CONFIG" sudoers > "$t/rule2" 2>&1 && sim_sudoers mini2 "$t/rule2"
ok $? "the rule of a plain setup (no hosts, no --persist) installed on mini2"
: > "$(sim_mutations mini1)"
: > "$(sim_mutations mini2)"
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$t/st2" --auto-setup --persist \
    < /dev/null > "$t/out" 2> "$t/err"
grep -q "^ -  mini2: /usr/sbin/networksetup -createnetworkservice jaccl-config Thunderbolt 1 Thunderbolt 1" "$t/err" &&
    ! grep -q '^ -  mini1' "$t/err" && ! grep -q '^\[#\]' "$t/err"
ok $? "--auto-setup --persist: mini2's missing commands named, none run"
is "$(cat "$(sim_mutations mini1)" "$(sim_mutations mini2)")" "" "... no host changed"

# doctor's sudo check: mini2 scoped without route, mini1 with macOS's sudoers alone
printf 'admin ALL = (root) NOPASSWD: /sbin/ifconfig\n' > "$t/rule3"
printf '# nothing without a password\n' > "$t/rule4"
sim_sudoers mini2 "$t/rule3" && sim_sudoers mini1 "$t/rule4"
ok $? "mini2: a rule for ifconfig alone; mini1: no rule"
"$JACCL_CONFIG" doctor --json -F "$cfg" $slow --hosts "$hosts" --state-dir "$t/st3" > "$t/doc.json" 2> "$t/doc.err"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["checks"] if c["name"] == "sudo"][0]
for f in c["findings"]:
    print(f["host"], f["status"], f["message"])' "$t/doc.json" > "$t/doc.sudo"
grep -q '^mini1 warning sudo: none ' "$t/doc.sudo"
ok $? "doctor: mini1's sudo is none, a warning"
grep -q '^mini2 warning sudo: scoped, but the rule does not allow without a password: /sbin/route -n add -host 192.168.0.1 -interface en2, /sbin/route -n delete -host 192.168.0.1$' "$t/doc.sudo"
ok $? "doctor: mini2's sudo is scoped, the route commands (the setup's, the rollback's) named as missing"
[ $? -eq 0 ] || diag "$(cat "$t/doc.sudo")"
done_testing
