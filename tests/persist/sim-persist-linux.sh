#!/bin/sh
# SPDX-License-Identifier: MIT
# configure --persist on Linux hosts (simulated linux-pair) whose network
# NetworkManager sets up at boot (enabled in a private /etc/systemd of each
# host, netmgr-lib.sh): the persistent part is a NetworkManager connection
# per cable interface (nmcli). Printed, the commands follow ip's; applied on
# hosts where nmcli does not answer (this machine's own commands: no nmcli),
# the setup stops before anything changes (the services query fails),
# judged by the hosts' kernel state.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/configure/sim-lib.sh"
. "$top_srcdir/tests/persist/netmgr-lib.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require
topo=linux-pair
sim_up $topo || { ok 1 "$topo: cluster up"; done_testing; exit; }
cfg=$(sim_ssh_config)
hosts=$(sim_hosts)
st=$t/state
slow="--connect-timeout 60 --command-timeout 300"
h1=$(_hosts | sed -n 1p)
for h in $(_hosts); do
	_netmgr_etc "$h" NetworkManager
done

"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --persist --output-hostfile "$t/hfp.json" \
    < /dev/null > "$t/printed" 2> "$t/err"
ok $? "$topo: --persist without --auto-setup prints the commands"
grep -q "^sudo nmcli connection add type ethernet ifname eth1 con-name 'jaccl-config eth1' ipv4.method manual ipv4.addresses 192.168.0.[12]/30 ipv6.method ignore$" "$t/printed"
ok $? "$topo: ... a NetworkManager connection with the planned address per cable interface"

if sim_exec "$h1" sh -c 'command -v nmcli' > /dev/null 2>&1; then
	skip "$topo: nmcli is installed here: the hosts may have NetworkManager, no refusal to see"
	done_testing
	exit 0
fi
_state "$t/before"
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup --persist \
    --output-hostfile "$t/hf.json" < /dev/null > "$t/out" 2> "$t/err"
r=$?
is "$r" 5 "$topo: --auto-setup --persist without NetworkManager fails (exit 5)"
[ "$r" -eq 5 ] || sed 's/^/# /' "$t/err" | tail -20
grep -q 'cannot list the network services (nmcli -t -f NAME,DEVICE connection show: exit 127): .*nmcli.*; nothing was changed on any host' "$t/err"
ok $? "$topo: ... saying why: nmcli not found, nothing changed"
grep -q '^\[#\]' "$t/err"
ok $((!$?)) "$topo: ... and no command ran"
_state "$t/after"
cmp -s "$t/before" "$t/after"
ok $? "$topo: ... and every host is exactly as before (kernel state)"
[ ! -e "$t/hf.json" ]
ok $? "$topo: ... and no hostfile is written"
done_testing
