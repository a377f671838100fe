#!/bin/sh
# SPDX-License-Identifier: MIT
# The simulated cluster itself: bring up Mac, Linux and mixed clusters, reach
# every host over ssh with the generated config, compare what the fake macOS
# commands say with the topology file, send real traffic over cables (IPv4
# and IPv6 link-local), unplug a cable, pull, replug elsewhere and slow down
# cables (simcluster's cable events), check the broken system_profiler
# option and the offline mode, compare the fast path of the fake commands
# with the python path (with KC_FAST=0: the python path alone), and check
# that teardown leaves nothing behind. With SIM_STOCK=1 the same on stock
# Macs (tests/sim/stock.sh tests what makes them stock).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
sim_require
FAKEMAC=$top_srcdir/tests/sim/fakemac
have_ping=0
command -v ping >/dev/null 2>&1 && have_ping=1

# check_hosts WANT_UNAME: every host answers over ssh with its own name
check_hosts() {
	for h in $(sim_hosts | tr , ' '); do
		is "$(sim_ssh "$h" 'hostname; uname -s' </dev/null 2>&1 | tr '\n' ' ')" "$h $1 " \
			"$h: ssh with the generated config, own hostname, uname $1"
	done
}

# collect CMD...: run CMD on every host over ssh, output in $t/out/HOST
collect() {
	rm -rf "$t/out"
	mkdir -p "$t/out"
	for h in $(sim_hosts | tr , ' '); do
		sim_ssh "$h" "$@" </dev/null > "$t/out/$h"
	done
}

# --- 2 Macs and 2 Linux hosts, up at the same time --------------------------
sim_up two-node
ok $? "two-node (2 Mac mini) up"
mac2=$SIM_DIR
mac2_ns=$(sim_ns h0)
sim_up linux-pair
ok $? "linux-pair up at the same time"
lin2=$SIM_DIR
isnt_net=0
[ "$(cut -f4 "$mac2/hosts.tsv" | head -1 | cut -d. -f1-3)" != "$SIM_NET" ] || isnt_net=1
ok $isnt_net "the two clusters have different management networks"
check_hosts Linux
sim_use "$mac2"
check_hosts Darwin
is "$(sim_ssh h0 'command -v system_profiler; ls /usr/sbin/system_profiler' </dev/null | wc -l)" 2 \
	"mac: fake system_profiler on PATH and at its macOS path"
sim_use "$lin2"
sim_ssh lx1 'command -v system_profiler networksetup ibv_devices ifconfig; ls /usr/sbin/system_profiler' \
	</dev/null >/dev/null 2>&1
ok $((!$?)) "linux: no fake macOS command anywhere"
is "$(sim_ssh lx1 'ls /sys/class/net | tr "\n" " "' </dev/null)" "eth0 eth1 eth2 lo " \
	"linux: real /sys shows eth0 (management) and eth1, eth2"
is "$(sim_ssh lx2 'sudo -n id -u' </dev/null)" 0 "linux: passwordless sudo"
sim_ssh lx1 'ip addr add 10.99.1.1/30 dev eth1' </dev/null &&
	sim_ssh lx2 'ip addr add 10.99.1.2/30 dev eth1' </dev/null
ok $? "linux: addresses on the cable with the real ip"
if [ $have_ping = 1 ]; then
	sim_ssh lx1 'ping -c 1 -W 5 10.99.1.2' </dev/null >/dev/null
	ok $? "linux: ping over the cable"
	sim_ssh lx1 'ping -6 -c 2 -W 5 ff02::1%eth1' </dev/null >/dev/null
	ok $? "linux: IPv6 ping to all nodes on eth1"
	ll2=$(sim_exec lx2 ip -6 -o addr show dev eth1 scope link | awk '{print $4}' | cut -d/ -f1)
	sim_exec lx1 ip -6 neigh show dev eth1 | grep -q "^$ll2 "
	ok $? "linux: lx2's link-local address ($ll2) is a neighbour of lx1 on eth1"
else
	skip "ping missing (iputils-ping): no traffic test on linux"
fi
sim_down
sim_use "$mac2"
sim_down
ip netns list | grep -q "^$mac2_ns\b"
ok $((!$?)) "namespaces gone after sim_down"
[ ! -e "$mac2" ] && [ ! -e "$lin2" ]
ok $? "state folders gone after sim_down"

