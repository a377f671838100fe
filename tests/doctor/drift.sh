#!/bin/sh
# SPDX-License-Identifier: MIT
# `jaccl-config doctor` finds drift and differing software on a live
# simulated cluster (3 Mac minis in a triangle, all RDMA-capable), set up
# with --auto-setup into a state directory of the test's own:
#  - everything equal after the setup: the new checks are ok, exit 0;
#  - an address taken off an interface in the kernel (as a reboot does):
#    drift names the address, its interface and the setup command, and
#    running that command makes it pass again;
#  - bridge0 up again with a member: drift names the member and the one
#    command, which makes it pass when run;
#  - one host with pmset sleep 10, one with an extra MLX_ variable in its
#    shell startup file, one with the firewall blocking all, one with
#    another MLX installed (package metadata in its user site-packages):
#    each found on that host only, with the values;
#  - the same cluster saved with `doctor --save` and replayed with
#    --state-dir gives the same findings;
#  - on a cluster with a Linux host, its environment is compared too, and
#    sleep and the firewall are left to the Macs.
# The expected values come from the test's own actions and from the files
# the setup wrote, never from the doctor's output.
. "${top_srcdir:-.}/tests/lib/tap.sh"
. "${top_srcdir:-.}/tests/lib/sim.sh"
sim_require
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed to read the JSON reports"
sim_up "$top_srcdir/tests/doctor/topologies/triangle3.json" ||
    { echo "Bail out! cannot bring the simulated cluster up"; exit 1; }
cfg=$(sim_ssh_config)
hosts=$(sim_hosts)
st=$t/state
slow="--connect-timeout 60 --command-timeout 300"
new="drift bridge-route software login-env sleep firewall"

cat >"$t/q.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["name"]: x for x in d["checks"]}
if sys.argv[2] == "status":
    print(" ".join(f"{n}={c[n]['status']}" for n in sys.argv[3:]))
elif sys.argv[2] == "findings":   # "host|status|message|remedy" of a check
    for f in c[sys.argv[3]]["findings"]:
        print(f"{f['host']}|{f['status']}|{f['message']}|{f['remedy']}")
PY

doctor() {
	"$JACCL_CONFIG" doctor --json -F "$cfg" --hosts "$hosts" --state-dir "$st" $slow "$@" \
	    >"$t/out.json" 2>"$t/err"
}
status() { python3 "$t/q.py" "$t/out.json" status "$@"; }
findings() { python3 "$t/q.py" "$t/out.json" findings "$1"; }
all_ok() { for c in $new; do printf '%s=ok ' "$c"; done | sed 's/ $//'; }

"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup \
    </dev/null >/dev/null 2>"$t/setup.err"
ok $? "the cluster is set up, its state recorded in the test's state directory"

[ -f "$st/cabling.json" ]
ok $? "the setup recorded its cabling in the state directory"

# everything equal
doctor
is "$?" 0 "all equal: exit 0"
is "$(status $new expected-cabling)" "$(all_ok | sed 's/software=ok/software=warning/') expected-cabling=ok" \
    "all equal: no finding in the new checks but software's, the cabling as the setup recorded it"
is "$(findings software | cut -d'|' -f1,2 | paste -sd' ' -)" "mini1|warning mini2|warning mini3|warning" \
    "all equal, no mlx anywhere: each host's Python without mlx is a warning, never a pass"

# the mini1 -- mini2 cable (Thunderbolt 1 at both ends) negotiates 40 Gb/s:
# the simulated hardware's link speed, on both Macs' buses
cp "$SIM_DIR/hosts/mini1/mac.json" "$t/mini1.mac.json"
cp "$SIM_DIR/hosts/mini2/mac.json" "$t/mini2.mac.json"
for h in mini1 mini2; do
	python3 - "$SIM_DIR/hosts/$h/mac.json" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
