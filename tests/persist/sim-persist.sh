#!/bin/sh
# SPDX-License-Identifier: MIT
# configure --persist on the simulated cluster mini-ring4 (4 Mac minis, two
# cables each), judged by the hosts' own state, never by our output:
#  - after --auto-setup --persist and a reboot of every host, each planned
#    address is on its interface again (kernel state inside the host), the
#    peer answers across every cable and `jaccl-config verify` passes;
#  - a second --persist run changes nothing, and restore after it leaves
#    every host's network services exactly as before the first (the fake
#    networksetup's list) and its addresses, routes and bridge too;
#  - without --persist, a reboot loses the addresses (kernel state) and
#    doctor's ipv4 check reports every cable end; no service was touched;
#  - a persistent setup that fails on one host (its -setmanual) is rolled
#    back: every host's services and addresses as before.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/configure/sim-lib.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
sim_require
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"

topo=mini-ring4
sim_up $topo || { ok 1 "$topo: cluster up"; done_testing; exit; }
cfg=$(sim_ssh_config)
hosts=$(sim_hosts)
nh=$(_hosts | wc -l)
st=$t/state
slow="--connect-timeout 60 --command-timeout 300"

# _services FILE: every host's `networksetup -listnetworkserviceorder`
_services() {
	for h in $(_hosts); do
		echo "== $h"
		sim_exec "$h" networksetup -listnetworkserviceorder
	done > "$1" 2>&1
}

# _reboot_all: restart every host's network (what macOS does at boot)
_reboot_all() {
	for h in $(_hosts); do
		sim_reboot "$h" || return 1
	done
}

# _addrs PLAN.json: "host iface ip peer_ip" per cable end, from the plan
_addrs() {
	python3 -c '
import json, sys
for h in json.load(open(sys.argv[1]))["plan"]:
    for a in h["addresses"]:
        print(h["host"], a["iface"], a["ip"], a["peer_ip"])' "$1"
}

# _on_ifaces ADDRS: the cable ends whose address is missing (kernel state)
_missing() {
	while read -r h ifc ip peer; do
		ip -n "$(sim_ns "$h")" -4 -o addr show dev "$ifc" | grep -q " $ip/30 " ||
		    printf ' %s:%s:%s' "$h" "$ifc" "$ip"
	done < "$1"
}

_state "$t/before"
_services "$t/svc-before"
grep -q 'jaccl-config' "$t/svc-before"
ok $((!$?)) "$topo: no service of ours before"

# --- printed, not applied: the persistent commands follow mlx's ---------------
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --persist --output-hostfile "$t/hfp.json" \
    < /dev/null > "$t/printed" 2> "$t/err"
ok $? "$topo: --persist without --auto-setup prints the commands"
h0=$(_hosts | sed -n 1p)
p0=$(sim_port_if "$h0" 1)
grep -q "^sudo networksetup -createnetworkservice 'jaccl-config Thunderbolt 1' 'Thunderbolt 1'$" "$t/printed" &&
    grep -q "^sudo networksetup -setnetworkserviceenabled 'Thunderbolt Bridge' off$" "$t/printed"
ok $? "$topo: ... our service per port and the bridge's service off, quoted for the shell"
_services "$t/svc-printed"
cmp -s "$t/svc-before" "$t/svc-printed"
ok $? "$topo: ... and printing changes no service"

# --- --auto-setup --persist, then every host reboots --------------------------
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup --persist \
    --json --output-hostfile "$t/hf.json" < /dev/null > "$t/plan.json" 2> "$t/err"
