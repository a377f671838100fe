# SPDX-License-Identifier: MIT
# Simulated cluster for the TAP shell tests: sourced after tests/lib/tap.sh.
# Wraps tests/sim/simcluster.sh (network namespaces, veth "cables", one sshd
# per host, fake macOS commands) so that every test process gets its own
# namespace prefix, state folder and management /24, and so that whatever a
# test brings up is torn down when it exits, passes, fails or is killed.
#
#   . "$top_srcdir/tests/lib/tap.sh"
#   . "$top_srcdir/tests/lib/sim.sh"
#   sim_require                      # 1..0 # SKIP when the machine cannot
#   sim_up mini-ring4                # name in tests/sim/topologies, or a path
#   sim_ssh h0 system_profiler SPThunderboltDataType -json
#   "$JACCL_CONFIG" probe --hosts "$(sim_hosts)" --ssh-config "$(sim_ssh_config)"
#   done_testing                     # the EXIT trap runs sim_down
#
# Variables describing the current cluster (set by sim_up, read-only for
# tests): SIM_TOPO (topology file), SIM_PREFIX, SIM_DIR (state folder),
# SIM_NET (management /24, e.g. 10.170.12), and SIM_SIMCLUSTER, SIM_TOPODIR.
# Several clusters may be up at once in one test: sim_up makes the new one
# current; sim_use DIR switches back to an earlier one (SIM_DIR of it).
# sim.sh replaces tap.sh's EXIT trap with one that also tears the clusters
# down; a test that sets its own EXIT trap must call _sim_cleanup in it.
#
# SIM_STOCK=1 (the default: KC_STOCK, else 1) makes every Mac host a stock Mac
# (tests/sim/README.md: ssh as admin, uid 501, zsh, Apple's PATH and TMPDIR,
# the fake commands only at their macOS paths, real sudo, /opt/homebrew/bin/
# jaccl-config = $JACCL_CONFIG, the source and build trees invisible); a
# host's "stock" key in the topology overrides it. What a test needs on the
# hosts goes in $(sim_shared) (the same path on every host).

SIM_SIMCLUSTER=${top_srcdir:-.}/tests/sim/simcluster.sh
SIM_TOPODIR=${top_srcdir:-.}/tests/sim/topologies
SIM_LOCKDIR=${TMPDIR:-/tmp}/jc-sim-nets
SIM_STOCK=${SIM_STOCK:-${KC_STOCK:-1}}
SIM_TOPO=
SIM_PREFIX=
SIM_DIR=
SIM_NET=
_sim_seq=0
_sim_live=

# sim_require: skip the whole test (prints "1..0 # SKIP reason", exits 0)
# unless this process can run a simulated cluster: root, `ip netns`,
# /usr/sbin/sshd, ssh and ssh-keygen, python3, unshare and nsenter, bash,
# and the kernel lets us create a network namespace.
#
# In a sanitizer build only the tests that set SIM_SANITIZE=1 before
# sim_require run: one to a few per command, its error paths first. The
# others spend their time in the simulated hosts, on C code those run
# under the sanitizers too; the plain build runs them all.
sim_require() {
	need_root "simulated cluster needs root (network namespaces)"
	[ "${SIM_SANITIZE:-0}" = 1 ] ||
	    plain_build_only "this simulated-cluster test runs in the plain build (SIM_SANITIZE, tests/lib/sim.sh)"
	command -v ip >/dev/null 2>&1 || skip_all "ip (iproute2) missing"
	ip netns list >/dev/null 2>&1 || skip_all "'ip netns' does not work here"
	[ -x /usr/sbin/sshd ] || skip_all "/usr/sbin/sshd missing (openssh-server)"
	command -v ssh >/dev/null 2>&1 || skip_all "ssh missing (openssh-client)"
	command -v ssh-keygen >/dev/null 2>&1 || skip_all "ssh-keygen missing (openssh-client)"
	command -v python3 >/dev/null 2>&1 || skip_all "python3 missing"
	command -v unshare >/dev/null 2>&1 || skip_all "unshare missing (util-linux)"
	command -v nsenter >/dev/null 2>&1 || skip_all "nsenter missing (util-linux)"
	command -v bash >/dev/null 2>&1 || skip_all "bash missing"
	unshare -n true 2>/dev/null || skip_all "cannot create a network namespace here"
	[ "$SIM_STOCK" = 0 ] || sim_require_stock
}

