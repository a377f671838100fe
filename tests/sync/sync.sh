#!/bin/bash
# SPDX-License-Identifier: MIT
# jaccl-config sync on one simulated cluster of 4 Linux hosts (full mesh,
# cable addresses set by the test), read both as a mesh (scatter) and as a
# ring (chain): every host's tree compared with the source's by sha256sum,
# stat and readlink run here; the bytes counted on each host's interfaces
# (the cables carry them, the management network does not); a second run
# moves nothing; a chunk damaged in flight found and sent again; an
# interrupted sync resumed with only what was missing; a host killed and a
# cable taken down mid-run (on the source's "held" event, no sleep), named
# within the timeout, the others complete; a source file cut short while it
# is sent named, and sent whole by the next run; --over ethernet; free space and write
# permission refused before any byte moves; links out of the tree and
# links in a destination refused; --dry-run's route and expected time;
# a pair with two cables, both used.
# Then a ring of 4 stock simulated Macs (admin, zsh, a root of their own:
# the folders and the program in sim_shared) set up by configure --auto-setup.
# JC_TEST_ONLY="SECTION..." runs only those sections (basic, dry, corrupt,
# resume, kill, cable, shrink, refuse, escape, wires, macs).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${top_srcdir:-.}/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/launch/lib.sh"

SIM_SANITIZE=1	# also in the sanitizer build
sim_require
lv_up linux-mesh4 || { echo "Bail out! cannot bring the simulated cluster up"; exit 1; }
lv_address || { echo "Bail out! cannot address the cables"; exit 1; }
CFG=$(sim_ssh_config)
lv_hostfile "$t/mesh.json" jaccl
lv_hostfile "$t/ring.json" jaccl-ring
TO=3
js() { timeout 120 "$JACCL_CONFIG" sync -F "$CFG" --timeout "$TO" "$@"; }

# tree_sum DIR: one line per entry (type, mode, mtime, size, sha256 or link
# target), computed here with find, stat, sha256sum and readlink.
tree_sum() {
	(cd "$1" && find . -mindepth 1 ! -name '.jcsync-manifest' -printf '%P\n' | LC_ALL=C sort |
	while IFS= read -r p; do
		if [ -L "$p" ]; then
			echo "L $p -> $(readlink "$p")"
		elif [ -d "$p" ]; then
			echo "D $p $(stat -c '%a %Y' "$p")"
		else
			echo "F $p $(stat -c '%a %Y %s' "$p") $(sha256sum < "$p" | cut -d' ' -f1)"
		fi
	done)
}

# rx H: bytes received on H's cable interfaces (eth1..eth3), and on its management one
rx() {
	_n=0
	for i in eth1 eth2 eth3; do
		_n=$((_n + $(ip netns exec "$(sim_ns "$1")" cat "/sys/class/net/$i/statistics/rx_bytes")))
	done
	echo "$_n"
}
rx_mgmt() { ip netns exec "$(sim_ns "$1")" cat "/sys/class/net/$(sim_mgmt_if "$1")/statistics/rx_bytes"; }

# same_trees DESC DIR HOST...: each host's DIR/HOST equals the source's tree
# ($REF, or $t/src)
same_trees() {
	_d=$1 _root=$2
	shift 2
	tree_sum "${REF:-$t/src}" > "$t/sum.src"
	for _h in "$@"; do
		tree_sum "$_root/$_h" > "$t/sum.$_h" 2>/dev/null
		if cmp -s "$t/sum.src" "$t/sum.$_h"; then
			ok 0 "$_d: $_h's tree is the source's (sha256sum, modes, mtimes, links)"
		else
			ok 1 "$_d: $_h's tree is the source's (sha256sum, modes, mtimes, links)"
			diag "$(diff "$t/sum.src" "$t/sum.$_h" | head -10)"
		fi
	done
}

