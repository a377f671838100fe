# SPDX-License-Identifier: MIT
# What a probe asks a Mac, and that asking less loses nothing.
# 1. Offline: for several topologies, a bundle of the commands the example
#    bundles were made with (uname, hostname, sysctl -n hw.model, sw_vers,
#    ibv_devices, ipconfig getifaddr en0/en1, ...) and a bundle of today's
#    probe commands (tests/parse/probe_cmds macos), both from the fake macOS
#    commands, give the same inventory (but for the routes, which only
#    today's probe reads), DOT and hostfile, and the same setup commands
#    but the route deletes today's probe knows are not needed.
# 2. Live: on a simulated cluster, a probe runs on every Mac exactly the
#    commands listed here, each once (the fake commands' calls.log), and
#    every host's frames are there; a plain --dot runs only what the cables
#    need, --dot -v all but sudo -n true (each graph the same as from the
#    probe's bundle), --auto-setup all with it.
. "$top_srcdir/tests/lib/tap.sh"
cmds=${top_builddir:-.}/tests/parse/probe_cmds
mb=$top_srcdir/tests/sim/make-bundle.sh
command -v python3 >/dev/null 2>&1 || skip_all "python3 missing"

# (the other managers' answer, a shell script only doctor and --persist
# run, is not one command the bundle's batch can run: tests/doctor/managers.sh
# runs it on the simulated Macs)
"$cmds" macos | grep -v "^other-managers.txt	" >"$t/cmds.tsv"
for topo in mini-ring4 studio-mesh4 rdma-disabled sudo-password mbp-pair dock-peer missing-cable; do
	sh "$mb" "$topo" "$t/old" >/dev/null 2>&1 &&
	    KC_BUNDLE_CMDS=$t/cmds.tsv sh "$mb" "$topo" "$t/new" >/dev/null 2>&1
	ok $? "$topo: bundles of the old and of today's commands"
	# the new bundle holds today's command set, not the old one
	[ -f "$t/new/$(ls "$t/new" | grep -v json | head -1)/sysctl.txt" ] &&
	    ! ls "$t"/new/*/ibv_devices.txt "$t"/new/*/ipconfig-getifaddr-en0.txt \
	    "$t"/new/*/sw_vers.txt >/dev/null 2>&1
	ok $? "$topo: today's bundle has sysctl.txt and no ibv_devices, ipconfig or sw_vers"
	for mode in "probe --json" "--dot" "--backend ring"; do
		# shellcheck disable=SC2086
		"$JACCL_CONFIG" $mode --from "$t/old" </dev/null >"$t/o.out" 2>"$t/o.err"
		ro=$?
		# shellcheck disable=SC2086
		"$JACCL_CONFIG" $mode --from "$t/new" </dev/null >"$t/n.out" 2>"$t/n.err"
		rn=$?
		# today's probe also reads the routes (netstat), which the old one did not
		if [ "$mode" = "probe --json" ]; then
			for f in o n; do
				python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for h in d["hosts"]:
    h.pop("routes")
    h["notes"] = [x for x in h["notes"] if not x.startswith("netstat -rn -f inet not captured")]
print(json.dumps(d, indent=2))' "$t/$f.out" >"$t/$f.cut" && mv "$t/$f.cut" "$t/$f.out"
			done
		fi
		# ... and knowing there is no route to a peer, deletes none before adding it
		if [ "$mode" = "--backend ring" ]; then
			grep -v '^sudo route -n delete -host ' "$t/o.out" >"$t/o.cut"
			mv "$t/o.cut" "$t/o.out"
		fi
		cmp -s "$t/o.out" "$t/n.out" && cmp -s "$t/o.err" "$t/n.err" && [ "$ro" = "$rn" ]
		ok $? "$topo: $mode: the same from both (exit $ro)"
		cmp -s "$t/o.out" "$t/n.out" || diag "$(diff "$t/o.out" "$t/n.out" | head -10)"
		cmp -s "$t/o.err" "$t/n.err" || diag "$(diff "$t/o.err" "$t/n.err" | head -10)"
	done
	# make-bundle puts host i at 192.168.1.(10+i) on en0
	"$JACCL_CONFIG" probe --json --from "$t/new" 2>/dev/null | grep -q '"mgmt_ip": "192.168.1.10"'
	ok $? "$topo: the management address is known without ipconfig"
	rm -rf "$t/old" "$t/new"
done

# live
. "$top_srcdir/tests/lib/sim.sh"
if [ -n "${JC_IN_PACKAGE_BUILD:-}" ] || [ "$(id -u)" -ne 0 ] || ! unshare -n true 2>/dev/null || [ ! -x /usr/sbin/sshd ]; then
	skip "live part: needs root, network namespaces and sshd (and no package build)"
	done_testing
	exit
fi
sim_up mini-ring4 2>"$t/up.err" || { diag "$(cat "$t/up.err")"; ok 1 "cluster up"; done_testing; exit; }
# calls H: the commands run on H, sorted: the fake commands' log, and each
# `sudo -n true` from the log of the fake sudo (the old Macs) or of the real
# one (a stock Mac: its sudo logs the command it ran, /usr/bin/true)
calls() {
	if sim_stock "$1"; then
		grep -v ' sudo -n true$' "$(sim_calls "$1")"
		sim_sudo_log "$1" | grep ' COMMAND=/usr/bin/true$' | sed 's/.*/rc=exec sudo=0 sudo -n true/'
	else
		cat "$(sim_calls "$1")"
	fi | sort
}
# forget: empty on every host the logs calls reads
forget() {
	for _h in $(sim_hosts | tr , ' '); do
		: >"$(sim_calls "$_h")"
		! sim_stock "$_h" || : >"$SIM_DIR/hosts/$_h/sudo.log"
	done
}
forget
"$JACCL_CONFIG" probe --json --hosts "$(sim_hosts)" -F "$(sim_ssh_config)" --save "$t/b" \
    >"$t/inv.json" 2>"$t/err"