# --- 4 Mac Studio mesh: fake outputs against the topology -------------------
topo=$top_srcdir/tests/sim/topologies/studio-mesh4.json
sim_up studio-mesh4
ok $? "studio-mesh4 up"
check_hosts Darwin
collect system_profiler SPThunderboltDataType -json
python3 - "$topo" "$t/out" <<'EOF'
import json, os, sys
topo = json.load(open(sys.argv[1]))
sp = {h["name"]: json.load(open(os.path.join(sys.argv[2], h["name"])))["SPThunderboltDataType"]
      for h in topo["hosts"]}
own = {b["domain_uuid_key"]: (h, int(b["receptacle_1_tag"]["receptacle_id_key"]))
       for h, buses in sp.items() for b in buses}
seen = set()
for h, buses in sp.items():
    for b in buses:
        for item in b.get("_items", []):
            peer = own[item["domain_uuid_key"]]
            me = (h, int(b["receptacle_1_tag"]["receptacle_id_key"]))
            back = [i["domain_uuid_key"] for pb in sp[peer[0]] for i in pb.get("_items", [])
                    if int(pb["receptacle_1_tag"]["receptacle_id_key"]) == peer[1]]
            assert back == [b["domain_uuid_key"]], (me, peer, back)
            seen.add(frozenset([me, peer]))
want = {frozenset([(c["a"], c["a_port"]), (c["b"], c["b_port"])]) for c in topo["cables"]}
assert seen == want, (seen, want)
EOF
ok $? "system_profiler: peers reciprocal, cables exactly as in the topology"
collect networksetup -listallhardwareports
python3 - "$topo" "$t/out" <<'EOF'
import json, os, re, sys
topo = json.load(open(sys.argv[1]))
for h in topo["hosts"]:
    text = open(os.path.join(sys.argv[2], h["name"])).read()
    got = dict(re.findall(r"Hardware Port: (Thunderbolt \d+)\nDevice: (en\d+)", text))
    assert got == topo["defaults"]["tb_map"], (h, got)
EOF
ok $? "networksetup: Thunderbolt N -> enX as in the topology"
collect ibv_devinfo
python3 - "$topo" "$t/out" <<'EOF'
import json, os, re, sys
topo = json.load(open(sys.argv[1]))
m = topo["defaults"]["tb_map"]
for h in topo["hosts"]:
    text = open(os.path.join(sys.argv[2], h["name"])).read()
    got = dict(re.findall(r"hca_id:\s+rdma_(en\d+)\n(?:.*\n)*?\s+state:\s+(\S+)", text))
    want = {v: "PORT_DOWN" for v in m.values()}
    for c in topo["cables"]:
        for e in "ab":
            if c[e] == h["name"]:
                want[m[f"Thunderbolt {c[e + '_port']}"]] = "PORT_ACTIVE"
    assert got == want, (h, got, want)
EOF
ok $? "ibv_devinfo: PORT_ACTIVE exactly on the cabled TB5 ports"
is "$(sim_ssh m3-ultra-1 ifconfig -l </dev/null)" \
	"lo0 gif0 stf0 anpi0 anpi1 en0 en1 en2 en3 en4 en5 en6 en7 ap1 awdl0 llw0 bridge0 utun0 utun1 utun2 utun3" \
	"ifconfig -l: the interfaces of a real Mac Studio"
sim_ssh m3-ultra-1 'sudo ifconfig en5 inet 10.99.2.1 netmask 255.255.255.252' </dev/null &&
	sim_ssh m3-ultra-2 'sudo ifconfig en5 inet 10.99.2.2 netmask 0xfffffffc' </dev/null
