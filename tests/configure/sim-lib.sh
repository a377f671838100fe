# SPDX-License-Identifier: MIT
# Shared part of the simulated-cluster tests of configure --auto-setup and
# restore (sourced after tests/lib/tap.sh and tests/lib/sim.sh):
#   apply_suite TOPOLOGY [rollback]
# brings the cluster up and checks that --auto-setup leaves the planned
# addresses on the interfaces and that each cable's peer answers on its /30
# address, that the hostfile passes check, that a second run changes
# nothing, that restore puts every host back; with "rollback", also that a
# sudo failure on one host's third command leaves every host as before
# (exit 5), and that when its rollback fails too the exit status says so (6).

# _hosts: the host names, one per line
_hosts() { sim_hosts | tr , '\n'; }

# _is_mac H: the host has the fake macOS commands
_is_mac() { [ -x "$SIM_DIR/hosts/$1/bin/ifconfig" ]; }

# _state FILE: every host's IPv4 addresses, routes and (Macs) bridge0 flags
# and members, sorted: what a setup changes and a restore must put back.
_state() {
	for h in $(_hosts); do
		echo "== $h"
		if _is_mac "$h"; then br='ifconfig bridge0'; else br=true; fi
		sim_exec "$h" sh -c "ip -4 -o addr show; echo '--'; ip -4 route show; echo '--'; $br" |
		    awk '
			/^--$/ { part++; next }
			part == 0 && $2 != "lo" { print $2, $4 | "sort"; next }
			part == 1 { print | "sort"; next }
			part == 2 && /^bridge0:/ { print $2; next }
			part == 2 && /member:/ { print "member", $2 | "sort" }'
	done > "$1" 2>&1
}

# _logmark H: remember where H's fake command log and (a stock Mac) sudo's own
# log end now: _sudo_runs, _priv_runs and _calls_since look at what follows
_logmark() {
	_m_s=0
	! sim_stock "$1" || _m_s=$(wc -l < "$SIM_DIR/hosts/$1/sudo.log")
	echo "$(wc -l < "$(sim_calls "$1")") $_m_s" > "$t/slmark.$1"
}
_logmark_calls() { cut -d' ' -f1 "$t/slmark.$1"; }
_logmark_sudo() { cut -d' ' -f2 "$t/slmark.$1"; }

# _calls_since H: H's fake command log after the mark
_calls_since() { tail -n +$(($(_logmark_calls "$1") + 1)) "$(sim_calls "$1")"; }

# _sudo_runs H: sudo invocations on H after the mark, the passwordless check
# `sudo -n true` left out: in the fake sudo's lines of the fake command log
# (the old Macs), in the real sudo's own log on a stock Mac
_sudo_runs() {
	if sim_stock "$1"; then
		tail -n +$(($(_logmark_sudo "$1") + 1)) "$SIM_DIR/hosts/$1/sudo.log" |
		    grep ' COMMAND=' | grep -vc ' COMMAND=/usr/bin/true$'
	else
		_calls_since "$1" | awk '$3 == "sudo" && !(NF == 5 && $4 == "-n" && $5 == "true")' | wc -l
	fi
}

# _priv_runs H: fake commands H ran as root (through sudo) after the mark
_priv_runs() { _calls_since "$1" | grep -c '^rc=[^ ]* sudo=1 '; }

# _sshd_lines H: lines in H's sshd log; _sshd_new H FROM TEXT: lines after
# FROM that hold TEXT
_sshd_lines() { wc -l < "$SIM_DIR/hosts/$1/sshd.log"; }
_sshd_new() { tail -n +$(($2 + 1)) "$SIM_DIR/hosts/$1/sshd.log" | grep -c "$3"; }

_mutations() {
	for h in $(_hosts); do
		_is_mac "$h" && cat "$(sim_mutations "$h")"
	done
}