r=$?
ok $r "$topo: --auto-setup --persist succeeds"
[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -20
_addrs "$t/plan.json" > "$t/addrs"
is "$(wc -l < "$t/addrs" | tr -d ' ')" "$((2 * nh))" "$topo: two cable ends per host planned"
is "$(_missing "$t/addrs")" "" "$topo: every planned address is set"
bad=
while read -r h ifc ip peer; do
	port=$(python3 -c '
import json, sys
c = json.load(open(sys.argv[1] + "/hosts/" + sys.argv[2] + "/mac.json"))
print(next(p["receptacle"] for p in c["tb_ports"] if p["if"] == sys.argv[3]))' "$SIM_DIR" "$h" "$ifc")
	sim_exec "$h" networksetup -getinfo "jaccl-config Thunderbolt $port" > "$t/info" 2>&1
	grep -q "^IP address: $ip$" "$t/info" && grep -q '^Subnet mask: 255.255.255.252$' "$t/info" ||
	    bad="$bad $h:$port"
done < "$t/addrs"
is "$bad" "" "$topo: each cable end has our service with its address and a /30 mask (networksetup -getinfo)"
bad=
for h in $(_hosts); do
	[ "$(sim_exec "$h" networksetup -getnetworkserviceenabled 'Thunderbolt Bridge')" = Disabled ] ||
	    bad="$bad $h"
done
is "$bad" "" "$topo: the Thunderbolt Bridge service is disabled on every host"
_services "$t/svc-set"
# _others FILE: the service list without ours (name, port line and blank
# line) and without the bridge's number (its enabled state is checked above)
_others() {
	awk '/^\([0-9*]+\) jaccl-config / { skip = 3 } skip > 0 { skip--; next } { print }' "$1" |
	    sed -E 's/^\([0-9*]+\) Thunderbolt Bridge$/(-) Thunderbolt Bridge/'
}
is "$(_others "$t/svc-set")" "$(_others "$t/svc-before")" \
    "$topo: no other service changed (Ethernet and Wi-Fi as they were, in order)"

_reboot_all
ok $? "$topo: every host rebooted"
is "$(_missing "$t/addrs")" "" "$topo: after the reboot every planned address is back (kernel state)"
bad=
while read -r h ifc ip peer; do
	sim_exec "$h" ping -c1 -W2 -I "$ifc" "$peer" > /dev/null 2>&1 || bad="$bad $h:$ifc->$peer"
done < "$t/addrs"
is "$bad" "" "$topo: after the reboot the peer answers across every cable"
"$JACCL_CONFIG" verify --hostfile "$t/hf.json" -F "$cfg" --connect-timeout 60 --timeout 120 \
    > "$t/verify" 2>&1
r=$?
ok $r "$topo: after the reboot jaccl-config verify passes"
[ $r -eq 0 ] || sed 's/^/# /' "$t/verify" | tail -20

# a second run after the reboot: the services are there, creating them fails
# harmlessly; what restore goes back to is still the state before the first
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup --persist \
    --output-hostfile "$t/hf1b.json" < /dev/null > "$t/out" 2> "$t/err"
r=$?
ok $r "$topo: a second --persist run succeeds"
[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -20
_services "$t/svc-set2"
cmp -s "$t/svc-set" "$t/svc-set2"
ok $? "$topo: ... and leaves the same services (none twice)"

# --- doctor's drift check reads the persisted services back ----------------------
# _drift: "status N" of doctor's drift check, then each finding's fix
_drift() {
	"$JACCL_CONFIG" doctor --hosts "$hosts" -F "$cfg" --connect-timeout 60 --state-dir "$st" \
	    --json > "$t/doctor.json" 2> "$t/err"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = next(c for c in d["checks"] if c["name"] == "drift")
print(c["status"], len(c["findings"]))
for f in c["findings"]:
    print(f["remedy"])
    print("#", f["message"])' "$t/doctor.json" 2>&1
}
svc="jaccl-config Thunderbolt 1"
ip0=$(awk -v h="$h0" -v i="$p0" '$1 == h && $2 == i { print $3 }' "$t/addrs")
is "$(_drift)" "ok 0" "$topo: doctor's drift check finds the persisted setup as it left it"
sim_exec "$h0" sudo networksetup -setmanual "$svc" 192.168.77.1 255.255.255.0 > /dev/null 2>&1
_drift > "$t/drift"
grep -qxF "sudo networksetup -setmanual '$svc' $ip0 255.255.255.252" "$t/drift"
ok $? "$topo: a service edited by hand is found, and the fix writes the planned address back"
sim_exec "$h0" sh -c "$(grep -m1 -e "^sudo networksetup -setmanual" "$t/drift")" > /dev/null 2>&1
is "$(_drift)" "ok 0" "$topo: ... and after the fix ran, nothing is found"
sim_exec "$h0" sudo networksetup -setnetworkserviceenabled "$svc" off > /dev/null 2>&1
_drift > "$t/drift"
grep -qxF "sudo networksetup -setnetworkserviceenabled '$svc' on" "$t/drift"
ok $? "$topo: a persisted service disabled by hand is found, with the command that enables it"
sim_exec "$h0" sudo networksetup -setnetworkserviceenabled "$svc" on > /dev/null 2>&1
sim_exec "$h0" sudo networksetup -setnetworkserviceenabled "Thunderbolt Bridge" on > /dev/null 2>&1
_drift > "$t/drift"
grep -qxF "sudo networksetup -setnetworkserviceenabled 'Thunderbolt Bridge' off" "$t/drift"
ok $? "$topo: the Thunderbolt Bridge service enabled again is found"
sim_exec "$h0" sudo networksetup -setnetworkserviceenabled "Thunderbolt Bridge" off > /dev/null 2>&1
is "$(_drift)" "ok 0" "$topo: ... and nothing once it is off again"

"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$st" > "$t/out" 2> "$t/err"
r=$?
ok $r "$topo: restore succeeds"
[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -20
grep -q "removenetworkservice 'jaccl-config Thunderbolt" "$t/err"
ok $? "$topo: restore removes our services"
_services "$t/svc-after"
cmp -s "$t/svc-before" "$t/svc-after"
ok $? "$topo: after restore every host's services are exactly as before"
cmp -s "$t/svc-before" "$t/svc-after" || diff -u "$t/svc-before" "$t/svc-after" | sed 's/^/# /' | head -20
_state "$t/after"
cmp -s "$t/before" "$t/after"
ok $? "$topo: ... and its addresses, routes and bridge too"
cmp -s "$t/before" "$t/after" || diff -u "$t/before" "$t/after" | sed 's/^/# /' | head -20
_reboot_all
is "$(ip -n "$(sim_ns "$h0")" -4 -o addr show dev "$p0" | wc -l | tr -d ' ')" "0" \
    "$topo: after restore and a reboot, no address comes back"

# --- without --persist a reboot loses the setup ------------------------------
for h in $(_hosts); do : > "$(sim_mutations "$h")"; done
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup \
    --json --output-hostfile "$t/hf2.json" < /dev/null > "$t/plan2.json" 2> "$t/err"
ok $? "$topo: --auto-setup without --persist succeeds"
is "$(_missing "$t/addrs")" "" "$topo: ... every planned address is set"
cat $(for h in $(_hosts); do sim_mutations "$h"; done) | grep -q networksetup
ok $((!$?)) "$topo: ... and no networksetup command ran (the fakes' mutation logs)"
_reboot_all
is "$(_missing "$t/addrs" | wc -w | tr -d ' ')" "$((2 * nh))" \
    "$topo: after the reboot every planned address is gone (kernel state)"
"$JACCL_CONFIG" doctor --hosts "$hosts" -F "$cfg" --connect-timeout 60 --json \
    > "$t/doctor.json" 2> "$t/err"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = next(c for c in d["checks"] if c["name"] == "ipv4")
print(c["status"], len(c["findings"]))' "$t/doctor.json" > "$t/ipv4" 2>&1
is "$(cat "$t/ipv4")" "error $((2 * nh))" \
    "$topo: doctor's ipv4 check reports every cable end without its address"
"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$st" > "$t/out" 2> "$t/err"
ok $? "$topo: restore after that reboot succeeds"
_services "$t/svc-after2"
cmp -s "$t/svc-before" "$t/svc-after2"
ok $? "$topo: ... and the services are as before"

# --- a persistent setup that fails on one host is rolled back ----------------
victim=$(_hosts | sed -n 3p)
n=$(python3 -c '
import json, sys
for h in json.load(open(sys.argv[1]))["plan"]:
    if h["host"] == sys.argv[2]:
        print(next(i for i, c in enumerate(h["commands"], 1) if "-setmanual" in c))' \
    "$t/plan.json" "$victim")
echo "$n" > "$SIM_DIR/hosts/$victim/fail-sudo"
rm -f "$SIM_DIR/hosts/$victim/fail-sudo.count"
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup --persist \
    --output-hostfile "$t/hf3.json" < /dev/null > "$t/out" 2> "$t/err"
r=$?
rm -f "$SIM_DIR/hosts/$victim/fail-sudo" "$SIM_DIR/hosts/$victim/fail-sudo.count"
is "$r" 5 "$topo: $victim's -setmanual (its command $n) failing fails the setup, every host put back (exit 5)"
grep -q "$victim: .*-setmanual .*failed (exit 1): sudo: simulated failure" "$t/err"
ok $? "$topo: ... the failure names the host and the networksetup command"
_services "$t/svc-rolled"
cmp -s "$t/svc-before" "$t/svc-rolled"
ok $? "$topo: ... every host's services are exactly as before"
cmp -s "$t/svc-before" "$t/svc-rolled" || diff -u "$t/svc-before" "$t/svc-rolled" | sed 's/^/# /' | head -20
_reboot_all
_state "$t/rolled"
cmp -s "$t/before" "$t/rolled"
ok $? "$topo: ... and after a reboot every host is as before (no address comes back)"
cmp -s "$t/before" "$t/rolled" || diff -u "$t/before" "$t/rolled" | sed 's/^/# /' | head -20
done_testing