ok $? "fake ifconfig under sudo sets addresses"
is "$(sim_ssh m3-ultra-2 ipconfig getifaddr en5 </dev/null)" 10.99.2.2 "ipconfig getifaddr sees it"
sim_ssh m3-ultra-2 'ifconfig en5 inet 10.99.2.6 netmask 255.255.255.252' </dev/null 2>/dev/null
ok $((!$?)) "fake ifconfig without sudo is refused"
if [ $have_ping = 1 ]; then
	sim_exec m3-ultra-1 ping -c 1 -W 5 10.99.2.2 >/dev/null
	ok $? "real traffic over the en5 cable"
	sim_cable_down m3-ultra-1 3
	is "$(sim_ssh m3-ultra-2 ifconfig en5 </dev/null | grep status:)" "	status: inactive" \
		"cable unplugged at one end: the other end loses its carrier"
	sim_exec m3-ultra-1 ping -c 1 -W 1 10.99.2.2 >/dev/null 2>&1
	ok $((!$?)) "no traffic over an unplugged cable"
	sim_cable_up m3-ultra-1 en5
	is "$(sim_ssh m3-ultra-2 ifconfig en5 </dev/null | grep status:)" "	status: active" \
		"cable plugged back in"
else
	skip "ping missing (iputils-ping): no traffic test on macs"
fi
sim_snapshot "$t/snap"
grep -q "^en5 10.99.2.1/30" "$t/snap/m3-ultra-1.ip4.txt" &&
	grep -q "sudo=1 ifconfig en5 inet 10.99.2.1" "$t/snap/m3-ultra-1.mutations.txt"
ok $? "snapshot: addresses and recorded mutations"

# offline mode (used for the example bundles) says what the live host says
KC_STOCK=0 python3 "$FAKEMAC/simtopo.py" compile "$topo" "$t/offline" off "$SIM_NET"
for c in "system_profiler SPThunderboltDataType -json" "networksetup -listallhardwareports" \
	"ibv_devices" "ibv_devinfo" "ifconfig en3" "ifconfig en0"; do
	# shellcheck disable=SC2086
	live=$(sim_exec m3-ultra-3 $c)
	# shellcheck disable=SC2086
	off=$(FAKEMAC_OFFLINE=1 python3 "$FAKEMAC/fakemac.py" --simhost "$t/offline/hosts/m3-ultra-3" $c)
	is "$off" "$live" "offline mode: $c as on the live host"
done

# The fast path (KC_FAST=1, the default: a fakemacd per host and a compiled
# client as each command) and the python path say and do exactly the same:
# output, error output, exit status and calls.log line, command by command.
hd=$SIM_DIR/hosts/m3-ultra-2
if [ "${KC_FAST:-1}" = 1 ]; then
	pid=$(cat "$hd/fakemacd.pid" 2>/dev/null)
	tr '\0' ' ' <"/proc/${pid:-0}/cmdline" 2>/dev/null | grep -qF "fakemacd.py $hd "
	ok $? "fast path: m3-ultra-2 has its fakemacd running"
	served=0
else
	[ ! -e "$hd/fakemacd.pid" ] && [ ! -e "$SIM_DIR/fakemac-client" ]
	ok $? "KC_FAST=0: no fakemacd, no client"
	served=1
fi
# a program started by the fake sudo is a child of a fakemacd worker on the
# fast path (the worker served the command); on the python path the
# interpreter execs it, so its parent is the caller
stock=0
sim_stock m3-ultra-2 && stock=1
if [ $stock = 0 ]; then
	sim_exec m3-ultra-2 sudo sh -c 'tr "\0" " " </proc/$PPID/cmdline' >"$t/ppid" 2>&1
	grep -qF fakemacd.py "$t/ppid"
	is "$?" "$served" "sudo's program: the parent expected on this path ($(cat "$t/ppid"))"
else
	skip "stock Mac: sudo is the real one (no fake sudo to start programs)"
