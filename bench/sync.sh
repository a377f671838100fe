#!/bin/bash
# SPDX-License-Identifier: MIT
# Benchmark of sync (not part of make check), on the simulated cluster with
# every cable shaped by tc to the same rate, so the cable and not this
# machine's disk or CPU is the limit: a ring of 8 Mac minis (mini-ring8, the
# cables addressed by configure --auto-setup) and a mesh of 4 Linux hosts
# (linux-mesh4), a folder of SIZE MB on the first host, each host's
# destination its own. In the same run, for each cluster:
#   one      rsync over SSH from the source to one neighbour, over the cable
#   sync     jaccl-config sync onto every host
#   seq      rsync to each host, one after another (over a cable where one
#            exists, over the management network otherwise)
#   par      the same rsyncs all at once
# and the cables' rate during sync against the shaped rate, two ways: busy
# (every cable end's transmit counter, read from the kernel every 20 ms:
# the bytes it sent between 1% and 99% of its total over that time, the
# slowest cable that carried a share; frames counted whole, as tbf counts
# them) and wall (the folder's share a cable carries over the whole
# command, the ranks' SSH start-up included). Then, unshaped, sync between
# two hosts of the mesh against iperf3 on the same cable: each one's busy
# rate on the cable by the same counter, the whole command's rate, and
# the CPU time the machine spent per GB moved (/proc/stat) for each; and
# against iperf3 -F, whose server writes what it receives into a file in
# the same memory, as sync must (on a virtual machine whose host takes
# back freed memory, writing the destination can cost more than the cable).
#
#   sudo bench/sync.sh [SIZE_MB]       (default 2000; RATE=400mbit;
#                                       ONLY="ring mesh unshaped": those)
#
# Goals (issue 20): sync <= 1.15 x one; cable >= 0.9 x its shaped rate;
# unshaped sync >= 0.8 x iperf3.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
export top_srcdir
SIZE=${1:-2000}
RATE=${RATE:-400mbit}
ONLY=${ONLY:-ring mesh unshaped}
part_on() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }
# the Macs of the ring are kind Macs: a stock Mac has a root of its own, and
# the folders in /dev/shm must be the same on every host
SIM_STOCK=${SIM_STOCK:-0}
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/launch/lib.sh"
. "$here/lib.sh"
bench_jaccl_config sync.sh
sim_require
# the folders in memory: the cable, not this machine's disk, is the limit
B=/dev/shm/jc-sync-bench.$$
mkdir -p "$B"
trap 'rm -rf "$B"; _sim_cleanup; rm -rf "$t"' EXIT
for c in rsync iperf3 tc; do
	command -v "$c" >/dev/null || { echo "sync.sh: $c is needed" >&2; exit 1; }
done

rate_bps=$(python3 -c '
import re, sys
m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", sys.argv[1])
print(int(float(m[1]) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m[2]]))' "$RATE")

# shape: every cable end of the current cluster at RATE (tbf), or back to none
shape() {
	python3 - "$SIM_DIR/cluster.json" <<'PY' > "$t/ends"
import json, sys
for cb in json.load(open(sys.argv[1]))["cables"]:
    print(cb["a"], cb["a_if"])
    print(cb["b"], cb["b_if"])
PY
	while read -r h i; do
		if [ "$1" = on ]; then
			tc -n "$(sim_ns "$h")" qdisc replace dev "$i" root tbf rate "$RATE" \
			    burst 256kb latency 200ms
		else
			tc -n "$(sim_ns "$h")" qdisc del dev "$i" root 2>/dev/null
		fi
	done < "$t/ends"
}