# the source: Hugging Face's cache layout (blobs named by their sha256,
# snapshots of relative links), a file of several chunks, an empty file,
# a file of mode 600, nested folders
mk_source() {
	rm -rf "$t/src"
	mkdir -p "$t/src/models--x--y/blobs" "$t/src/models--x--y/snapshots/abc/sub" "$t/src/other"
	head -c "$1" /dev/urandom > "$t/big"
	b=$(sha256sum < "$t/big" | cut -d' ' -f1)
	mv "$t/big" "$t/src/models--x--y/blobs/$b"
	printf '{"model_type": "test"}\n' > "$t/cfg"
	c=$(sha256sum < "$t/cfg" | cut -d' ' -f1)
	mv "$t/cfg" "$t/src/models--x--y/blobs/$c"
	ln -s "../../blobs/$b" "$t/src/models--x--y/snapshots/abc/model.safetensors"
	ln -s "../../../blobs/$c" "$t/src/models--x--y/snapshots/abc/sub/config.json"
	: > "$t/src/other/empty"
	printf 'secret\n' > "$t/src/other/key"
	chmod 600 "$t/src/other/key"
	touch -d '2026-01-02 03:04:05' "$t/src/other/key" "$t/src/other"
	BIG=$b
}
mk_source 6000000

if only basic; then
# --- a mesh: the source's three cables busy, each host forwards its part
before2=$(rx lx2) mgmt2=$(rx_mgmt lx2)
js --hostfile "$t/mesh.json" --verify-sha256 "lx1:$t/src" "$t/dst/%h" >"$t/out" 2>"$t/err"
isd "$?" 0 "mesh: exit 0" "$t/err" "$t/out"
same_trees "mesh" "$t/dst" lx2 lx3 lx4
grep -Eq '^summary: 4 hosts, 1 run: COMPLETE$' "$t/out"; ok $? "mesh: the summary says complete in one run"
got=$(( $(rx lx2) - before2 )) m=$(( $(rx_mgmt lx2) - mgmt2 ))
[ "$got" -ge 6000000 ]; ok $? "mesh: lx2's cables carried the whole tree to it ($got bytes)"
[ "$m" -lt 600000 ]; ok $? "mesh: lx2's management network carried a tenth of it at most ($m bytes)"
[ -L "$t/dst/lx3/models--x--y/snapshots/abc/model.safetensors" ]; ok $? "mesh: links kept as links"
ls -a "$t/dst/lx2/models--x--y/blobs" | grep -q jcsync; is "$?" 1 "mesh: no temporary name left"
ino=$(stat -c %i "$t/dst/lx4/models--x--y/blobs/$BIG")

# --- a second run moves nothing
before2=$(rx lx2)
js --hostfile "$t/mesh.json" --json "lx1:$t/src" "$t/dst/%h" >"$t/out2" 2>"$t/err"
isd "$?" 0 "second run: exit 0" "$t/err"
got=$(( $(rx lx2) - before2 ))
[ "$got" -lt 65536 ]; ok $? "second run: lx2's cables carried no data ($got bytes)"
is "$(stat -c %i "$t/dst/lx4/models--x--y/blobs/$BIG")" "$ino" "second run: the file was not written again"
tail -n 1 "$t/out2" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["event"] == "result" and r["ok"] is True and r["code"] == "ok", r
assert [h["state"] for h in r["hosts"]] == ["source", "complete", "complete", "complete"], r["hosts"]
assert all(h["written"] == 0 for h in r["hosts"]), r["hosts"]'
ok $? "second run: --json says every host complete, nothing written"
# progress: on a terminal (script gives it one) the lines are redrawn in place;
# elsewhere plain lines, one per host
script -qec "$JACCL_CONFIG sync -F '$CFG' --timeout $TO --hostfile '$t/mesh.json' 'lx1:$t/src' '$t/dst/%h'" \
    /dev/null >"$t/tty" 2>&1