fi
# the python path: the hosts' copy of fakemac.py on the interpreter of the
# fakes (a stock Mac's python3 is Apple's; its sudo the real one, which
# runs that for a `sudo -n` line; its socketfilterfw off PATH). On a stock
# Mac the commands run over ssh, as admin: as root (exec) a command that
# changes the host would do so twice.
fm=$(sim_python)
run2() { # run2 CMD: CMD on m3-ultra-2 as this test's commands run there
	if [ $stock = 1 ]; then
		sim_ssh m3-ultra-2 "$1" </dev/null
	else
		# shellcheck disable=SC2086
		sim_exec m3-ultra-2 $1 </dev/null
	fi
}
fmpy=$SIM_DIR/fakemac/fakemac.py
: >"$t/paths"
n=0
while IFS= read -r c; do
	n=$((n + 1))
	slow="$fm -S $fmpy --simhost $hd $c"
	fast=$c
	if [ $stock = 1 ]; then
		case $c in
		"sudo -n true") slow=$c ;;
		"sudo -n "*) slow="sudo -n $fm -S $fmpy --simhost $hd ${c#sudo -n }" ;;
		socketfilterfw*) fast=/usr/libexec/ApplicationFirewall/$c ;;
		esac
	fi
	run2 "$fast" >"$t/fast.out" 2>"$t/fast.err"
	fs=$?
	fl=$(tail -n 1 "$hd/calls.log")
	run2 "$slow" >"$t/slow.out" 2>"$t/slow.err"
	ss=$?
	sl=$(tail -n 1 "$hd/calls.log")
	if cmp -s "$t/fast.out" "$t/slow.out" && cmp -s "$t/fast.err" "$t/slow.err" &&
	    [ "$fs" = "$ss" ] && [ "$fl" = "$sl" ]; then
		echo "same: $c" >>"$t/paths"
	else
		echo "DIFFERENT: $c (status $fs/$ss, log '$fl'/'$sl')" >>"$t/paths"
	fi
done <"$top_srcdir/tests/sim/fastpath-commands.txt"
is "$(grep -c '^same: ' "$t/paths")" "$n" "fast and python paths: same output, errors, status and log line ($n commands)"
grep -v '^same: ' "$t/paths" | while IFS= read -r l; do diag "$l"; done
# a fake command costs one exec, as a native one does: its wrapper is a
# one-line script whose interpreter is the client, so no shell runs; the
# client finds the host and the command from the wrapper's path, also when
# it is reached through the host's /usr/sbin link, and exports PWD as the
# shell of the python path does
if [ "${KC_FAST:-1}" = 1 ]; then
	is "$(cat "$hd/bin/ifconfig")" "#!$SIM_DIR/fakemac-client" \
		"fast path: the wrapper is '#!' and the client, nothing else"
	sim_exec m3-ultra-2 ifconfig en6 >"$t/w1" 2>&1
	if [ $stock = 1 ]; then sbin=/sbin; else sbin=/usr/sbin; fi   # where macOS has it
	sim_exec m3-ultra-2 $sbin/ifconfig en6 >"$t/w2" 2>&1
	sim_exec m3-ultra-2 sh -c 'cd "$1" && ./ifconfig en6' sh "$hd/bin" >"$t/w3" 2>&1
	grep -q '^en6: flags=' "$t/w1" && cmp -s "$t/w1" "$t/w2" && cmp -s "$t/w1" "$t/w3"
	ok $? "fast path: ifconfig by name, by $sbin/ifconfig and by ./ifconfig say the same"
	if [ $stock = 0 ]; then
		is "$(sim_exec m3-ultra-2 sh -c 'cd / && env -u PWD sudo env' | grep '^PWD=')" "PWD=/" \
			"fast path: a command started without PWD gets it, as from /bin/sh"
	else
		skip "stock Mac: no fake sudo to print its environment"
	fi
else
	for _i in 1 2 3; do skip "fast path off (KC_FAST=0): the wrappers run python"; done
fi
# the failure injection for sudo (tests/configure/sim-sudo.sh)
echo 2 >"$hd/fail-sudo"
rm -f "$hd/fail-sudo.count"
sim_exec m3-ultra-2 sudo -n true && sim_exec m3-ultra-2 sudo -n ifconfig en6 up &&
	! sim_exec m3-ultra-2 sudo -n ifconfig en6 up 2>"$t/fs.err" &&
	sim_exec m3-ultra-2 sudo -n ifconfig en6 up
ok $? "fail-sudo: the 2nd command through sudo fails, 'sudo true' is not counted"
is "$(cat "$t/fs.err")" "sudo: simulated failure (fail-sudo)" "fail-sudo: its message"
rm -f "$hd/fail-sudo" "$hd/fail-sudo.count"
# FAKEMAC_OFFLINE in the caller's environment holds on this path too: en6
# has 10.99.4.1 now (above), which the offline mode does not see
sim_exec m3-ultra-2 ifconfig en6 | grep -q 'inet 10.99.4.1 '
ok $? "en6 has its address on the live host"
is "$(sim_exec m3-ultra-2 env FAKEMAC_OFFLINE=1 ifconfig en6)" \
	"$(FAKEMAC_OFFLINE=1 python3 "$FAKEMAC/fakemac.py" --simhost "$t/offline/hosts/m3-ultra-2" ifconfig en6)" \
	"FAKEMAC_OFFLINE=1 through the wrapper: the offline output (no address)"