# cable_ip FROM TO: TO's address on the cable from FROM (empty when none),
# from the addresses the interfaces hold (its own temporary file: the
# rsyncs run in parallel)
cable_ip() {
	python3 - "$SIM_DIR/cluster.json" "$1" "$2" <<'PY' > "$t/pair.$1.$2"
import json, sys
c = json.load(open(sys.argv[1]))
for cb in c["cables"]:
    if (cb["a"], cb["b"]) == (sys.argv[2], sys.argv[3]):
        print(cb["b"], cb["b_if"]); break
    if (cb["b"], cb["a"]) == (sys.argv[2], sys.argv[3]):
        print(cb["a"], cb["a_if"]); break
PY
	read -r _h _i < "$t/pair.$1.$2" 2>/dev/null || return 0
	ip -n "$(sim_ns "$_h")" -4 -o addr show dev "$_i" | awk '{ sub("/.*", "", $4); print $4; exit }'
}

# cable_sshd on|off: a second sshd in every host, on port 2222 of every
# address (the hosts' own listens on the management address only), so
# rsync can reach a neighbour over the cable
cable_sshd() {
	for _h in $(sim_hosts | tr , ' '); do
		if [ "$1" = on ]; then
			ip netns exec "$(sim_ns "$_h")" /usr/sbin/sshd \
			    -f "$SIM_DIR/hosts/$_h/sshd_config" -o ListenAddress=0.0.0.0:2222 \
			    -o "PidFile=$t/sshd.$_h.pid" -E "$t/sshd.$_h.log"
		else
			kill "$(cat "$t/sshd.$_h.pid" 2>/dev/null)" 2>/dev/null
		fi
	done
}

# sample_on IFS_FILE: every host's cable ends of IFS_FILE ("host iface"
# lines) sampled every 20 ms, lines "time iface bytes" in $t/tx.HOST when
# a counter moves; sample_off stops them (the last lines flushed).
sample_on() {
	: > "$t/samplers"
	for _h in $(cut -d' ' -f1 "$1" | sort -u); do
		ip netns exec "$(sim_ns "$_h")" python3 -c '
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
fs = {i: open(f"/sys/class/net/{i}/statistics/tx_bytes") for i in sys.argv[1:]}
last = {}
while True:
    t = time.monotonic()
    for i, f in fs.items():
        f.seek(0)
        v = int(f.read())
        if last.get(i) != v:
            print(f"{t:.4f} {i} {v}")
            last[i] = v
    sys.stdout.flush()
    time.sleep(0.02)' $(awk -v h="$_h" '$1 == h { print $2 }' "$1") > "$t/tx.$_h" &
		echo $! >> "$t/samplers"
	done
}
sample_off() {
	kill $(cat "$t/samplers") 2>/dev/null
	wait $(cat "$t/samplers") 2>/dev/null
}

# busy_rate MIN_BYTES HOST...: the slowest busy rate (bits/s) among the
# cable ends of HOST... that sent MIN_BYTES or more, from $t/tx.HOST
busy_rate() {
	_min=$1
	shift
	python3 - "$_min" "$t" "$@" <<'PY'
import sys
from collections import defaultdict
least, t = float(sys.argv[1]), sys.argv[2]
rates = []
for h in sys.argv[3:]:
    s = defaultdict(list)
    for line in open(f"{t}/tx.{h}"):
        tm, i, v = line.split()
        s[i].append((float(tm), int(v)))
    for i, pts in s.items():
        v0, d = pts[0][1], pts[-1][1] - pts[0][1]
        if d < least:
            continue
        ta = next(tm for tm, v in pts if v >= v0 + 0.01 * d)
        tb = next(tm for tm, v in pts if v >= v0 + 0.99 * d)
        if tb > ta:
            rates.append(0.98 * d * 8 / (tb - ta))
print(min(rates) if rates else 0)
PY
}

# rs SRC_HOST DST_HOST: rsync the folder from SRC_HOST to DST_HOST, over
# the cable between them when there is one (the rsync runs in SRC_HOST)
rs() {
	_ip=$(cable_ip "$1" "$2")
	_o="-o HostKeyAlias=$2"
	mkdir -p "$B/rs"
	[ -n "$_ip" ] && _o="$_o -p 2222 -o HostName=$_ip"
	# no cable: over the management network, from this machine (the
	# folders are on the file system every simulated host shares)
	_in="ip netns exec $(sim_ns "$1")"
	[ -n "$_ip" ] || _in=""
	$_in rsync -a --whole-file \
	    -e "ssh -F $(sim_ssh_config) $_o" "$B/src/" "$2:$B/rs/$2/" >/dev/null 2>"$t/rs.$1.$2.err" ||
	    { echo "rsync $1 -> $2 failed:" >&2; cp "$t/rs.$1.$2.err" /tmp/jc-sync-bench-rs.err; tail -3 "$t/rs.$1.$2.err" >&2; }
}

