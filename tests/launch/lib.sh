# SPDX-License-Identifier: MIT
# Helpers (sourced after tests/lib/tap.sh and tests/lib/sim.sh) for the
# launcher's tests: clusters under their own namespace prefix (lv...) and
# management networks (10.235.0-127.x, claimed like sim.sh's; cables get
# /30s in 10.235.128-255.x, which only exist inside the namespaces), cable addresses
# set by hand, hostfiles written from the cluster description, and a check
# that nothing of ours is left running on the hosts.

# lv_claim_net: claim a free 10.235.x/24 (same lock folder as sim.sh).
lv_claim_net() {
	mkdir -p "$SIM_LOCKDIR" 2>/dev/null
	for _lv_k in $(seq $(( ($$ + _sim_seq * 37) % 128 )) 127) $(seq 0 127); do
		_lv_cand=10.235.$_lv_k
		mkdir "$SIM_LOCKDIR/$_lv_cand" 2>/dev/null || continue
		echo $$ > "$SIM_LOCKDIR/$_lv_cand/pid"
		if ip -4 -o addr show 2>/dev/null | grep -F " $_lv_cand." >/dev/null; then
			rm -rf "${SIM_LOCKDIR:?}/$_lv_cand"
			continue
		fi
		SIM_NET=$_lv_cand
		return 0
	done
	return 1
}

# lv_up TOPOLOGY: sim_up with an lv prefix and a 10.235.x network.
lv_up() {
	SIM_TOPO=$SIM_TOPODIR/$1.json
	_sim_seq=$((_sim_seq + 1))
	lv_claim_net || return 1
	SIM_PREFIX=lv$(printf %x $$)t$_sim_seq
	SIM_DIR=${TMPDIR:-/tmp}/jc-sim.launch.$SIM_PREFIX
	_sim_live="$_sim_live $SIM_DIR|$SIM_PREFIX|$SIM_NET"
	if ! _sim_env bash "$SIM_SIMCLUSTER" up "$SIM_TOPO" >&2; then
		sim_down
		return 1
	fi
}

# lv_address: give every cable of the current cluster its own /30 (the
# a end .1, the b end .2) on 10.235.(128+cluster).x, as configure would.
lv_address() {
	python3 - "$SIM_DIR/cluster.json" > "$t/addr.tsv" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for i, cb in enumerate(c["cables"]):
    print(cb["a"], cb["a_if"], cb["b"], cb["b_if"], i)
PY
	_lv_base=$(( 128 + ${SIM_NET##*.} ))
	while read -r a aif b bif i; do
		_lv_net=$((i * 4))
		ip -n "$(sim_ns "$a")" addr add "10.235.$_lv_base.$((_lv_net + 1))/30" dev "$aif" || return 1
		ip -n "$(sim_ns "$b")" addr add "10.235.$_lv_base.$((_lv_net + 2))/30" dev "$bif" || return 1
	done < "$t/addr.tsv"
}

# lv_hostfile FILE BACKEND [RING]: write the hostfile of the current cluster
# (hosts in topology order, or in the order given by RING, a comma list):
# ssh name, management IP, rdma matrix from the cables (rdma_<if>; for
# jaccl-ring only the cells of ring neighbours).
lv_hostfile() {
	python3 - "$SIM_DIR/cluster.json" "$SIM_DIR/hosts.tsv" "$2" "${3:-}" > "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
ips = {}
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("\t")
    ips[f[0]] = f[3]
names = [h["name"] for h in c["hosts"]]
if sys.argv[4]:
    names = sys.argv[4].split(",")
n = len(names)
m = [[None] * n for _ in range(n)]
for cb in c["cables"]:
    if cb["a"] not in names or cb["b"] not in names:
        continue
    i, j = names.index(cb["a"]), names.index(cb["b"])
    for (r, p, d) in ((i, j, cb["a_if"]), (j, i, cb["b_if"])):
        v = "rdma_" + d
        m[r][p] = v if m[r][p] is None else (m[r][p] if isinstance(m[r][p], list) else [m[r][p]]) + [v]
if sys.argv[3] == "jaccl-ring":
    m = [[m[i][j] if j in ((i + 1) % n, (i - 1) % n) else None for j in range(n)] for i in range(n)]
hf = {"backend": sys.argv[3], "envs": [],
      "hosts": [{"ssh": h, "ips": [ips[h]], "rdma": m[k]} for k, h in enumerate(names)]}
json.dump(hf, sys.stdout, indent=4)
PY
}

# lv_leftovers PATTERN: print the processes matching PATTERN (pgrep -f)
# inside any host of the current cluster (nothing when none).
lv_leftovers() {
	for _lv_h in $(sim_hosts | tr , ' '); do
		for _lv_p in $(ip netns pids "$(sim_ns "$_lv_h")" 2>/dev/null); do
			{ tr "\0" " " < "/proc/$_lv_p/cmdline"; } 2>/dev/null | grep -E -- "$1" |
			    sed "s/^/$_lv_h: /"
		done
	done
}

# okd STATUS DESCRIPTION FILE...: ok, and when it failed the end of each
# FILE as diagnostics.
okd() {
	_lv_s=$1
	_lv_d=$2
	shift 2
	ok "$_lv_s" "$_lv_d"
	[ "$_lv_s" = 0 ] || diag "$(tail -n 20 "$@" 2>/dev/null)"
}

# isd GOT WANT DESCRIPTION FILE...: is, with okd's diagnostics.
isd() {
	_lv_g=$1
	_lv_w=$2
	_lv_d=$3
	shift 3
	is "$_lv_g" "$_lv_w" "$_lv_d"
	[ "$_lv_g" = "$_lv_w" ] || diag "$(tail -n 20 "$@" 2>/dev/null)"
}