# cable events: unplug, replug elsewhere, speed; the fakes and the kernel
# change together, as a real Mac shows them (an idle receptacle as in the
# capture tests/captures/osaurus-m5max-mbp-pair)
idle_tag=$top_srcdir/tests/captures/osaurus-m5max-mbp-pair/local/system_profiler-SPThunderboltDataType.json
# bus H R: the JSON of H's Thunderbolt bus of receptacle R, with the
# capture's idle receptacle tag for comparison when it has no device
bus() {
	sim_exec "$1" system_profiler SPThunderboltDataType -json | python3 -c '
import json, sys
r, cap = sys.argv[1], json.load(open(sys.argv[2]))
idle = [b["receptacle_1_tag"] for b in cap["SPThunderboltDataType"]
        if b["receptacle_1_tag"]["receptacle_status_key"] == "receptacle_no_devices_connected"][0]
for b in json.load(sys.stdin)["SPThunderboltDataType"]:
    t = b["receptacle_1_tag"]
    if t["receptacle_id_key"] == r:
        items = b.get("_items", [])
        same_idle = {k: v for k, v in t.items() if k != "receptacle_id_key"} == \
            {k: v for k, v in idle.items() if k != "receptacle_id_key"}
        print(len(items), t["current_speed_key"].replace(" ", "_"), t["link_status_key"],
              items[0]["domain_uuid_key"] if items else "-", b["domain_uuid_key"],
              "idle-as-captured" if same_idle else "not-idle")' "$2" "$idle_tag"
}
rdma_state() { sim_exec "$1" ibv_devinfo -d "rdma_$2" | sed -n 's/^[[:space:]]*state:[[:space:]]*\([A-Z_]*\).*/\1/p'; }
status_of() { sim_exec "$1" ifconfig "$2" | sed -n 's/^[[:space:]]*status: //p'; }
sim_unplug m3-ultra-1 en5
ok $? "unplug m3-ultra-1 en5 (cabled to m3-ultra-2 en5)"
for e in "m3-ultra-1 3 en5" "m3-ultra-2 3 en5"; do
	set -- $e
	is "$(bus "$1" "$2" | cut -d' ' -f1,6)" "0 idle-as-captured" \
		"unplugged: $1's receptacle $2 shows no device, its tag as a real idle one"
	is "$(status_of "$1" "$3")" inactive "unplugged: $1 ifconfig $3 status inactive"
	is "$(rdma_state "$1" "$3")" PORT_DOWN "unplugged: $1 rdma_$3 PORT_DOWN"
	is "$(ip -n "$(sim_ns "$1")" -o link show "$3" | grep -c NO-CARRIER)" 1 \
		"unplugged: the kernel's $1 $3 has no carrier"
done
is "$(sim_exec m3-ultra-1 ipconfig getifaddr en5)" 10.99.2.1 "unplugged: the port keeps its address"
sim_unplug m3-ultra-1 en5 2>"$t/err"
ok $((!$?)) "unplug of a port without a cable fails"
grep -q "no cable on m3-ultra-1 en5" "$t/err"
ok $? "and says so"
sim_plug m3-ultra-1 en5 m3-ultra-3 en4 2>"$t/err"
ok $((!$?)) "plug onto a port that has a cable fails"
grep -q "m3-ultra-3 en4 already has a cable" "$t/err"
ok $? "and says so"
sim_plug m3-ultra-1 en5 m3-ultra-3 en6
ok $? "plug m3-ultra-1 en5 to m3-ultra-3 en6 (TB5, free)"
b1=$(bus m3-ultra-1 3) b3=$(bus m3-ultra-3 5)
is "$(echo "$b1" | cut -d' ' -f4)" "$(echo "$b3" | cut -d' ' -f5)" \
	"replugged: m3-ultra-1's peer is m3-ultra-3's TB5 bus (domain UUID)"
