# SPDX-License-Identifier: MIT
# MLX's own tools as the judges of jaccl-config (sourced after
# tests/lib/tap.sh and tests/lib/sim.sh). MLX's code is not part of the
# project: it is looked for where JC_MLX_PEERS says, else in configure's
# MLX_PEER (which make check exports), else beside the source tree in
# $top_srcdir/../shared/peers/mlx, and a test that needs it skips with the
# reason when it is not there.
#
#   mlx_find, mlx_require        find MLX's tools (or skip the test)
#   mlx_up TOPOLOGY              a simulated cluster, MX_HOSTS its host list
#   mlx_config ARGS...           MLX's mlx.distributed_config on it
#   mlx_launch ARGS...           MLX's mlx.launch on it
#   mlx_dot; mlx_dot_same        both tools' --dot; equal
#   mlx_backend B; mlx_backend_same B
#                                both tools' hostfile for --backend B (auto:
#                                none) in manual mode; equal exit status,
#                                hostfile, setup commands, error messages
#   mlx_auto_setup_same          both tools' --auto-setup from the same
#                                state: equal hostfile and kernel state
# The files of the last runs are $t/m-B.* (MLX) and $t/j-B.* (ours).

# mlx_find: find MLX's tools (MLX_PEERS) and put an ssh first on PATH for
# them that reads the simulated cluster's ssh_config ($JC_MLX_SSH_CONFIG).
# Returns 1 with the reason in MLX_MISSING when they are not there.
mlx_find() {
	MLX_PEERS=${JC_MLX_PEERS:-${MLX_PEER:-$top_srcdir/../shared/peers/mlx}}
	if ! [ -f "$MLX_PEERS/bin/mlx.distributed_config" ] || ! [ -f "$MLX_PEERS/bin/mlx.launch" ]; then
		MLX_MISSING="MLX's tools not found in $MLX_PEERS (configure MLX_PEER= or set JC_MLX_PEERS to MLX's peers folder)"
		return 1
	fi
	MLX_PEERS=$(cd "$MLX_PEERS" && pwd)
	_mx_ssh=$(command -v ssh) || { MLX_MISSING="ssh missing (openssh-client)"; return 1; }
	# The connections are shared (ControlMaster): MLX opens one ssh
	# connection per remote command, which costs half a second each here;
	# what runs on the hosts is unchanged. mlx_done closes them.
	mkdir -p "$t/mlx-bin"
	cat > "$t/mlx-bin/ssh" <<EOS
#!/bin/sh
exec $_mx_ssh -F "\$JC_MLX_SSH_CONFIG" -o ControlMaster=auto -o "ControlPath=$t/cm-%C" \\
    -o ControlPersist=600 "\$@"
EOS
	chmod +x "$t/mlx-bin/ssh"
	MX_PY=$top_srcdir/tests/mlx/mlxcmp.py
	# generous bounds for ours: the machine may be busy (no timing is asserted)
	MX_SLOW="--connect-timeout 60 --command-timeout 300"
}

# mlx_require: mlx_find, or skip the whole test with the reason. The
# comparisons with MLX's tools run in the plain build: the sanitizer build
# runs the same code paths in the rest of the suite, and these tests spend
# their time in MLX's Python and the simulated hosts.
mlx_require() {
	plain_build_only "the comparisons with MLX's tools run in the plain build"
	mlx_find || skip_all "$MLX_MISSING"
}

