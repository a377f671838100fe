#!/bin/sh
# SPDX-License-Identifier: MIT
# Other tools that manage a Mac's network, on stock simulated Macs (topology
# tests/doctor/topologies/managers.json): mini1 has exo's LaunchDaemon
# loaded and running and exo's location active (exo #2279), mini2 a plist
# of OdyssAI-X's daemon that launchd has not loaded and a location "Home"
# of its owner's (no Automatic left), mini3 a network service of oMLX's.
# - the hosts' own commands (launchctl print, networksetup, ls) say so first;
# - doctor's other-managers check names each, an error where it acts now and
#   a warning where it does not, with the commands that remove it;
# - --auto-setup --persist refuses while mini1's are there, naming them, and
#   changes nothing on any host; a plain --auto-setup does not even ask;
# - the remedies, run on the hosts as printed, remove them (the hosts' own
#   commands say so), the check then has nothing to say of mini1 and mini3,
#   and --persist goes through (mini2's warnings do not stop it).
. "${top_srcdir:-.}/tests/lib/tap.sh"
. "${top_srcdir:-.}/tests/lib/sim.sh"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require
sim_require_stock
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed to read the JSON reports"
SIM_STOCK=1 sim_up "$top_srcdir/tests/doctor/topologies/managers.json" 2>"$t/up.err" ||
    { echo "Bail out! cannot bring the stock Macs up: $(tail -3 "$t/up.err")"; exit 1; }
cfg=$(sim_ssh_config)
hosts=mini1,mini2,mini3

cat >"$t/q.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["name"]: x for x in d["checks"]}
if sys.argv[2] == "status":
    print(c[sys.argv[3]]["status"])
else:   # "host|status|remedy" or "host|message" of a check's findings
    for f in c[sys.argv[3]]["findings"]:
        if sys.argv[2] == "remedies":
            print(f"{f['host']}|{f['status']}|{f['remedy']}")
        else:
            print(f"{f['host']}|{f['message']}")
PY
doctor() {
	"$JACCL_CONFIG" doctor --json -F "$cfg" --hosts "$hosts" >"$t/out.json" 2>"$t/err"
}
q() { python3 "$t/q.py" "$t/out.json" "$@"; }
mutations() { for h in mini1 mini2 mini3; do cat "$(sim_mutations "$h")"; done; }

# --- what the hosts themselves say ---------------------------------------
sim_ssh mini1 'launchctl print system/io.exo.networksetup' </dev/null >"$t/lc" 2>&1
ok $? "mini1: launchctl knows exo's daemon"
grep -q '	pid = 412' "$t/lc"
ok $? "... and it runs (pid 412)"
is "$(sim_ssh mini1 'ls /Library/LaunchDaemons; networksetup -getcurrentlocation' </dev/null)" \
    "io.exo.networksetup.plist
exo" "mini1: the plist is there, the location is exo's"
sim_ssh mini2 'launchctl print system/ai.odyssai.keepalive' </dev/null >/dev/null 2>&1
is $? 113 "mini2: launchctl does not know OdyssAI-X's daemon (not loaded)"
is "$(sim_ssh mini2 'ls /Library/LaunchDaemons; networksetup -listlocations' </dev/null)" \
    "ai.odyssai.keepalive.plist
Home" "mini2: its plist is there; Home is the only location"
sim_ssh mini3 'networksetup -listallnetworkservices' </dev/null | grep -qx 'oMLX Link'
ok $? "mini3: oMLX's service is there"

# --- doctor ----------------------------------------------------------------
doctor
is "$(q status other-managers)" error "doctor: other-managers is an error"
is "$(q remedies other-managers)" \
    "mini1|error|sudo networksetup -switchtolocation Automatic && sudo networksetup -deletelocation exo
mini1|error|sudo launchctl bootout system/io.exo.networksetup && sudo rm /Library/LaunchDaemons/io.exo.networksetup.plist
mini2|warning|sudo networksetup -createlocation Automatic populate && sudo networksetup -switchtolocation Automatic
mini2|warning|sudo rm /Library/LaunchDaemons/ai.odyssai.keepalive.plist
mini3|error|sudo networksetup -removenetworkservice 'oMLX Link'" \
    "doctor: each finding, its severity and the commands that remove it"
q messages other-managers >"$t/msgs"
grep -q "^mini1|exo's LaunchDaemon io.exo.networksetup (loaded, running as pid 412): .*(exo #2279)" "$t/msgs"
ok $? "doctor: exo's daemon named with its pid and what it does"
grep -q "^mini2|OdyssAI-X's LaunchDaemon ai.odyssai.keepalive (.*not loaded until the next boot): launchd loads it at the next boot" "$t/msgs"
ok $? "doctor: the plist not loaded is said to come back at the next boot"
grep -q "^mini2|the active network location \"Home\", not Automatic: " "$t/msgs"
ok $? "doctor: the owner's own location named"

# --- --persist refuses, and changes nothing ------------------------------
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" --auto-setup --persist >"$t/p.out" 2>"$t/p.err"
rc=$?
ok $((rc == 0)) "--persist beside exo's daemon and location: refused (exit $rc)"
grep -q "mini1: --persist refused while exo's network location \"exo\", the active one is there: .*remove it first: sudo networksetup -switchtolocation Automatic" "$t/p.err"
ok $? "... naming mini1's and what removes it" || sed 's/^/# /' "$t/p.err"
is "$(mutations)" "" "... and no host was changed"

for h in mini1 mini2 mini3; do : >"$(sim_calls "$h")"; done
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" --auto-setup >"$t/s.out" 2>"$t/s.err"
ok $? "a setup that is not persistent goes on"
cat "$(sim_calls mini1)" "$(sim_calls mini2)" "$(sim_calls mini3)" |
    grep -E 'launchctl|-getcurrentlocation|-listlocations' >"$t/asked"
is "$(cat "$t/asked")" "" "... and does not ask for the other managers"

# --- the remedies, run as printed ----------------------------------------
q remedies other-managers | awk -F'|' '$1 != "mini2" {print $1 "|" $3}' >"$t/fixes"
while IFS='|' read -r h fix; do
	sim_ssh "$h" "$fix" </dev/null >>"$t/fix.log" 2>&1 || echo "$h: $fix" >>"$t/fix.failed"
done <"$t/fixes"
is "$(cat "$t/fix.failed" 2>/dev/null)" "" "the remedies of mini1 and mini3 ran"
sim_ssh mini1 'launchctl print system/io.exo.networksetup' </dev/null >/dev/null 2>&1
is $? 113 "mini1: exo's daemon booted out (launchctl)"
is "$(sim_ssh mini1 'ls /Library/LaunchDaemons; networksetup -getcurrentlocation; networksetup -listlocations' </dev/null)" \
    "Automatic
Automatic" "mini1: its plist gone, back on Automatic, exo's location deleted"
sim_ssh mini3 'networksetup -listallnetworkservices' </dev/null | grep -q oMLX
ok $((!$?)) "mini3: oMLX's service removed"

doctor
is "$(q remedies other-managers | cut -d'|' -f1,2)" "mini2|warning
mini2|warning" "doctor: only mini2's warnings are left"
is "$(q status other-managers)" warning "... a warning"
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" --auto-setup --persist >"$t/p2.out" 2>"$t/p2.err"
ok $? "--persist now goes through" || sed 's/^/# /' "$t/p2.err"
sim_ssh mini2 'networksetup -listallnetworkservices' </dev/null | grep -q '^jaccl-config Thunderbolt'
ok $? "... mini2 has the persistent services (its own networksetup)"
done_testing