mk_folder() {
	rm -rf "$B/src"
	mkdir -p "$B/src/blobs"
	n=4
	for k in $(seq 1 $n); do
		head -c $((SIZE * 1000000 / n)) /dev/urandom > "$B/src/blobs/part$k"
	done
}

t0() { now; }
since() { elapsed "$1" "$(now)"; }

# run_cluster NAME HOSTFILE SOURCE NEIGHBOUR CABLE_SHARE: the four timings
run_cluster() {
	name=$1 hf=$2 src=$3 nb=$4 share=$5
	hosts=$(sim_hosts | tr , ' ')
	shape on
	cable_sshd on
	rm -rf "$B/rs" "$B/dst"
	s=$(t0); rs "$src" "$nb"; one=$(since "$s")
	sample_on "$t/ends"
	s=$(t0)
	"$JACCL_CONFIG" sync -F "$(sim_ssh_config)" --hostfile "$hf" "$src:$B/src" "$B/dst/%h" \
	    > "$t/sync.out" 2> "$t/sync.err" || { echo "sync failed:" >&2; tail "$t/sync.err" >&2; }
	sy=$(since "$s")
	sample_off
	# the cables that carried at least half their share
	busy=$(busy_rate "$(python3 -c "print($SIZE * 1e6 * $share / 2)")" $hosts)
	rm -rf "$B/rs" "$B/dst"
	s=$(t0)
	for h in $hosts; do [ "$h" = "$src" ] || rs "$src" "$h"; done
	seq_t=$(since "$s")
	rm -rf "$B/rs"
	s=$(t0)
	for h in $hosts; do [ "$h" = "$src" ] || rs "$src" "$h" & done
	wait
	par=$(since "$s")
	rm -rf "$B/rs"
	cable_sshd off
	shape off
	python3 - "$name" "$SIZE" "$rate_bps" "$share" "$one" "$sy" "$seq_t" "$par" "$busy" <<'PY'
import sys
name, size, rate, share = sys.argv[1], float(sys.argv[2]) * 1e6, float(sys.argv[3]), float(sys.argv[4])
one, sy, seq, par, busy = map(float, sys.argv[5:10])
wall = size * share * 8 / sy / rate
print(f"{name:<14} {one:8.1f} {sy:8.1f} {seq:8.1f} {par:8.1f} {sy / one:9.2f} {seq / sy:8.1f} "
      f"{par / sy:8.1f} {busy / rate:10.2f} {wall:9.2f}")
PY
}

echo "# sync.sh: $SIZE MB, every cable shaped to $RATE (ideal copy over one cable: $(python3 -c "print(f'{$SIZE * 8e6 / $rate_bps:.1f}')") s)"
echo "# cluster          one s   sync s    seq s    par s  sync/one  seq/sync par/sync  busy/rate wall/rate"
mk_folder

# a ring of 8 simulated Mac minis, addressed by configure
if part_on ring && sim_up mini-ring8; then
	"$JACCL_CONFIG" --hosts "$(sim_hosts)" -F "$(sim_ssh_config)" --state-dir "$t/st" \
	    --auto-setup --backend jaccl-ring --output-hostfile "$t/ring8.json" </dev/null \
	    >/dev/null 2>"$t/err" || { cat "$t/err" >&2; exit 1; }
	set -- $(sim_hosts | tr , ' ')
	run_cluster mini-ring8 "$t/ring8.json" "$1" "$2" 1
	sim_down
fi