# mlx_start TOPO: skip unless jaccl-config, the simulated cluster and MLX's
# tools are all here, then bring TOPO up (or bail out).
mlx_start() {
	[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
	sim_require
	mlx_require
	mlx_up "$1" || { echo "Bail out! cannot bring the simulated cluster up"; exit 1; }
}

# mlx_compare_all: every comparison of a topology where MLX is right: --dot,
# each --backend in manual mode, --auto-setup and the kernel's state, and
# the replay of the topology's bundle when data/examples has one.
mlx_compare_all() {
	mlx_dot
	mlx_dot_same
	for _mx_cb in jaccl jaccl-ring ring; do
		mlx_backend $_mx_cb
		mlx_backend_same $_mx_cb
	done
	mlx_auto_setup_same
	mlx_replay_same
}

# mlx_done: close the shared ssh connections of the current cluster.
mlx_done() {
	for _mx_h in $(echo "$MX_HOSTS" | tr , ' '); do
		JC_MLX_SSH_CONFIG=$MX_CFG "$t/mlx-bin/ssh" -O exit "$_mx_h" 2>/dev/null
	done
	return 0
}

# mlx_up TOPOLOGY: bring the cluster up; MX_HOSTS, MX_CFG.
mlx_up() {
	MX_TOPO=$1
	sim_up "$1" || return 1
	MX_HOSTS=$(sim_hosts)
	MX_CFG=$(sim_ssh_config)
	# open the shared connections with a patient timeout: MLX's own checks
	# allow 5 seconds, which a busy machine may need for a first connection
	for _mx_h in $(echo "$MX_HOSTS" | tr , ' '); do
		JC_MLX_SSH_CONFIG=$MX_CFG "$t/mlx-bin/ssh" -o ConnectTimeout=60 "$_mx_h" true ||
		    return 1
	done
}

# mlx_config ARGS...: MLX's tool on the current cluster. Its "Enter to
# continue" prompts are answered from standard input (an endless supply).
mlx_config() {
	yes '' | JC_MLX_SSH_CONFIG=$MX_CFG PATH="$t/mlx-bin:$PATH" env -u COLUMNS -u LINES \
	    sh "$MLX_PEERS/bin/mlx.distributed_config" "$@"
}

# mlx_launch ARGS...: MLX's launcher on the current cluster, bounded (a hang
# is a failure, not a stuck test).
mlx_launch() {
	JC_MLX_SSH_CONFIG=$MX_CFG PATH="$t/mlx-bin:$PATH" timeout 300 env -u COLUMNS -u LINES \
	    sh "$MLX_PEERS/bin/mlx.launch" "$@"
}

jc_config() {
	"$JACCL_CONFIG" -F "$MX_CFG" $MX_SLOW "$@" < /dev/null
}

# mlx_class STATUS: our exit status as MLX would give it. MLX has one
# failure status (1) beside argparse's 2; ours tells the failures apart
# (3-8: unreachable, cabling, setup, verification, doctor; see EXIT STATUS).
mlx_class() {
	case $1 in 0 | 2) echo "$1" ;; *) echo 1 ;; esac
}

mlx_dot() {
	mlx_config --hosts "$MX_HOSTS" --dot > "$t/m.dot" 2> "$t/m-dot.err"
	echo $? > "$t/m-dot.st"
	jc_config --hosts "$MX_HOSTS" --dot > "$t/j.dot" 2> "$t/j-dot.err"
	echo $? > "$t/j-dot.st"
}

mlx_dot_same() {
	is "$(mlx_class "$(cat "$t/j-dot.st")")" "$(cat "$t/m-dot.st")" "$MX_TOPO --dot: exit status as MLX's"
	cmp -s "$t/m.dot" "$t/j.dot"
	ok $? "$MX_TOPO --dot: the graph MLX draws"
	cmp -s "$t/m.dot" "$t/j.dot" || diag "$(diff -u "$t/m.dot" "$t/j.dot")"
}

# mlx_backend B: both tools in manual mode with --backend B (auto: none).
mlx_backend() {
	_mx_b=$1
	set -- --backend "$1"
	[ "$_mx_b" = auto ] && set --
	rm -f "$t/m-$_mx_b.json" "$t/j-$_mx_b.json"
	mlx_config --hosts "$MX_HOSTS" "$@" --output-hostfile "$t/m-$_mx_b.json" \
	    > "$t/m-$_mx_b.out" 2> "$t/m-$_mx_b.err"
	echo $? > "$t/m-$_mx_b.st"
	jc_config --hosts "$MX_HOSTS" "$@" --output-hostfile "$t/j-$_mx_b.json" \
	    > "$t/j-$_mx_b.out" 2> "$t/j-$_mx_b.err"
	echo $? > "$t/j-$_mx_b.st"
}

# _mx_show FILE...: the files as diagnostics
_mx_show() { for _mx_f in "$@"; do diag "== ${_mx_f##*/}" "$(head -40 "$_mx_f")"; done; }

# mlx_hostfile_same B: the same hostfile (byte for byte)
mlx_hostfile_same() {
	cmp -s "$t/m-$1.json" "$t/j-$1.json"
	ok $? "$MX_TOPO $1: the hostfile MLX writes"
	cmp -s "$t/m-$1.json" "$t/j-$1.json" ||
	    diag "$(diff -u "$t/m-$1.json" "$t/j-$1.json" 2>&1 | head -60)"
}