# sim_require_stock: skip the whole test unless stock Macs can be simulated
# here: the real sudo (setuid root) and zsh, their login shell.
sim_require_stock() {
	[ -u "$(readlink -f /usr/bin/sudo 2>/dev/null)" ] || skip_all "stock Macs need the real sudo (package sudo)"
	command -v zsh >/dev/null 2>&1 || skip_all "stock Macs' login shell is zsh (package zsh)"
	command -v visudo >/dev/null 2>&1 || skip_all "visudo missing (package sudo)"
}

# _sim_hide: the source and build trees (absolute), which a stock Mac must not see
_sim_hide() {
	for _sim_d in "${top_srcdir:-}" "${top_builddir:-}"; do
		[ -n "$_sim_d" ] && [ -d "$_sim_d" ] && (cd "$_sim_d" && pwd -P)
	done | paste -sd: -
}

# _sim_env CMD...: run CMD with the simcluster settings of the current cluster.
_sim_env() {
	[ -n "$SIM_DIR" ] || { echo "sim: no cluster is up" >&2; return 1; }
	KC_PREFIX=$SIM_PREFIX KC_DIR=$SIM_DIR KC_MGMT_NET=$SIM_NET KC_QUIET=1 KC_STOCK=$SIM_STOCK \
	    KC_JACCL_CONFIG=${JACCL_CONFIG:-} KC_HIDE=$(_sim_hide) "$@"
}

# _sim_claim_net: pick a management /24 (10.160.0 .. 10.191.255) that no
# other cluster of the test suite holds (claimed with an atomic mkdir under
# $SIM_LOCKDIR, freed by sim_down; claims of dead processes are taken over)
# and that no interface of this machine uses. Sets SIM_NET.
_sim_claim_net() {
	mkdir -p "$SIM_LOCKDIR" 2>/dev/null
	_sim_i=0
	while [ "$_sim_i" -lt 64 ]; do
		_sim_v=$(( ($$ * 7 + _sim_seq * 97 + _sim_i * 131) % 8192 ))
		_sim_cand=10.$((160 + _sim_v / 256)).$((_sim_v % 256))
		_sim_i=$((_sim_i + 1))
		if ! mkdir "$SIM_LOCKDIR/$_sim_cand" 2>/dev/null; then
			_sim_owner=$(cat "$SIM_LOCKDIR/$_sim_cand/pid" 2>/dev/null)
			if [ -n "$_sim_owner" ] && ! kill -0 "$_sim_owner" 2>/dev/null; then
				rm -rf "$SIM_LOCKDIR/$_sim_cand"
				mkdir "$SIM_LOCKDIR/$_sim_cand" 2>/dev/null || continue
			else
				continue
			fi
		fi
		echo $$ > "$SIM_LOCKDIR/$_sim_cand/pid"
		if ip -4 -o addr show 2>/dev/null | grep -F " $_sim_cand." >/dev/null ||
		    ip -4 route show table all 2>/dev/null | grep -F "$_sim_cand." >/dev/null; then
			rm -rf "$SIM_LOCKDIR/$_sim_cand"
			continue
		fi
		SIM_NET=$_sim_cand
		return 0
	done
	echo "sim: no free management network" >&2
	return 1
}

# _sim_teardown DIR PREFIX NET: bring one cluster down, free its /24.
_sim_teardown() {
	KC_DIR=$1 KC_PREFIX=$2 KC_MGMT_NET=$3 bash "$SIM_SIMCLUSTER" down >/dev/null 2>&1
	rm -rf "${SIM_LOCKDIR:?}/$3"
}

# _sim_cleanup: EXIT trap; tears down every cluster this process brought up.
_sim_cleanup() {
	for _sim_c in $_sim_live; do
		_sim_teardown $(echo "$_sim_c" | tr '|' ' ')
	done
	_sim_live=
}