grep -q "$(printf '\033')\\[K" "$t/tty" && grep -q 'lx3: .*done' "$t/tty"
okd $? "progress on a terminal: each host's line redrawn (ESC [K)" "$t/tty"
js --hostfile "$t/mesh.json" "lx1:$t/src" "$t/dst/%h" >/dev/null 2>"$t/plain"
grep -c "$(printf '\033')" "$t/plain" | grep -qx 0 &&
    grep -Eq '^lx2: [0-9.]+ [kMG]?B of [0-9.]+ [kMG]?B, .*done$' "$t/plain"
okd $? "progress elsewhere: plain lines" "$t/plain"
# --checksum: a destination file changed without its size or mtime
f=$t/dst/lx3/other/key
m=$(stat -c %y "$f"); printf 'SECRET\n' > "$f"; touch -d "$m" "$f"
js --hostfile "$t/mesh.json" "lx1:$t/src" "$t/dst/%h" >/dev/null 2>&1
is "$(cat "$f")" "SECRET" "same size and mtime: skipped without being read"
js --hostfile "$t/mesh.json" --checksum "lx1:$t/src" "$t/dst/%h" >/dev/null 2>"$t/err"
isd "$(cat "$f")" "secret" "--checksum: found by its hash and copied again" "$t/err"
# --verify-sha256: a blob whose content is not its name is not given it
mkdir -p "$t/src3/blobs"
printf 'not what the name says\n' > "$t/src3/blobs/$(printf 'x' | sha256sum | cut -d' ' -f1)"
JACCL_SYNC_RUNS=1 js --hostfile "$t/mesh.json" --verify-sha256 --json "lx1:$t/src3" "$t/v3/%h" \
    >"$t/out" 2>"$t/err"
isd "$?" 1 "--verify-sha256: a wrong blob fails the sync" "$t/err"
grep -q '"why":"its SHA-256 is [0-9a-f]*, not its name"' "$t/out" && [ -z "$(ls -A "$t/v3/lx2/blobs")" ]
okd $? "--verify-sha256: named, and left under no name" "$t/out"
JACCL_SYNC_RUNS=1 js --hostfile "$t/mesh.json" "lx1:$t/src3" "$t/v3/%h" >/dev/null 2>&1
ok $? "without --verify-sha256 the same blob is copied"
# --over ethernet: the management network carries it instead
mgmt2=$(rx_mgmt lx2)
js --hostfile "$t/mesh.json" --over ethernet "lx1:$t/src" "$t/eth/%h" >"$t/out" 2>"$t/err"
isd "$?" 0 "--over ethernet: exit 0" "$t/err"
m=$(( $(rx_mgmt lx2) - mgmt2 ))
[ "$m" -ge 6000000 ]; ok $? "--over ethernet: lx2's management network carried the tree ($m bytes)"
same_trees "--over ethernet" "$t/eth" lx3
fi

if only dry; then
# --- --dry-run: the route, and the time from verify's measures
js --hostfile "$t/mesh.json" --dry-run "lx1:$t/src" >"$t/out" 2>&1
grep -q '^route: scatter from lx1, 3 parts$' "$t/out" &&
    grep -q '^  part 1: lx1 -> lx2, lx2 -> lx3, lx2 -> lx4$' "$t/out"
okd $? "--dry-run on the mesh: a scatter of 3 parts, lx2 forwards the first" "$t/out"
js --hostfile "$t/ring.json" --dry-run "lx2:$t/src" >"$t/out" 2>&1
grep -q '^  part 1: lx2 -> lx3, lx3 -> lx4, lx4 -> lx1$' "$t/out"
okd $? "--dry-run on the ring from lx2: the chain in ring order" "$t/out"
grep -q 'expected: unknown' "$t/out"; okd $? "--dry-run without verify's report: time unknown" "$t/out"
# verify's report (as verify keeps it): every cable 8 Gb/s, lx3 -> lx4 at 4
mkdir -p "$t/state"
python3 - "$t/state/verify.json" <<'PY'
import json, sys
links = []
for a, b in ((0, 1), (1, 2), (2, 3), (3, 0)):
    ab = 4.0 if (a, b) == (2, 3) else 8.0
    links.append({"a": a, "b": b, "status": "ok", "a_to_b": {"Gbps": ab}, "b_to_a": {"Gbps": 8.0}})