is "$(echo "$b3" | cut -d' ' -f4)" "$(echo "$b1" | cut -d' ' -f5)" "and the other way round"
is "$(echo "$b1" | cut -d' ' -f1-3)" "1 80_Gb/s 0x2" "replugged: one device at 80 Gb/s, linked"
is "$(status_of m3-ultra-1 en5) $(status_of m3-ultra-3 en6) $(status_of m3-ultra-2 en5)" \
	"active active inactive" "replugged: both new ends active, the old peer still inactive"
is "$(rdma_state m3-ultra-1 en5) $(rdma_state m3-ultra-3 en6)" "PORT_ACTIVE PORT_ACTIVE" \
	"replugged: RDMA active on both ends"
if [ $have_ping = 1 ]; then
	ip -n "$(sim_ns m3-ultra-3)" addr add 10.99.2.2/30 dev en6 &&
		sim_exec m3-ultra-1 ping -c 1 -W 5 10.99.2.2 >/dev/null
	ok $? "replugged: real traffic over the new cable (the address came along)"
else
	skip "ping missing (iputils-ping): no traffic test"
fi
sim_speed m3-ultra-3 en6 40
ok $? "the cable now at 40 Gb/s"
is "$(bus m3-ultra-1 3 | cut -d' ' -f2) $(bus m3-ultra-3 5 | cut -d' ' -f2)" "40_Gb/s 40_Gb/s" \
	"40 Gb/s: both ends say so"
is "$(rdma_state m3-ultra-1 en5) $(rdma_state m3-ultra-3 en6)" "PORT_DOWN PORT_DOWN" \
	"40 Gb/s: RDMA down on both ends, as a Mac's TB4 link"
sim_speed m3-ultra-3 en6 fast 2>/dev/null
ok $((!$?)) "a speed that is not a number is refused"
# moved back where it was: every host says what a fresh host of the topology says
ip -n "$(sim_ns m3-ultra-3)" addr del 10.99.2.2/30 dev en6
sim_plug m3-ultra-1 en5 m3-ultra-2 en5
ok $? "moved back to m3-ultra-2 en5 (80 Gb/s, the default)"
for h in m3-ultra-1 m3-ultra-2 m3-ultra-3 m3-ultra-4; do
	for c in "system_profiler SPThunderboltDataType -json" "ibv_devinfo"; do
		# shellcheck disable=SC2086
		is "$(sim_exec $h $c)" \
			"$(FAKEMAC_OFFLINE=1 python3 "$FAKEMAC/fakemac.py" --simhost "$t/offline/hosts/$h" $c)" \
			"after the events: $h $c as for the topology"
	done
