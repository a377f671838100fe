# SPDX-License-Identifier: MIT
# Helpers of the doctor tests (sourced after tests/lib/sim.sh).

# dr_setup_cmds CLUSTER_JSON: print "HOST<TAB>COMMAND" lines that set a
# simulated cluster up the way mlx.distributed_config does: the Thunderbolt
# Bridge down on every host, then cable k gets 192.168.k.1/30 on its first
# end and 192.168.k.2/30 on its second.
dr_setup_cmds() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for h in d["hosts"]:
    if h.get("personality", "mac") == "mac":
        print(f"{h['name']}\tsudo ifconfig bridge0 down")
for k, c in enumerate(d["cables"]):
    print(f"{c['a']}\tsudo ifconfig {c['a_if']} inet 192.168.{k}.1 netmask 255.255.255.252")
    print(f"{c['b']}\tsudo ifconfig {c['b_if']} inet 192.168.{k}.2 netmask 255.255.255.252")
PY
}

# dr_setup: run dr_setup_cmds on the current simulated cluster over ssh.
dr_setup() {
	dr_setup_cmds "$(sim_cluster_json)" | while IFS='	' read -r _dr_h _dr_c; do
		sim_ssh "$_dr_h" "$_dr_c" </dev/null >/dev/null || return 1
	done
}