json.dump({"hosts": ["lx1", "lx2", "lx3", "lx4"], "links": links}, open(sys.argv[1], "w"))
PY
js --hostfile "$t/ring.json" --dry-run --state-dir "$t/state" "lx2:$t/src" >"$t/out" 2>&1
# 1 GB over the slowest cable of the chain, 4 Gb/s: 2 s
grep -q '^expected: 2.00 s per GB' "$t/out"; okd $? "--dry-run: the slowest cable sets the time (2 s per GB at 4 Gb/s)" "$t/out"
# verify keeps its report where --dry-run reads it: the time from its slowest link of the chain
JACCL_VERIFY_MB=1 JACCL_VERIFY_MAX_MB=1 timeout 120 "$JACCL_CONFIG" verify -F "$CFG" --fabric tcp \
    --hostfile "$t/ring.json" --state-dir "$t/vstate" >"$t/vout" 2>"$t/verr"
isd "$?" 0 "verify on the ring: exit 0" "$t/verr"
want=$(python3 - "$t/vstate/verify.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
# the chain from lx1 in ring order uses the links 0-1, 1-2, 2-3, each a -> b
g = min(l["a_to_b"]["Gbps"] for l in r["links"] if (l["a"], l["b"]) in ((0, 1), (1, 2), (2, 3)))
print(f"{8 / g:.2f}")
PY
)
js --hostfile "$t/ring.json" --dry-run --state-dir "$t/vstate" "lx1:$t/src" >"$t/out" 2>&1
grep -q "^expected: $want s per GB" "$t/out"; okd $? "--dry-run after verify: $want s per GB, from the report verify kept" "$t/out"
fi

if only corrupt; then
# --- a chunk damaged in flight: found on arrival, sent again
rm -rf "$t/dst"
JACCL_SYNC_CORRUPT=2 js --hostfile "$t/ring.json" --json "lx1:$t/src" "$t/dst/%h" >"$t/out" 2>"$t/err"
isd "$?" 0 "damaged chunk: exit 0" "$t/err"
same_trees "damaged chunk" "$t/dst" lx2 lx3 lx4
grep -q '"event":"bad-chunk"' "$t/out" && tail -n 1 "$t/out" | grep -q '"runs":2'
okd $? "damaged chunk: reported, and a second run sent it" "$t/out"
grep '"event":"route"' "$t/out" | head -n 1 | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
e = [(x["from"], x["to"]) for x in r["parts"][0]]
assert r["kind"] == "chain" and e == [("lx1", "lx2"), ("lx2", "lx3"), ("lx3", "lx4")], r'
okd $? "--json: the route event, the chain in ring order" "$t/out"
fi

if only resume; then
# --- an interrupted sync (the source stops after 4 chunks) resumes where it stopped
rm -rf "$t/dst"
JACCL_SYNC_STOP_AFTER=4 JACCL_SYNC_RUNS=1 js --hostfile "$t/ring.json" "lx1:$t/src" "$t/dst/%h" \
    >"$t/out" 2>"$t/err"