mlx_backend_same() {
	_mx_ms=$(cat "$t/m-$1.st")
	is "$(mlx_class "$(cat "$t/j-$1.st")")" "$_mx_ms" "$MX_TOPO $1: exit status as MLX's"
	if [ "$_mx_ms" = 0 ]; then
		mlx_hostfile_same "$1"
		python3 "$MX_PY" commands "$t/m-$1.out" "$t/j-$1.out" > "$t/cmd.diff"
		ok $? "$MX_TOPO $1: the setup commands MLX prints (routes and bridge in our form)"
		[ -s "$t/cmd.diff" ] && diag "$(head -30 "$t/cmd.diff")"
	else
		python3 "$MX_PY" errors "$t/m-$1.err" "$t/j-$1.err" > "$t/err.diff"
		ok $? "$MX_TOPO $1: MLX's error messages"
		[ -s "$t/err.diff" ] && diag "$(cat "$t/err.diff")" && _mx_show "$t/j-$1.err"
	fi
}

# _mx_state FILE: the cluster's kernel state: per host, IPv4 addresses,
# routes, whether bridge0 is up, and for each address on a /30 whether the
# other end of the /30 answers a ping through that interface; the bridge
# members go to FILE.members.
_mx_state() {
	: > "$1.members"
	for _mx_h in $(echo "$MX_HOSTS" | tr , ' '); do
		echo "== $_mx_h"
		sim_exec "$_mx_h" sh -c '
			ip -4 -o addr show | awk "\$2 != \"lo\" { print \"addr\", \$2, \$4 }" | sort
			ip -4 route show | sed "s/^/route /" | sort
			if ifconfig bridge0 | head -1 | grep -q "<UP"; then echo bridge0 up; else echo bridge0 down; fi
			ifconfig bridge0 | awk -v h="$0" "/member:/ { print h, \$2 }" | sort >&2
			ip -4 -o addr show | awk "\$4 ~ /\\/30\$/ { print \$2, \$4 }" |
			while read -r ifc a; do
				a=${a%/30}; last=${a##*.}; base=${a%.*}
				peer=$base.$(( (last / 4) * 4 + 3 - last % 4 ))
				if ping -c1 -W3 -I "$ifc" "$peer" >/dev/null 2>&1; then r=answers; else r=silent; fi
				echo "peer $ifc $peer $r"
			done' "$_mx_h" 2>> "$1.members"
	done > "$1"
}

# mlx_auto_setup_same [hostfile-differs]: ours --auto-setup from the
# cluster as it came up, restore, then MLX's --auto-setup from the same
# state; equal exit status, hostfile (unless told it differs: the caller
# then says why), messages and kernel state (see _mx_state).
mlx_auto_setup_same() {
	_mx_state "$t/s0"
	jc_config --hosts "$MX_HOSTS" --auto-setup --state-dir "$t/st" \
	    --output-hostfile "$t/j-auto.json" > "$t/j-auto.out" 2> "$t/j-auto.err"
	echo $? > "$t/j-auto.st"
	_mx_state "$t/sj"
	"$JACCL_CONFIG" restore -F "$MX_CFG" $MX_SLOW --state-dir "$t/st" > "$t/restore.out" 2>&1
	_mx_state "$t/sr"
	cmp -s "$t/s0" "$t/sr" && cmp -s "$t/s0.members" "$t/sr.members"
	ok $? "$MX_TOPO --auto-setup: restore leaves the cluster as it came up, for MLX's run"
	cmp -s "$t/s0" "$t/sr" && cmp -s "$t/s0.members" "$t/sr.members" ||
	    diag "$(diff -u "$t/s0" "$t/sr"; diff -u "$t/s0.members" "$t/sr.members"; cat "$t/restore.out")"
	rm -f "$t/m-auto.json"
	mlx_config --hosts "$MX_HOSTS" --auto-setup --output-hostfile "$t/m-auto.json" \
	    > "$t/m-auto.out" 2> "$t/m-auto.err"
	echo $? > "$t/m-auto.st"
	_mx_state "$t/sm"
	_mx_ms=$(cat "$t/m-auto.st")
	is "$(mlx_class "$(cat "$t/j-auto.st")")" "$_mx_ms" "$MX_TOPO --auto-setup: exit status as MLX's"
	[ "$_mx_ms" = 0 ] && [ "${1:-}" != hostfile-differs ] && mlx_hostfile_same auto
	python3 "$MX_PY" errors "$t/m-auto.err" "$t/j-auto.err" > "$t/err.diff"
	ok $? "$MX_TOPO --auto-setup: MLX's warnings and errors"
	[ -s "$t/err.diff" ] && diag "$(cat "$t/err.diff")" && _mx_show "$t/j-auto.err"
	cmp -s "$t/sm" "$t/sj"
	ok $? "$MX_TOPO --auto-setup: addresses, routes, bridge0 and answering peers as after MLX's"
	cmp -s "$t/sm" "$t/sj" || diag "$(diff -u "$t/sm" "$t/sj")"
	! grep -q ' silent$' "$t/sj"
	ok $? "$MX_TOPO --auto-setup: every cable's peer answers on its /30 address"
	# MLX's `ifconfig bridge0 down` leaves the ports in the bridge; we also
	# take the cabled ones out, so that no port we address is a member
	is "$(_mx_addressed_members "$t/sj")" "" \
	    "$MX_TOPO --auto-setup: no addressed port left in bridge0 (MLX leaves them in it)"
}

# _mx_addressed_members STATE: "host iface" of the bridge members that have
# a /30 address
_mx_addressed_members() {
	awk 'FNR == NR && /^== / { h = $2; next }
	     FNR == NR && $1 == "addr" && $3 ~ /\/30$/ { a[h " " $2] = 1; next }
	     FNR != NR && ($1 " " $2) in a' "$1" "$1.members"
}

# mlx_dead_links HOSTFILE: the links of a jaccl or jaccl-ring hostfile with
# an end whose RDMA port is not active, as the host's own ibv_devinfo says:
# "host device state", one line per bad end (nothing when all are active).
mlx_dead_links() {
	python3 "$MX_PY" jaccl-links "$1" | while read -r _mx_a _mx_da _mx_b _mx_db; do
		for _mx_e in "$_mx_a $_mx_da" "$_mx_b $_mx_db"; do
			set -- $_mx_e
			_mx_st=$(sim_exec "$1" ibv_devinfo -d "$2" 2>&1 | awk '/state:/ { print $2; exit }')
			[ "$_mx_st" = PORT_ACTIVE ] || echo "$1 $2 ${_mx_st:-none}"
		done
	done
}

# mlx_replay_same: when data/examples holds a probe bundle of the current
# topology, `jaccl-config --from BUNDLE` (no ssh) gives what the live run
# gave, which MLX judged above: the same --dot graph, and for every backend
# (and the automatic choice) the same exit status and hostfile, but for the
# management addresses, which are the bundle's.
mlx_replay_same() {
	_mx_bd=$top_srcdir/data/examples/$MX_TOPO
	[ -f "$_mx_bd/manifest.json" ] || return 0
	"$JACCL_CONFIG" --from "$_mx_bd" --dot > "$t/r.dot" 2> /dev/null < /dev/null
	cmp -s "$t/r.dot" "$t/j.dot"
	ok $? "$MX_TOPO: the bundle's --dot is the live one"
	for _mx_b in auto jaccl jaccl-ring ring; do
		set -- --backend "$_mx_b"
		[ "$_mx_b" = auto ] && set --
		rm -f "$t/r-$_mx_b.json"
		"$JACCL_CONFIG" --from "$_mx_bd" "$@" --output-hostfile "$t/r-$_mx_b.json" \
		    > /dev/null 2>&1 < /dev/null
		_mx_rs=$?
		if [ "$_mx_rs" != "$(cat "$t/j-$_mx_b.st")" ]; then
			is "$_mx_rs" "$(cat "$t/j-$_mx_b.st")" "$MX_TOPO $_mx_b: the bundle's exit status is the live one"
			continue
		fi
		[ "$_mx_rs" = 0 ] || { ok 0 "$MX_TOPO $_mx_b: the bundle's exit status ($_mx_rs) is the live one"; continue; }
		python3 - "$t/r-$_mx_b.json" "$t/j-$_mx_b.json" "$SIM_DIR/hosts.tsv" "$_mx_bd" <<'PY'
import json, os, sys
r, j = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
live = {l.split("\t")[0]: l.split("\t")[3] for l in open(sys.argv[3])}
bundle = {}
for h in live:
    p = os.path.join(sys.argv[4], h, "ipconfig-getifaddr-en0.txt")
    if os.path.exists(p):
        bundle[h] = open(p).read().strip()
for h in r["hosts"]:
    h["ips"] = [live[h["ssh"]] if ip == bundle.get(h["ssh"]) else ip for ip in h["ips"]]
assert r == j, (r, j)
PY
		ok $? "$MX_TOPO $_mx_b: the bundle's hostfile is the live one (management addresses aside)"
	done
}