for bus in c["sp_thunderbolt"]:
    tag = bus.get("receptacle_1_tag", {})
    if tag.get("receptacle_id_key") == "1":
        tag["current_speed_key"] = "40 Gb/s"
json.dump(c, open(p, "w"))
PY
done
doctor
findings expected-cabling >"$t/f"
is "$(cut -d'|' -f1-3 "$t/f")" \
    "mini1|error|mini1 Thunderbolt 1 (en2) -- mini2 Thunderbolt 1 (en2) is downgraded to 40 Gb/s (expected 80 Gb/s)" \
    "downgraded: found against the cabling the setup recorded, without --expect"
cp "$t/mini1.mac.json" "$SIM_DIR/hosts/mini1/mac.json"
cp "$t/mini2.mac.json" "$SIM_DIR/hosts/mini2/mac.json"
doctor
is "$(status expected-cabling)" "expected-cabling=ok" "back at 80 Gb/s: as recorded"

# an address lost (the kernel's, as after a reboot without persistence)
read -r ifc addr peer <<EOF
$(python3 -c '
import glob, json, sys
h = json.load(open(glob.glob(sys.argv[1] + "/hosts/*-mini1.json")[0]))
a = h["addresses"][0]
print(a["iface"], a["ip"], a["peer_ip"])' "$st")
EOF
ip -n "$(sim_ns mini1)" addr flush dev "$ifc" scope global
ok $? "mini1 loses $addr on $ifc"
doctor
is "$?" 8 "address lost: exit 8"
findings drift >"$t/f"
is "$(cut -d'|' -f1-3 "$t/f")" \
    "mini1|error|planned address $addr on $ifc (to $peer) is missing ($ifc has no IPv4 address): addresses set without persistence are lost at a reboot" \
    "address lost: named with its interface and peer, on mini1 only"
fix=$(cut -d'|' -f4 "$t/f")
is "$fix" "jaccl-config --hosts $hosts --auto-setup --state-dir $st" "address lost: the fix is one setup command"
# the fix as printed (this build's binary for its name), with this test's ssh settings
"$JACCL_CONFIG" ${fix#jaccl-config } -F "$cfg" $slow </dev/null >/dev/null 2>"$t/fix.err"
ok $? "the fix runs"
ip -n "$(sim_ns mini1)" -4 -o addr show dev "$ifc" | grep -q " $addr/30 "
ok $? "the fix puts $addr back on $ifc (kernel)"
doctor
is "$(status drift)" "drift=ok" "after the fix: drift ok"

# the Thunderbolt Bridge back with a member
member=$(sim_port_if mini2 3)
sim_ssh mini2 "sudo ifconfig bridge0 up; sudo ifconfig bridge0 addm $member" >/dev/null
doctor
findings drift >"$t/f"
is "$(cut -d'|' -f1-2 "$t/f")" "mini2|error" "bridge back: found on mini2 only"
grep -q "bridge0 (Thunderbolt Bridge) is back up with members $member " "$t/f"
ok $? "bridge back: names the member $member"
fix=$(cut -d'|' -f4 "$t/f")
is "$fix" "sudo ifconfig bridge0 deletem $member" "bridge back: one command"
sim_ssh mini2 "$fix" >/dev/null
doctor
is "$(status drift)" "drift=ok" "after the fix: drift ok"
sim_ssh mini2 "sudo ifconfig bridge0 down" >/dev/null

# sleep, environment, firewall, MLX: each on one host
# where a command over ssh finds what this sets: the old Macs' bash reads
# ~/.bashrc, a stock Mac's zsh -c only ~/.zshenv; socketfilterfw is on the
# old Macs' PATH, on a stock Mac only at its own path; the jobs' Python is
# PATH's python3 on the old Macs, Homebrew's where PATH's is the stub
rc=.bashrc fw=socketfilterfw pyp=python3
if sim_stock mini1; then
	rc=.zshenv fw=/usr/libexec/ApplicationFirewall/socketfilterfw pyp=/opt/homebrew/bin/python3
fi
sim_ssh mini2 "sudo pmset -a sleep 10"
echo 'export MLX_METAL_FAST_SYNCH=1' >>"$SIM_DIR/hosts/mini3/home/$rc"
sim_ssh mini1 "sudo $fw --setblockall on" >/dev/null
sim_mlx mini3 0.29.1
ok $? "mini3 gets mlx 0.29.1's package metadata where its Python finds it"
pyp=$(sim_ssh mini1 "command -v $pyp")
py=$(sim_ssh mini1 "$pyp -c 'import sys; print(sys.version.split()[0])'")
doctor
is "$?" 8 "differences: exit 8"
is "$(status $new)" \
    "drift=ok bridge-route=ok software=error login-env=warning sleep=warning firewall=error" \
    "differences: the checks that fire"
is "$(findings sleep | cut -d'|' -f1,2,4)" "mini2|warning|sudo pmset -a sleep 0" \
    "sleep: mini2 only, with the fix"
findings sleep | grep -q 'after 10 minutes idle'
ok $? "sleep: the 10 minutes"
is "$(findings login-env | cut -d'|' -f1-3)" \
    "None|warning|MLX_METAL_FAST_SYNCH differs between hosts (commands started over SSH see it): mini1 (unset), mini2 (unset), mini3 \"1\"" \
    "environment: the variable with every host's value"
is "$(findings firewall | cut -d'|' -f1,2,4)" \
    "mini1|error|sudo /usr/libexec/ApplicationFirewall/socketfilterfw --setblockall off" \
    "firewall: block-all on mini1, with the fix"
is "$(findings software | cut -d'|' -f1-3)" \
    "mini1|error|no mlx in this Python ($pyp, Python $py), where the other hosts' jobs import mlx 0.29.1
mini2|error|no mlx in this Python ($pyp, Python $py), where the other hosts' jobs import mlx 0.29.1" \
    "software: MLX on mini3 only, the hosts without it named (Python $py everywhere: no Python finding)"

# the same, saved and replayed
doctor --save "$t/bundle"
cp "$t/out.json" "$t/live.json"
"$JACCL_CONFIG" doctor --json --from "$t/bundle" --state-dir "$st" >"$t/out.json" 2>"$t/err"
is "$?" 8 "replayed: exit 8"
is "$(status $new)" "$(python3 "$t/q.py" "$t/live.json" status $new)" "replayed: the same statuses"
for c in $new; do
	findings "$c"
done >"$t/replayed"
cp "$t/live.json" "$t/out.json"
for c in $new; do
	findings "$c"
done >"$t/live"
cmp -s "$t/live" "$t/replayed"
ok $? "replayed: the same findings"
"$JACCL_CONFIG" doctor --json --from "$t/bundle" >"$t/out.json" 2>"$t/err"
is "$(status drift)" "drift=unknown" "replayed without --state-dir: drift unknown, not a pass"

# a Linux host among Macs: its environment and Python are compared too;
# sleep and the firewall do not apply to it
sim_down
sim_up mixed || { echo "Bail out! cannot bring the mixed cluster up"; exit 1; }
cfg=$(sim_ssh_config)
hosts=$(sim_hosts)
echo 'export JACCL_TRACE=2' >>"$SIM_DIR/hosts/lx1/home/.bashrc"
sim_ssh mini1 "sudo pmset -a sleep 5"
doctor
is "$(status software login-env sleep firewall)" \
    "software=warning login-env=warning sleep=warning firewall=ok" "mixed: the checks that fire (no mlx anywhere: a warning)"
is "$(findings login-env | cut -d'|' -f3)" \
    "JACCL_TRACE differs between hosts (commands started over SSH see it): mini1 (unset), mini2 (unset), lx1 \"2\"" \
    "mixed: the Linux host's environment is read"
is "$(findings sleep | cut -d'|' -f1)" "mini1" "mixed: sleep on the Mac only"
done_testing
