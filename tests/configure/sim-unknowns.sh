#!/bin/sh
# SPDX-License-Identifier: MIT
# A named unknown, and a setup that asks nothing twice, on one cluster of
# two Macs (two-node):
#  - h1's netstat answers something that is not netstat -rn output (then
#    nothing at all): --auto-setup still sets up both hosts, says h1's
#    routes are unknown naming the command, and that the cables' subnets
#    were not checked against them;
#  - the prior state comes from the probe's own ifconfig -a and netstat -rn:
#    no `ifconfig IF` nor `route -n get` before the commands (the fakes'
#    logs), but on h1 the route to its peer, which its netstat did not
#    tell; restore still puts both hosts back;
#  - h1's ifconfig -a not understood: a note, its addresses asked again
#    before its commands, the setup goes on.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/configure/sim-lib.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require
sim_up two-node || { ok 1 "cluster up"; done_testing; exit 1; }
cfg=$(sim_ssh_config)
hosts=$(sim_hosts)
slow="--connect-timeout 60 --command-timeout 300"
fake=$SIM_DIR/hosts/h1/bin/netstat
cp "$fake" "$t/netstat.orig"

_state "$t/before"
printf '#!/bin/sh\necho "netstat: this is not a routing table"\n' > "$fake"
for h in h0 h1; do wc -l < "$(sim_calls $h)" > "$t/from.$h"; done
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$t/st" --auto-setup \
    --output-hostfile "$t/hf.json" < /dev/null > "$t/out" 2> "$t/err"
r=$?
ok $r "--auto-setup with h1's netstat answer not understood: exit 0"
[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -10
grep -q '^jaccl-config: h1: routes unknown (netstat -rn -f inet: not netstat -rn output.*): the cables.* subnets were not checked against its routes$' "$t/err" &&
    ! grep -q '^jaccl-config: h0: routes unknown' "$t/err"
ok $? "... h1's routes named unknown with the command, h0's not"
[ $? -eq 0 ] || diag "$(cat "$t/err")"
sim_exec h0 ip -4 -o addr show dev en2 | grep -q ' 192.168.0.1/30 ' &&
    sim_exec h1 ip -4 -o addr show dev en2 | grep -q ' 192.168.0.2/30 '
ok $? "... and both ends of the cable got their address"
for h in h0 h1; do
	tail -n +$(($(cat "$t/from.$h") + 1)) "$(sim_calls $h)" |
	    grep -E ' (ifconfig (en[0-9]+|bridge0)|route -n get [0-9.]+)$' | grep -v ' sudo=1 ' |
	    sed 's/^[^ ]* [^ ]* //' > "$t/q.$h"
done
is "$(cat "$t/q.h0")" "" "h0's prior state came from its probe: no ifconfig IF, no route -n get (the fakes' log)"
is "$(cat "$t/q.h1")" "route -n get 192.168.0.1" \
    "h1's too, but the route to its peer, asked since its netstat was not understood"
"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$t/st" > "$t/out" 2> "$t/err"
ok $? "restore: exit 0"
_state "$t/after"
cmp -s "$t/before" "$t/after"
ok $? "... both hosts as they were"
cmp -s "$t/before" "$t/after" || diff -u "$t/before" "$t/after" | sed 's/^/# /' | head -20

printf '#!/bin/sh\nexit 0\n' > "$fake"
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$t/st2" --auto-setup \
    < /dev/null > "$t/out" 2> "$t/err"
r=$?
ok $r "--auto-setup with no netstat answer at all: exit 0"
grep -q '^jaccl-config: h1: routes unknown (netstat -rn -f inet not captured; routes unknown)' "$t/err"
ok $? "... h1's routes named unknown"
"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$t/st2" > /dev/null 2>&1
cp "$t/netstat.orig" "$fake"

# h1's ifconfig -a not understood (ifconfig IF as usual): its addresses
# unknown, asked again before its commands, the setup goes on
ifc=$SIM_DIR/hosts/h1/bin/ifconfig
cp "$ifc" "$t/ifconfig.orig"
# the fake is "#!CLIENT": the kernel runs it as CLIENT PATH ARGS
client=$(sed -n '1s/^#!//p' "$ifc")
printf '#!/bin/sh\n[ "$1" = -a ] && { echo "ifconfig: not this time"; exit 0; }\nexec "%s" "%s" "$@"\n' \
    "$client" "$ifc" > "$ifc.new" && chmod 755 "$ifc.new" && mv "$ifc.new" "$ifc"
from=$(wc -l < "$(sim_calls h1)")
"$JACCL_CONFIG" probe -F "$cfg" $slow --hosts h1 > "$t/probe.out" 2>&1
grep -q 'ifconfig.txt: not ifconfig output.*; its interface addresses unknown' "$t/probe.out"
ok $? "probe: h1's ifconfig -a not understood, a note naming it, not an error"
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$t/st3" --auto-setup \
    < /dev/null > "$t/out" 2> "$t/err"
r=$?
ok $r "--auto-setup with h1's ifconfig -a not understood: exit 0"
[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -10
tail -n +$((from + 1)) "$(sim_calls h1)" | grep -c ' ifconfig en2$' > "$t/n"
sim_exec h1 ip -4 -o addr show dev en2 | grep -q ' 192.168.0.2/30 ' && [ "$(cat "$t/n")" = 1 ]
ok $? "... h1 set up, its interface's state asked before (the fakes' log)"
"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$t/st3" > /dev/null 2>&1
_state "$t/after"
cp "$t/ifconfig.orig" "$ifc"
cmp -s "$t/before" "$t/after"
ok $? "... and restore puts both back"
done_testing