is "$?" 0 "probe of 4 Macs: exit 0"
cat >"$t/want" <<'EOF'
rc=0 sudo=0 ibv_devinfo
rc=0 sudo=0 ifconfig -a
rc=0 sudo=0 netstat -rn -f inet
rc=0 sudo=0 networksetup -listallhardwareports
rc=0 sudo=0 rdma_ctl status
rc=0 sudo=0 sysctl hw.model kern.osproductversion kern.osversion
rc=0 sudo=0 system_profiler SPThunderboltDataType -json
rc=0 sudo=0 uname -sn
rc=exec sudo=0 sudo -n true
EOF
for h in $(sim_hosts | tr , ' '); do
	calls "$h" >"$t/got"
	cmp -s "$t/got" "$t/want"
	ok $? "$h: the 9 commands of the probe, each once"
	cmp -s "$t/got" "$t/want" || diag "$(diff "$t/want" "$t/got")"
	is "$(ls "$t/b/$h" | tr '\n' ' ')" \
	    "hostname.txt ibv_devinfo.txt ifconfig.txt netstat-rn-f-inet.txt networksetup-listallhardwareports.txt rdma_ctl-status.txt sudo-n-true.txt sysctl.txt system_profiler-SPThunderboltDataType.json uname.txt " \
	    "$h: every output saved"
	is "$(cat "$t/b/$h/uname.txt" "$t/b/$h/hostname.txt" | tr '\n' ' ')" "Darwin $h " \
	    "$h: uname.txt and hostname.txt from the one uname -sn"
done
python3 "$top_srcdir/tests/probe/cables.py" "$t/inv.json" "$(sim_cluster_json)" >"$t/cmp" 2>&1
ok $? "the cables found are the topology's cables"
diag "$(cat "$t/cmp")"

# calls_are WANT DESCRIPTION: on each host, the fake commands' log holds
# exactly the lines of WANT (in any order)
calls_are() {
	for h in $(sim_hosts | tr , ' '); do
		calls "$h" >"$t/got"
		cmp -s "$t/got" "$1"
		ok $? "$h: $2"
		cmp -s "$t/got" "$1" || diag "$(diff "$1" "$t/got")"
	done
}

# A plain --dot draws the cables: it asks only what they need (uname -sn,
# system_profiler, networksetup; mlx.distributed_config --dot reads the same
# two), and the DOT is the one the bundle saved above gives, which has
# every output. --dot -v (its nodes show the model and RDMA) runs the
# probe's commands but sudo -n true, and its DOT too is the bundle's.
forget
"$JACCL_CONFIG" --dot --hosts "$(sim_hosts)" -F "$(sim_ssh_config)" >"$t/live.dot" 2>"$t/err"
is "$?" 0 "--dot on 4 Macs: exit 0"
grep -e ' uname -sn$' -e ' networksetup ' -e ' system_profiler ' "$t/want" >"$t/want-dot"
calls_are "$t/want-dot" "--dot runs uname -sn, networksetup and system_profiler, each once"
"$JACCL_CONFIG" --dot --from "$t/b" >"$t/bundle.dot" 2>"$t/bundle.err"
cmp -s "$t/live.dot" "$t/bundle.dot" && grep -q -- '--' "$t/live.dot" &&
    cmp -s "$t/err" "$t/bundle.err"
ok $? "--dot: the same graph and messages live as from the bundle of every output"
forget
"$JACCL_CONFIG" --dot -v --hosts "$(sim_hosts)" -F "$(sim_ssh_config)" >"$t/live-v.dot" 2>"$t/err"
is "$?" 0 "--dot -v on 4 Macs: exit 0"
grep -v ' sudo -n true$' "$t/want" >"$t/want-dotv"
calls_are "$t/want-dotv" "--dot -v runs the probe's commands but sudo, each once"
"$JACCL_CONFIG" --dot -v --from "$t/b" >"$t/bundle-v.dot" 2>/dev/null
cmp -s "$t/live-v.dot" "$t/bundle-v.dot" && grep -q 'Mac16,11' "$t/live-v.dot"
ok $? "--dot -v: the same extended graph live as from the bundle, with the model"
# --auto-setup needs every host's answer to sudo -n true, once
forget
"$JACCL_CONFIG" --auto-setup --hosts "$(sim_hosts)" -F "$(sim_ssh_config)" \
    --state-dir "$t/state" --output-hostfile "$t/hf.json" >"$t/out" 2>"$t/err"
is "$?" 0 "--auto-setup on 4 Macs: exit 0"
for h in $(sim_hosts | tr , ' '); do
	is "$(calls "$h" | grep -c '^rc=exec sudo=0 sudo -n true$')" 1 \
	    "$h: --auto-setup asks sudo -n true once"
done
done_testing