isd "$?" 1 "interrupted: exit 1 (hosts incomplete)" "$t/err" "$t/out"
[ ! -e "$t/dst/lx4/models--x--y/blobs/$BIG" ] && [ -f "$t/dst/lx4/models--x--y/blobs/.$BIG.jcsync-part" ]
ok $? "interrupted: nothing half-written under its final name, the part kept"
# what a rank killed while it wrote its manifest or a map leaves: their temporary files
tm="$t/dst/lx4/..jcsync-manifest.tmp.tt0123456789abcd"
tp="$t/dst/lx4/models--x--y/blobs/..$BIG.jcsync-map.tmp.tt0123456789abcd"
: > "$tm"
: > "$tp"
before=$(rx lx4)
js --hostfile "$t/ring.json" "lx1:$t/src" "$t/dst/%h" >"$t/out" 2>"$t/err"
isd "$?" 0 "resumed: exit 0" "$t/err"
[ ! -e "$tm" ] && [ ! -e "$tp" ]; ok $? "resumed: the temporary files of a killed rank removed"
got=$(( $(rx lx4) - before ))
# 6 MB in chunks of 1 MiB, 4 chunks sent (3 or 4 of them the big file's,
# by the order of the names): 1.8 or 2.9 MB was missing, not 6
[ "$got" -lt 3100000 ] && [ "$got" -gt 1800000 ]; ok $? "resumed: only the missing chunks came ($got bytes)"
same_trees "resumed" "$t/dst" lx2 lx3 lx4
fi

# held_run ACTION: a ring sync whose source holds after 2 chunks; ACTION
# runs on the first "held" event, then the source goes on; sets $rc, $secs.
# The run says "exited" on the same fifo when it ends, so a run that ends
# before it holds, or holds again in a later run, cannot leave this waiting.
held_run() {
	rm -rf "$t/dst" "$t/fifo" "$t/fifo.ack" "$t/held.rc"
	mkfifo "$t/fifo" "$t/fifo.ack"
	(
		JACCL_SYNC_HOLD="2:$t/fifo" js --hostfile "$t/ring.json" "lx1:$t/src" "$t/dst/%h" \
		    >"$t/out" 2>"$t/err"
		echo "$?" > "$t/held.rc"
		echo exited > "$t/fifo"
	) &
	_pid=$!
	_t0=
	while read -r _ev < "$t/fifo" && [ "$_ev" = held ]; do
		if [ -z "$_t0" ]; then
			$1
			_t0=$(date +%s%N)
		fi
		# bounded: a source that died after "held" never opens the ack
		timeout $((20 * TO)) sh -c 'echo go > "$1"' sh "$t/fifo.ack"
	done
	wait "$_pid"
	rc=$(cat "$t/held.rc")
	[ -n "$_t0" ] || { echo "# the run ended before it held (exit $rc)"; _t0=$(date +%s%N); }
	secs=$(( ($(date +%s%N) - _t0) / 1000000000 ))
}
kill_lx2() {
	for p in $(ip netns pids "$(sim_ns lx2)"); do
		tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -q 'sync-rank' && kill -9 "$p"
	done
}
lx2_cable_down() { ip -n "$(sim_ns lx2)" link set eth3 down; }

if only kill; then
# --- lx2 killed mid-run: lx3 and lx4 fed around it, from lx1 the other way
mk_source 12000000
held_run kill_lx2
isd "$rc" 1 "host killed: exit 1 (lx2 incomplete)" "$t/err"
grep -q 'error: lx2: lost (was killed by SIGKILL)' "$t/err"; okd $? "host killed: lx2 named lost" "$t/err"
[ "$secs" -le $((4 * TO)) ]; ok $? "host killed: over within the timeout ($secs s)"
same_trees "host killed" "$t/dst" lx3 lx4
[ ! -e "$t/dst/lx2/models--x--y/blobs/$BIG" ]; ok $? "host killed: nothing half-written on lx2"
grep -q '^lx2 .*lost' "$t/out"; okd $? "host killed: lx2's line says lost" "$t/out"
fi

if only cable; then
# --- the lx2 -- lx3 cable down mid-run: lx3 fed from lx4
held_run lx2_cable_down
ip -n "$(sim_ns lx2)" link set eth3 up
isd "$rc" 0 "cable down: exit 0, every host complete" "$t/err" "$t/out"
grep -Eq 'lx3: the cable from lx2: nothing (arrived|moved) within the timeout' "$t/err"
okd $? "cable down: the cable named" "$t/err"
[ "$secs" -le $((4 * TO)) ]; ok $? "cable down: over within the timeout ($secs s)"
same_trees "cable down" "$t/dst" lx2 lx3 lx4
fi