# a mesh of 4 Linux hosts: each cable carries a third in the scatter
lv_up linux-mesh4 && lv_address || exit 1
lv_hostfile "$t/mesh4.json" jaccl
part_on mesh && run_cluster linux-mesh4 "$t/mesh4.json" lx1 lx2 0.3333
part_on unshaped || exit 0

# unshaped: sync lx1 -> lx2 against iperf3 on the same cable, each moving
# the folder's bytes, the better of two runs of each (the first writes of
# a run can land on memory this machine's host has not backed yet)
lv_hostfile "$t/pair.json" jaccl lx1,lx2
ip2=$(cable_ip lx1 lx2)
echo "lx1 eth1" > "$t/pair.ends"
# unshaped KIND OUT: one run of KIND (iperf3, iperf3-F or sync); "WALL BUSY_BPS
# MACHINE_CPU" into OUT
unshaped() {
	rm -rf "$B/dst"
	if [ "$1" = iperf3 ] || [ "$1" = iperf3-F ]; then
		# -F: the server writes what it receives into a file, as sync does
		mkdir -p "$B/dst"
		_f=""
		[ "$1" = iperf3-F ] && _f="-F $B/dst/iperf3.out"
		# shellcheck disable=SC2086
		ip netns exec "$(sim_ns lx2)" iperf3 -s -1 -D -B "$ip2" $_f >/dev/null 2>&1
		until ip netns exec "$(sim_ns lx2)" ss -Hltn "src $ip2" | grep -q .; do :; done
		set -- "$1" "$2" ip netns exec "$(sim_ns lx1)" iperf3 -c "$ip2" -n "$((SIZE * 1000000))" -l 1M
	else
		set -- "$1" "$2" "$JACCL_CONFIG" sync -F "$(sim_ssh_config)" --hostfile "$t/pair.json" \
		    "lx1:$B/src" "$B/dst/%h"
	fi
	_u=$2
	shift 2
	sample_on "$t/pair.ends"
	measure "$t/m" "$@" > "$t/m.tsv"
	sample_off
	read -r _w _ _ _st _cpu < "$t/m.tsv"
	[ "$_st" = 0 ] || { echo "$*: exit $_st" >&2; tail -3 "$t/m.err" >&2; }
	echo "$_w $(busy_rate 1000000 lx1) $_cpu" > "$_u"
}
for k in 1 2; do
	unshaped iperf3 "$t/iperf.$k"
	unshaped iperf3-F "$t/iperff.$k"
	unshaped sync "$t/sync.$k"
done
python3 - "$SIZE" "$t" <<'PY'
import sys
size, t = float(sys.argv[1]) * 1e6, sys.argv[2]
def best(kind):
    runs = [list(map(float, open(f"{t}/{kind}.{k}").read().split())) for k in (1, 2)]
    return min(runs, key=lambda r: r[0])
iw, ib, ic = best("iperf")
fw, fb, fc = best("iperff")
sw, sb, sc = best("sync")
print(f"# unshaped veth lx1 -> lx2, {size / 1e6:.0f} MB each:")
print(f"#   busy on the cable: sync {sb / 1e9:.2f} Gb/s, iperf3 {ib / 1e9:.2f} Gb/s: sync/iperf3 {sb / ib:.2f}")
print(f"#   whole command:     sync {size * 8 / sw / 1e9:.2f} Gb/s ({sw:.2f} s), iperf3 "
      f"{size * 8 / iw / 1e9:.2f} Gb/s ({iw:.2f} s): sync/iperf3 {iw / sw:.2f}")
print(f"#   machine CPU per GB: sync {sc / size * 1e9:.2f} s, iperf3 {ic / size * 1e9:.2f} s: "
      f"{sc / ic:.1f}x")
print(f"#   iperf3 -F, its server writing what it receives into the same memory: busy "
      f"{fb / 1e9:.2f} Gb/s, whole {size * 8 / fw / 1e9:.2f} Gb/s, CPU per GB {fc / size * 1e9:.2f} s; "
      f"sync/iperf3-F busy {sb / fb:.2f}, whole {fw / sw:.2f}")
PY