# sim_up TOPOLOGY: bring up a cluster (TOPOLOGY is a name from
# tests/sim/topologies without .json, or a path) with a namespace prefix,
# state folder and management /24 unique to this process; make it current.
# Returns non-zero (with simcluster's message on stderr) if it cannot.
# Names: namespaces j<pid hex>t<n>-<host>, state /tmp/jc-sim.<test>.<prefix>.
sim_up() {
	case $1 in
	*/* | *.json) SIM_TOPO=$1 ;;
	*) SIM_TOPO=$SIM_TOPODIR/$1.json ;;
	esac
	[ -f "$SIM_TOPO" ] || { echo "sim: no topology $SIM_TOPO" >&2; return 1; }
	_sim_seq=$((_sim_seq + 1))
	_sim_claim_net || return 1
	SIM_PREFIX=j$(printf %x $$)t$_sim_seq
	_sim_name=$(basename "$0" .sh | tr -c 'A-Za-z0-9_\n-' _)
	SIM_DIR=${TMPDIR:-/tmp}/jc-sim.$_sim_name.$SIM_PREFIX
	_sim_live="$_sim_live $SIM_DIR|$SIM_PREFIX|$SIM_NET"
	if ! _sim_env bash "$SIM_SIMCLUSTER" up "$SIM_TOPO" >&2; then
		sim_down
		return 1
	fi
}

# sim_down: tear the current cluster down (every process in its namespaces,
# the namespaces, links and state folder) and free its /24. Safe to call
# when nothing is up.
sim_down() {
	[ -n "$SIM_DIR" ] || return 0
	_sim_teardown "$SIM_DIR" "$SIM_PREFIX" "$SIM_NET"
	_sim_rest=
	for _sim_c in $_sim_live; do
		[ "$_sim_c" = "$SIM_DIR|$SIM_PREFIX|$SIM_NET" ] || _sim_rest="$_sim_rest $_sim_c"
	done
	_sim_live=$_sim_rest
	SIM_DIR= SIM_PREFIX= SIM_NET= SIM_TOPO=
}

# sim_use DIR: make the cluster whose state folder is DIR (an earlier
# SIM_DIR) current again.
sim_use() {
	for _sim_c in $_sim_live; do
		case $_sim_c in
		"$1|"*)
			SIM_DIR=$1
			SIM_PREFIX=$(echo "$_sim_c" | cut -d'|' -f2)
			SIM_NET=$(echo "$_sim_c" | cut -d'|' -f3)
			SIM_TOPO=$SIM_DIR/topology.json
			return 0 ;;
		esac
	done
	echo "sim: no cluster at $1" >&2
	return 1
}

# sim_ssh_config: print the path of the generated ssh_config (Host entries
# for every host, User root (User admin on stock Macs), key, known_hosts,
# BatchMode; libssh reads it too).
sim_ssh_config() { echo "$SIM_DIR/ssh_config"; }

# sim_known_hosts: print the path of the known_hosts file with every host key.
sim_known_hosts() { echo "$SIM_DIR/known_hosts"; }

# sim_identity: print the path of the client private key.
sim_identity() { echo "$SIM_DIR/id_ed25519"; }

# sim_hosts: print the host names in topology order, comma separated.
sim_hosts() { cut -f1 "$SIM_DIR/hosts.tsv" | paste -sd, -; }

# sim_host_ip H: print H's management IPv4 address.
sim_host_ip() { awk -F'\t' -v h="$1" '$1 == h {print $4}' "$SIM_DIR/hosts.tsv"; }

# sim_ns H: print the network namespace of H (for `ip -n NS ...`).
sim_ns() { awk -F'\t' -v h="$1" '$1 == h {print $3}' "$SIM_DIR/hosts.tsv"; }

# sim_cluster_json: print the path of the compiled cluster description
# (hosts with management IPs, cables with interface names and RDMA state).
sim_cluster_json() { echo "$SIM_DIR/cluster.json"; }

# sim_exec H CMD...: run CMD as root inside host H (its network, hostname,
# mounts and PATH with the fake commands; on a stock Mac its own file system,
# HOME=/var/root, and what it runs as root is not counted by fail-sudo)
# without ssh; returns CMD's status.
sim_exec() { _sim_env bash "$SIM_SIMCLUSTER" exec "$@"; }

# sim_ssh H CMD...: run CMD on H over ssh with the generated ssh_config;
# returns its status (255 for an ssh failure). stdin is passed through.
sim_ssh() {
	_sim_h=$1
	shift
	ssh -F "$SIM_DIR/ssh_config" "$_sim_h" "$@"
}

# sim_port_if H PORT: print H's interface for Thunderbolt port PORT (a
# receptacle number; an interface name is printed back as is).
sim_port_if() {
	case $2 in
	*[!0-9]*) echo "$2"; return 0 ;;
	esac
	python3 -c '
import json, sys
h = json.load(open(sys.argv[1] + "/hosts/" + sys.argv[2] + "/mac.json"))
print(next(p["if"] for p in h["tb_ports"] if p["receptacle"] == int(sys.argv[3])))
' "$SIM_DIR" "$1" "$2"
}

# sim_cable_down H PORT: unplug (in effect) the cable on H's PORT (receptacle
# number or interface name): H's end goes down, so both ends lose carrier.
sim_cable_down() {
	_sim_if=$(sim_port_if "$1" "$2") && ip -n "$(sim_ns "$1")" link set "$_sim_if" down
}

# sim_cable_up H PORT: plug it back in (H's end up again).
sim_cable_up() {
	_sim_if=$(sim_port_if "$1" "$2") && ip -n "$(sim_ns "$1")" link set "$_sim_if" up
}

# sim_unplug H IF: pull the cable on H's interface IF: both ends lose it in
# the fake commands (system_profiler shows no device on either receptacle,
# ibv_devinfo PORT_DOWN) and in the kernel (no carrier; addresses stay).
sim_unplug() { _sim_env bash "$SIM_SIMCLUSTER" unplug "$@"; }

# sim_plug H IF [PEER PEER_IF]: plug H's IF to PEER's PEER_IF (a cable
# already on H IF is moved there: replugged elsewhere), or without a peer
# back where it was pulled from.
sim_plug() { _sim_env bash "$SIM_SIMCLUSTER" plug "$@"; }

# sim_speed H IF GBPS: the cable on H's IF now links at GBPS Gb/s (both ends;
# RDMA goes PORT_DOWN below 80, as on a Mac).
sim_speed() { _sim_env bash "$SIM_SIMCLUSTER" speed "$@"; }

# sim_mgmt_if H: print H's management interface (en0 on a Mac, eth0 on Linux).
sim_mgmt_if() {
	python3 -c '
import json, sys
print(next(h["mgmt_if"] for h in json.load(open(sys.argv[1]))["hosts"] if h["name"] == sys.argv[2]))
' "$SIM_DIR/cluster.json" "$1"
}

# sim_mgmt_down H / sim_mgmt_up H: take H's management link down (its ssh
# sessions stall, new ones cannot connect) or bring it back up.
sim_mgmt_down() { ip -n "$(sim_ns "$1")" link set "$(sim_mgmt_if "$1")" down; }
sim_mgmt_up() { ip -n "$(sim_ns "$1")" link set "$(sim_mgmt_if "$1")" up; }

# sim_sshd_kill H: SIGKILL every sshd process of H (the listener and every
# session): its sessions break at once and new connections are refused.
sim_sshd_kill() {
	for _sim_p in $(ip netns pids "$(sim_ns "$1")"); do
		case $(tr '\0' ' ' 2>/dev/null <"/proc/$_sim_p/cmdline") in
		*sshd*) kill -KILL "$_sim_p" 2>/dev/null ;;
		esac
	done
}

# sim_calls H: print the path of H's log of fake command calls
# ("rc=N sudo=0|1 argv" per line); sim_mutations H: of the mutating ones.
sim_calls() { echo "$SIM_DIR/hosts/$1/calls.log"; }
sim_mutations() { echo "$SIM_DIR/hosts/$1/mutations.log"; }

# sim_snapshot DIR: write DIR/H.calls.txt, H.mutations.txt and H.ip4.txt
# (IPv4 addresses and routes now) for every host of the current cluster.
sim_snapshot() { _sim_env bash "$SIM_SIMCLUSTER" snapshot "$1"; }

# sim_reboot H: restart Mac H's network the way macOS boots (simcluster.sh
# reboot): addresses, host routes and bridge0 changes made by ifconfig and
# route are gone, the enabled network services come back.
sim_reboot() { _sim_env bash "$SIM_SIMCLUSTER" reboot "$1"; }

# sim_check: ssh to every host and compare its hostname (status 1 on failure).
sim_check() { _sim_env bash "$SIM_SIMCLUSTER" check; }

# sim_stock H: status 0 when H is a stock Mac.
sim_stock() { awk -F'\t' -v h="$1" '$1 == h && $6 == 1 {f = 1} END {exit !f}' "$SIM_DIR/hosts.tsv"; }

# sim_user H: print the user ssh logs in as on H (admin on a stock Mac, else root).
sim_user() { if sim_stock "$1"; then echo admin; else echo root; fi; }

# sim_home H: print the folder that is H's ssh user's home (/Users/admin on a
# stock Mac, /root on the others), as a path of the state folder.
sim_home() { echo "$SIM_DIR/hosts/$1/home"; }

# sim_python: print the machine's interpreter that the fake commands run on
# (on a stock Mac also Homebrew's python3 and Apple's 3.9: they are views of it).
sim_python() { cat "$SIM_DIR/python"; }

# sim_shared: print the folder every host sees at the same path (for the
# files a test puts on the hosts: a stock Mac sees nothing else of this
# machine's file system).
sim_shared() { echo "$SIM_DIR/shared"; }

# sim_sudoers H FILE: make FILE the only rule in stock Mac H's sudoers.d
# (after `visudo -cf` accepted it; status 1 with visudo's message if not).
sim_sudoers() {
	sim_stock "$1" || { echo "sim: $1 is not a stock Mac (no real sudo)" >&2; return 1; }
	_sim_sd=$SIM_DIR/hosts/$1/sudoers.d
	cp "$2" "$_sim_sd/.new" && chmod 0440 "$_sim_sd/.new" || return 1
	if ! visudo -cqf "$_sim_sd/.new" >&2; then
		visudo -cf "$_sim_sd/.new" >&2
		rm -f "$_sim_sd/.new"
		return 1
	fi
	find "$_sim_sd" -mindepth 1 -maxdepth 1 ! -name .new -exec rm -f {} +
	mv "$_sim_sd/.new" "$_sim_sd/rule"
}

# sim_sudo_log H: print stock Mac H's sudo log (sudo's own logfile: one line
# per sudo run, "DATE : USER : PWD=... ; USER=root ; COMMAND=..." or why it
# was refused).
sim_sudo_log() { cat "$SIM_DIR/hosts/$1/sudo.log"; }

# sim_mlx H VERSION: install mlx VERSION (its package metadata, a
# mlx-VERSION.dist-info) where H's Python finds it: Homebrew's site-packages
# (/opt/homebrew/bin/python3) on a stock Mac, the ssh user's site-packages
# on the others.
sim_mlx() {
	case $2 in
	'' | *[!0-9A-Za-z.+]*) echo "sim: bad mlx version '$2'" >&2; return 1 ;;
	esac
	_sim_v=$("$(sim_python)" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	if sim_stock "$1"; then
		_sim_site=$SIM_DIR/hosts/$1/homebrew/lib/python$_sim_v/site-packages
		_sim_own=501:80
	else
		_sim_site=$(sim_home "$1")/.local/lib/python$_sim_v/site-packages
		_sim_own=0:0
	fi
	mkdir -p "$_sim_site/mlx-$2.dist-info" &&
	    printf 'Metadata-Version: 2.1\nName: mlx\nVersion: %s\n' "$2" >"$_sim_site/mlx-$2.dist-info/METADATA" &&
	    chown -R "$_sim_own" "$_sim_site"
}

trap '_sim_cleanup; rm -rf "$t"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