done
is "$(status_of m3-ultra-2 en5)" active "after the events: m3-ultra-2 en5 active again"
if [ "${KC_FAST:-1}" = 1 ]; then
	# no daemon: the client runs the command the old way
	pid=$(cat "$hd/fakemacd.pid")
	kill "$pid"
	k=0
	while [ $k -lt 200 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.05
		k=$((k + 1))
	done
	is "$(sim_exec m3-ultra-2 rdma_ctl status; echo "rc=$?")" "enabled
rc=0" "fakemacd stopped: the commands still work (python path)"
fi

# network services (networksetup) and a reboot, on m3-ultra-4: the services
# and their configuration survive it, what ifconfig and route did does not
h4=m3-ultra-4
ns4=$(sim_ns $h4)
svc_hdr='An asterisk (*) denotes that a network service is disabled.'
is "$(sim_exec $h4 networksetup -listnetworkserviceorder)" "$svc_hdr
(1) Ethernet
(Hardware Port: Ethernet, Device: en0)

(2) Thunderbolt Bridge
(Hardware Port: Thunderbolt Bridge, Device: bridge0)

(3) Wi-Fi
(Hardware Port: Wi-Fi, Device: en1)" "services: a fresh Mac's, in order"
is "$(sim_ssh $h4 "networksetup -createnetworkservice 'pe Thunderbolt 1' 'Thunderbolt 1'" </dev/null; echo "rc=$?")" \
	"** Error: Command requires admin privileges.
rc=14" "services: creating one needs root"
sim_exec $h4 sudo -n networksetup -createnetworkservice 'pe Thunderbolt 1' 'Thunderbolt 1' &&
	sim_exec $h4 sudo -n networksetup -setmanual 'pe Thunderbolt 1' 10.99.8.1 255.255.255.252 &&
	sim_exec $h4 sudo -n networksetup -setnetworkserviceenabled 'Thunderbolt Bridge' off
ok $? "services: create, set manual, bridge's service off (under sudo)"
is "$(sim_exec $h4 sudo -n networksetup -createnetworkservice 'pe Thunderbolt 1' en2; echo "rc=$?")" \
	"** Error: The parameters were not valid.
rc=4" "services: a second service of that name is refused"
is "$(sim_exec $h4 networksetup -listallnetworkservices)" "$svc_hdr
Ethernet
*Thunderbolt Bridge
Wi-Fi
pe Thunderbolt 1" "services: -listallnetworkservices marks the disabled one"
is "$(ip -n "$ns4" -4 -o addr show dev en2 | awk '{print $4}')" "10.99.8.1/30" \
	"services: -setmanual puts the address on en2 at once (kernel state)"
is "$(sim_exec $h4 networksetup -getinfo 'pe Thunderbolt 1' | sed -n 1,4p)" "Manual Configuration
IP address: 10.99.8.1
Subnet mask: 255.255.255.252
Router: (null)" "services: -getinfo"
is "$(sim_exec $h4 networksetup -getnetworkserviceenabled 'Thunderbolt Bridge')" "Disabled" \
	"services: -getnetworkserviceenabled"
# what only ifconfig and route did: an address on en3, a host route, bridge0 emptied
sim_exec $h4 sudo -n ifconfig en3 inet 10.99.9.1 netmask 255.255.255.252 &&
	sim_exec $h4 sudo -n route -n add -host 10.99.9.2 -interface en3 &&
	sim_exec $h4 sudo -n ifconfig bridge0 deletem en4
ok $? "before the reboot: ifconfig and route changes"
sim_reboot $h4
ok $? "sim_reboot $h4"
is "$(ip -n "$ns4" -4 -o addr show | awk '$2 != "lo" && $2 != "en0" {print $2, $4}')" \
	"en2 10.99.8.1/30" "after the reboot: only the service's address is on a Thunderbolt port (kernel state)"
ip -n "$ns4" -4 route show | grep -q '10.99.9.2'
ok $((!$?)) "after the reboot: the host route is gone"
sim_exec $h4 ifconfig bridge0 >"$t/br4"
grep -q 'flags=8822<' "$t/br4" && grep -q 'member: en4 ' "$t/br4"
ok $? "after the reboot: bridge0 has its members back, down (its service is disabled)"
sim_exec $h4 sudo -n networksetup -setnetworkserviceenabled 'pe Thunderbolt 1' off
is "$(ip -n "$ns4" -4 -o addr show dev en2 | wc -l)" "0" "services: disabling one takes its address away"
sim_exec $h4 sudo -n networksetup -setnetworkserviceenabled 'pe Thunderbolt 1' on
is "$(ip -n "$ns4" -4 -o addr show dev en2 | awk '{print $4}')" "10.99.8.1/30" \
	"services: enabling it puts it back"
sim_exec $h4 sudo -n networksetup -removenetworkservice 'pe Thunderbolt 1' &&
	sim_exec $h4 sudo -n networksetup -setnetworkserviceenabled 'Thunderbolt Bridge' on
ok $? "services: remove ours, bridge's service on"
is "$(ip -n "$ns4" -4 -o addr show dev en2 | wc -l)" "0" "services: removing one takes its address away"
is "$(sim_ssh $h4 "networksetup -removenetworkservice 'pe Thunderbolt 1'" </dev/null; echo "rc=$?")" \
	"** Error: Command requires admin privileges.
rc=14" "services: removing needs root"
is "$(sim_exec $h4 sudo -n networksetup -removenetworkservice 'pe Thunderbolt 1'; echo "rc=$?")" \
	"pe Thunderbolt 1 is not a recognized network service.
** Error: The parameters were not valid.
rc=4" "services: removing one that is not there"
sim_reboot $h4
sim_exec $h4 ifconfig bridge0 | grep -q 'flags=8863<UP'
ok $? "reboot: bridge0 up again (its service is enabled)"
is "$(ip -n "$ns4" -4 -o addr show | awk '$2 != "lo" && $2 != "en0"' | wc -l)" "0" \
	"reboot: no address on a Thunderbolt port without a service"
sim_down

# --- broken system_profiler, RDMA off, sudo with a password -------------------
sim_up garbage
ok $? "garbage topology up"
sim_exec mini2 system_profiler SPThunderboltDataType -json > "$t/sp2" &&
	! python3 -m json.tool "$t/sp2" >/dev/null 2>&1 && [ -s "$t/sp2" ]
ok $? "mini2: system_profiler prints garbage (exit 0)"
sim_exec mini1 system_profiler SPThunderboltDataType -json | python3 -m json.tool >/dev/null
ok $? "mini1: system_profiler is valid JSON"
is "$(sim_exec mini2 ibv_devices | wc -l)" 5 "mini2: the rest is unchanged (3 RDMA devices)"
sim_down
KC_STOCK=0 python3 "$FAKEMAC/simtopo.py" compile "$top_srcdir/tests/sim/topologies/rdma-disabled.json" "$t/rd" x 10.0.0
KC_STOCK=0 python3 "$FAKEMAC/simtopo.py" compile "$top_srcdir/tests/sim/topologies/sudo-password.json" "$t/sp" x 10.0.0
fm() { FAKEMAC_OFFLINE=1 python3 "$FAKEMAC/fakemac.py" --simhost "$@"; }
is "$(fm "$t/rd/hosts/mini2" rdma_ctl status)" disabled "rdma-disabled: rdma_ctl status"
fm "$t/rd/hosts/mini2" ibv_devinfo >/dev/null 2>&1
is $? 255 "rdma-disabled: ibv_devinfo exits 255"
is "$(fm "$t/rd/hosts/mini1" ibv_devinfo -d rdma_en2 | grep state:)" "			state:			PORT_DOWN (1)" \
	"rdma-disabled: the peer's port is down"
is "$(fm "$t/sp/hosts/mini2" sudo -n true 2>&1; echo "rc=$?")" "sudo: a password is required
rc=1" "sudo-password: sudo -n fails"

# --- mixed Macs and Linux -----------------------------------------------------
sim_up mixed
ok $? "mixed topology up"
sim_exec mini1 system_profiler SPThunderboltDataType -json |
	python3 -c 'import json,sys; d=json.load(sys.stdin)["SPThunderboltDataType"]; sys.exit(0 if [i["_name"] for b in d for i in b.get("_items",[])] == ["lx1","Mac mini"] else 1)'
ok $? "mixed: a Mac sees the Linux box and the other Mac as peers"
is "$(sim_ssh lx1 'uname -s; ls /sys/class/net | tr "\n" " "' </dev/null | tr '\n' ' ')" \
	"Linux eth0 lo thunderbolt0 thunderbolt1 " "mixed: the Linux host is a plain Linux host"
if [ $have_ping = 1 ]; then
	sim_ssh mini1 'sudo ifconfig en3 inet 10.99.3.1 netmask 255.255.255.252' </dev/null &&
		sim_ssh lx1 'ip addr add 10.99.3.2/30 dev thunderbolt0' </dev/null &&
		sim_exec lx1 ping -c 1 -W 5 10.99.3.1 >/dev/null
	ok $? "mixed: traffic between the Mac and the Linux box"
fi
if [ "${KC_FAST:-1}" = 1 ]; then
	[ -s "$SIM_DIR/hosts/mini1/fakemacd.pid" ] && [ ! -e "$SIM_DIR/hosts/lx1/fakemacd.pid" ]
	ok $? "mixed: a fakemacd for the Mac, none for the Linux host"
fi
prefix=$SIM_PREFIX
dir=$SIM_DIR
sim_down

# --- nothing left ---------------------------------------------------------------
is "$(ip netns list 2>/dev/null | grep -c "^j$(printf %x $$)t")" 0 "no namespace of this test left"
is "$(ip -o link show 2>/dev/null | grep -c " j$(printf %x $$)t")" 0 "no link of this test left"
sleep 0.2
is "$(ps -eo args= | grep -F "$dir" | grep -vc grep)" 0 "no process of the last cluster left"
[ ! -e "$dir" ] && [ ! -e "${SIM_LOCKDIR}/$prefix" ]
ok $? "state folder gone"
done_testing