apply_suite() {
	topo=$1
	sim_up "$topo" || { ok 1 "$topo: cluster up"; return 1; }
	cfg=$(sim_ssh_config)
	hosts=$(sim_hosts)
	nh=$(_hosts | wc -l)
	st=$t/state
	# generous bounds: the machine may be busy (no timing is asserted)
	slow="--connect-timeout 60 --command-timeout 300"
	_state "$t/before"

	for h in $(_hosts); do
		_sshd_lines "$h" > "$t/sshd0.$h"
		! _is_mac "$h" || _logmark "$h"
	done
	"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup \
	    --json --output-hostfile "$t/hf.json" < /dev/null > "$t/plan.json" 2> "$t/err"
	r=$?
	ok $r "$topo: --auto-setup succeeds"
	[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -20
	# sshd's own log: one login per host, two commands (the probe, the setup script)
	bad=
	for h in $(_hosts); do
		from=$(cat "$t/sshd0.$h")
		na=$(_sshd_new "$h" "$from" 'Accepted publickey') ns=$(_sshd_new "$h" "$from" 'Starting session: command')
		[ "$na" = 1 ] && [ "$ns" = 2 ] || bad="$bad $h:$na/$ns"
	done
	is "$bad" "" "$topo: one SSH login and two remote commands per host (sshd's logs)"
	# the plan: host iface address peer-address, one line per cable end
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["setup"] == "applied"
for h in d["plan"]:
    for a in h["addresses"]:
        print(h["host"], a["iface"], a["ip"], a["peer_ip"])' "$t/plan.json" > "$t/addrs"
	[ -s "$t/addrs" ]
	ok $? "$topo: --json gives the plan, with addresses, and says the setup was applied"
	grep -q '^\[#\] [^ ]*: sudo -n ' "$t/err"
	ok $? "$topo: each command shown as it runs ([#] host: command)"
	# one sudo per host, the commands run inside it: counted by the fakes
	bad= nmac=0
	for h in $(_hosts); do
		_is_mac "$h" || continue
		nmac=$((nmac + 1))
		ns=$(_sudo_runs "$h") np=$(_priv_runs "$h") ne=$(grep -c "^\[#\] $h: " "$t/err")
		[ "$ns" = 1 ] && [ "$np" = "$ne" ] && [ "$ne" -gt 0 ] || bad="$bad $h:$ns/$np/$ne"
	done
	if [ $nmac -gt 0 ]; then
		is "$bad" "" "$topo: one sudo per host, which ran every command echoed (the fakes' logs)"
	else
		skip "$topo: no fake command log (Linux hosts run the real commands)"
	fi

	bad=
	while read -r h ifc ip peer; do
		sim_exec "$h" ip -4 -o addr show dev "$ifc" | grep -q " $ip/30 " || bad="$bad $h:$ifc:$ip"
	done < "$t/addrs"
	is "$bad" "" "$topo: every planned /30 address is on its interface"
	bad=
	while read -r h ifc ip peer; do
		sim_exec "$h" ping -c1 -W1 -I "$ifc" "$peer" > /dev/null 2>&1 || bad="$bad $h:$ifc->$peer"
	done < "$t/addrs"
	is "$bad" "" "$topo: across every cable the peer answers on its /30 address"
	"$JACCL_CONFIG" check "$t/hf.json" > "$t/check" 2>&1
	ok $? "$topo: the hostfile written passes jaccl-config check"

	_state "$t/configured"
	_mutations > "$t/mut1"
	"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup \
	    --output-hostfile "$t/hf2.json" < /dev/null > "$t/out" 2> "$t/err"
	r=$?
	ok $r "$topo: a second run succeeds"
	[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -20
	is "$(grep -c 'already configured, nothing to change' "$t/err")" "$nh" \
	    "$topo: a second run says every host is already configured"
	! grep -q '^\[#\]' "$t/err"
	ok $? "$topo: a second run runs no command"
	_mutations > "$t/mut2"
	if [ -s "$t/mut1" ]; then
		cmp -s "$t/mut1" "$t/mut2"
		ok $? "$topo: a second run changes nothing (the fakes' mutation logs are unchanged)"
	else
		skip "$topo: no mutation log (Linux hosts run the real commands)"
	fi
	_state "$t/configured2"
	cmp -s "$t/configured" "$t/configured2"
	ok $? "$topo: ... and the addresses, routes and bridge are unchanged"
	cmp -s "$t/hf.json" "$t/hf2.json"
	ok $? "$topo: ... and the hostfile is the same"

	if [ "$nh" -eq 2 ]; then
		# one host undone alone, then set up again: the other keeps its saved state
		h1=$(_hosts | sed -n 2p)
		"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$st" --hosts "$h1" > "$t/out" 2> "$t/err"
		r=$?
		[ $r -eq 0 ] && [ "$(grep -c ': restored (' "$t/out")" = 1 ] && grep -q "^$h1: restored" "$t/out"
		ok $? "$topo: restore --hosts $h1 restores that host only"
		"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup \
		    --output-hostfile "$t/hf4.json" < /dev/null > "$t/out" 2> "$t/err"
		r=$?
		[ $r -eq 0 ] && [ "$(grep -c 'already configured, nothing to change' "$t/err")" = 1 ] &&
		    grep -q "^\[#\] $h1: " "$t/err" && ! grep -q "^\[#\] $(_hosts | sed -n 1p): " "$t/err"
		ok $? "$topo: set up again, only $h1 runs commands"
	fi
	"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$st" > "$t/out" 2> "$t/err"
	r=$?
	ok $r "$topo: restore succeeds"
	[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -20
	is "$(grep -c ': restored (' "$t/out")" "$nh" "$topo: restore reports every host"
	_state "$t/after"
	cmp -s "$t/before" "$t/after"
	ok $? "$topo: restore puts every host back as it was"
	cmp -s "$t/before" "$t/after" || diff -u "$t/before" "$t/after" | sed 's/^/# /' | head -30
	"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$st" > "$t/out" 2> "$t/err"
	r=$?
	[ $r -eq 0 ] && grep -q 'nothing to restore' "$t/out"
	ok $? "$topo: a second restore has nothing to restore"

	[ "${2:-}" = rollback ] || return 0
	victim=$(_hosts | sed -n 2p)
	if ! [ -x "$SIM_DIR/hosts/$victim/bin/sudo" ] && ! sim_stock "$victim"; then
		skip "$topo: this machine's own sudo runs on Linux hosts: no failure injection"
		return 0
	fi
	echo 3 > "$SIM_DIR/hosts/$victim/fail-sudo"
	! _is_mac "$victim" || _logmark "$victim"
	"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup \
	    --output-hostfile "$t/hf3.json" < /dev/null > "$t/out" 2> "$t/err"
	r=$?
	rm -f "$SIM_DIR/hosts/$victim/fail-sudo" "$SIM_DIR/hosts/$victim/fail-sudo.count"
	is "$r" 5 "$topo: sudo failing on $victim's third command fails the setup, every host put back (exit 5)"
	grep -q "$victim: .*failed (exit 1): sudo: simulated failure" "$t/err" &&
	    grep -q 'every host was put back as it was' "$t/err"
	ok $? "$topo: the failure names the host, the command and its stderr"
	if _is_mac "$victim"; then
		# the third command failed inside the host's one setup script: one sudo
		# for the setup (then one per undo command), three commands run as root
		# (the third refused by fail-sudo), and the script stopped there
		_calls_since "$victim" > "$t/vcalls"
		nundo=$(grep -c "^\[#\] $victim: .*(undo)" "$t/err")
		nsetup=$(grep "^\[#\] $victim: " "$t/err" | grep -vc '(undo)')
		[ "$(_sudo_runs "$victim")" = $((1 + nundo)) ] && [ "$nsetup" = 3 ] &&
		    [ "$(grep -c '^rc=[^ ]* sudo=1 ' "$t/vcalls")" = $((3 + nundo)) ]
		ok $? "$topo: ... the third command failed inside $victim's one sudo script, which stopped there (the fakes' log)"
	else
		skip "$topo: $victim runs the real commands: no fake command log"
	fi
	_state "$t/rolled"
	cmp -s "$t/before" "$t/rolled"
	ok $? "$topo: ... and every host is exactly as before"
	cmp -s "$t/before" "$t/rolled" || diff -u "$t/before" "$t/rolled" | sed 's/^/# /' | head -30
	[ ! -e "$t/hf3.json" ]
	ok $? "$topo: ... and no hostfile is written"
	"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$st" > "$t/out" 2> "$t/err"
	grep -q 'nothing to restore: the last setup failed and was rolled back' "$t/out"
	ok $? "$topo: restore after a rolled back setup has nothing to do"

	# sudo failing from the victim's third command on: its rollback fails too
	echo 3+ > "$SIM_DIR/hosts/$victim/fail-sudo"
	rm -f "$SIM_DIR/hosts/$victim/fail-sudo.count"
	"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup \
	    --json --output-hostfile "$t/hf5.json" < /dev/null > "$t/out" 2> "$t/err"
	r=$?
	rm -f "$SIM_DIR/hosts/$victim/fail-sudo" "$SIM_DIR/hosts/$victim/fail-sudo.count"
	is "$r" 6 "$topo: sudo failing on $victim from its third command on: exit 6 (not put back)"
	grep -q "$victim could not be put back" "$t/err" && grep -q 'rollback incomplete' "$t/err"
	ok $? "$topo: ... the message names the host that could not be put back"
	python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["error"]
assert e["code"] == "setup-not-restored" and e["status"] == 6, e
' "$t/out"
	ok $? "$topo: ... --json: the error document with code setup-not-restored"
	_state "$t/broken"
	! cmp -s "$t/before" "$t/broken"
	ok $? "$topo: ... and $victim is indeed not as before"
	"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$st" > "$t/out" 2> "$t/err"
	r=$?
	_state "$t/after2"
	[ $r -eq 0 ] && cmp -s "$t/before" "$t/after2"
	ok $? "$topo: ... restore then puts every host back"
}