if only shrink; then
# --- a source file shorter on the next run than when a run stopped: the
# part the first run left (a chunk of 1 MiB or more in it) goes, none of
# its bytes past the new end stay
mk_source 12000000
rm -rf "$t/dst"
JACCL_SYNC_STOP_AFTER=2 JACCL_SYNC_RUNS=1 js --hostfile "$t/ring.json" "lx1:$t/src" "$t/dst/%h" \
    >"$t/out" 2>"$t/err"
isd "$?" 1 "shrunk between runs: the first run stopped (exit 1)" "$t/err"
truncate -s 500000 "$t/src/models--x--y/blobs/$BIG"
js --hostfile "$t/ring.json" "lx1:$t/src" "$t/dst/%h" >"$t/out" 2>"$t/err"
isd "$?" 0 "shrunk between runs: exit 0" "$t/err"
same_trees "shrunk between runs" "$t/dst" lx2 lx3 lx4
# --- a source file cut short while it is sent (the source holds after 2
# chunks, its file mapped): that run names it and leaves it out, the next
# one sends it as it now is
mk_source 12000000
shrink_big() { truncate -s 1500000 "$t/src/models--x--y/blobs/$BIG"; }
held_run shrink_big
isd "$rc" 0 "file cut short: exit 0, the next run sent it" "$t/err" "$t/out"
grep -q "lx1: .*models--x--y/blobs/$BIG: shorter than when it was scanned" "$t/err"
okd $? "file cut short: the source names it" "$t/err"
! grep -q 'lost' "$t/err"; okd $? "file cut short: no rank lost" "$t/err"
same_trees "file cut short" "$t/dst" lx2 lx3 lx4
mk_source 12000000	# the later sections' source, whole again
fi

if only refuse; then
# --- before any byte moves: lx2's folder on a 1 MB tmpfs, lx3's read-only
rm -rf "$t/dst"
mkdir -p "$t/small" "$t/ro/lx3"
sim_ssh lx2 "mount -t tmpfs -o size=1m jcsync '$t/small'" &&
    sim_ssh lx3 "mount --bind '$t/ro' '$t/ro' && mount -o remount,bind,ro '$t/ro'"
ok $? "refuse: a small tmpfs on lx2, a read-only folder on lx3"
js --hostfile "$t/mesh.json" "lx1:$t/src" "$t/small/%h" >"$t/out" 2>"$t/err"
isd "$?" 1 "free space: exit 1" "$t/err"
grep -Eq "error: lx2: needs [0-9.]+ MB in $t/small/lx2, [0-9.]+ (kB|MB) free" "$t/err"
okd $? "free space: lx2 named with what it needs and what is free" "$t/err"
[ ! -e "$t/small/lx3" ] && [ -z "$(sim_ssh lx2 "ls -A '$t/small'")" ]
ok $? "free space: no byte moved, no folder made on any host"
js --hostfile "$t/mesh.json" "lx1:$t/src" "$t/ro/%h" >"$t/out" 2>"$t/err"
isd "$?" 1 "read-only: exit 1" "$t/err"
grep -q "error: lx3: cannot write in $t/ro/lx3" "$t/err"; okd $? "read-only: lx3 named" "$t/err"
sim_ssh lx2 "umount '$t/small'"; sim_ssh lx3 "umount '$t/ro'"
fi

if only escape; then
# --- a link out of the source's tree: refused, naming it
mkdir -p "$t/src2/d"
printf 'x\n' > "$t/src2/d/f"
ln -s ../../outside "$t/src2/d/evil"
js --hostfile "$t/mesh.json" "lx1:$t/src2" "$t/dst2/%h" >"$t/out" 2>"$t/err"
isd "$?" 1 "link out of the tree: exit 1" "$t/err"
grep -q "d/evil: a link to '../../outside', outside the folder: refused" "$t/err"
okd $? "link out of the tree: named" "$t/err"
[ ! -e "$t/dst2" ]; ok $? "link out of the tree: nothing moved"
# --- a link in a destination where the tree has a folder: nothing lands outside
rm "$t/src2/d/evil"
mkdir -p "$t/dst2/lx3" "$t/outside"
ln -s "$t/outside" "$t/dst2/lx3/d"
JACCL_SYNC_RUNS=1 js --hostfile "$t/mesh.json" "lx1:$t/src2" "$t/dst2/%h" >"$t/out" 2>"$t/err"
isd "$?" 1 "link in a destination: exit 1 (lx3 incomplete)" "$t/err"
[ -z "$(ls -A "$t/outside")" ]; ok $? "link in a destination: nothing written through it"
is "$(cat "$t/dst2/lx2/d/f" "$t/dst2/lx4/d/f" 2>&1)" "$(printf 'x\nx')" "link in a destination: the other hosts complete"
fi

if only wires; then
# --- a pair with two cables: both carry chunks
if lv_up linux-pair-2cables && lv_address; then
	CFG=$(sim_ssh_config)
	lv_hostfile "$t/pair2.json" jaccl
	rxif() { ip netns exec "$(sim_ns lx2)" cat "/sys/class/net/$1/statistics/rx_bytes"; }
	a1=$(rxif eth1) a2=$(rxif eth2)
	js --hostfile "$t/pair2.json" "lx1:$t/src" "$t/w/%h" >"$t/out" 2>"$t/err"
	isd "$?" 0 "two cables: exit 0" "$t/err"
	d1=$(( $(rxif eth1) - a1 )) d2=$(( $(rxif eth2) - a2 ))
	[ "$d1" -ge 2000000 ] && [ "$d2" -ge 2000000 ]
	ok $? "two cables: each carried a share ($d1 and $d2 bytes of 6 MB)"
	same_trees "two cables" "$t/w" lx2
else
	ok 1 "two cables: cluster up"
fi
fi

if only macs; then
# --- simulated Macs: a ring of 4 minis set up by configure, then a sync along it
if SIM_STOCK=1 sim_up mini-ring4; then
	CFG=$(sim_ssh_config)
	"$JACCL_CONFIG" --hosts "$(sim_hosts)" -F "$CFG" --state-dir "$t/mst" --auto-setup \
	    --backend jaccl-ring --output-hostfile "$t/macs.json" < /dev/null >"$t/out" 2>"$t/err"
	isd "$?" 0 "macs: configure --auto-setup writes the hostfile" "$t/err"
	# the folders, and the program, where every host sees them (a stock
	# Mac sees nothing else of this machine)
	sh_=$(sim_shared)
	mk_source 3000000
	rm -rf "$sh_/src" && cp -a "$t/src" "$sh_/src" && chmod -R a+rX "$sh_/src"
	mkdir -p "$sh_/mdst" && chmod 1777 "$sh_/mdst"
	cp "$JACCL_CONFIG" "$sh_/jaccl-config"
	h1=$(sim_hosts | cut -d, -f1)
	sim_stock "$h1"; ok $? "macs: $h1 is a stock Mac"
	js --hostfile "$t/macs.json" --dry-run "$h1:$sh_/src" >"$t/out" 2>&1
	grep -q '^route: chain from ' "$t/out"; okd $? "macs: a chain along the ring" "$t/out"
	JACCL_CONFIG_REMOTE=$sh_/jaccl-config js --hostfile "$t/macs.json" "$h1:$sh_/src" \
	    "$sh_/mdst/%h" >"$t/out" 2>"$t/err"
	isd "$?" 0 "macs: sync exit 0" "$t/err" "$t/out"
	REF=$sh_/src same_trees "macs" "$sh_/mdst" $(sim_hosts | cut -d, -f2- | tr , ' ')
else
	ok 1 "macs: cluster up"
fi
fi

no=$(lv_leftovers 'sync-rank')
is "$no" "" "nothing left running on the hosts"
done_testing
