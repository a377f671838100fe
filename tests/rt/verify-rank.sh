#!/bin/bash
# SPDX-License-Identifier: MIT
# verify-rank over the tcp fabric on 2, 3 and 4 ranks, each rank in its own
# network namespace joined by veth cables, started with nothing but the
# environment mlx.launch gives a JACCL job: mesh and ring groups (1 and 2
# wires), the all-reduce, all-gather and send/recv results checked, one
# rank contributing wrong data (JACCL_VERIFY_CORRUPT), a deliberately wrong
# build (tests/rt/jaccl-config-broken) whose all-gather or send/recv moves
# the wrong part, the wrong block or stale data, named to the element, a
# cable taken down once its measurement has started (JACCL_VERIFY_TRACE),
# a rank that never starts, a floor no link can reach. Needs root for the
# namespaces. JC_TEST_ONLY="SECTION..." runs only those sections (mesh2,
# mesh3, corrupt, ring4, broken, cable-down, verbs, verbs-broken,
# verbs-cable-down).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${top_srcdir:-.}/tests/lib/tap.sh"
RT_PREFIX="rt$$v"
. "$top_srcdir/tests/rt/netns.sh"

need_root "needs root for network namespaces"
command -v ip >/dev/null || skip_all "iproute2 missing"
ip netns add "$RT_PREFIX-probe" 2>/dev/null || skip_all "cannot create network namespaces"
ip netns del "$RT_PREFIX-probe"
trap 'rt_down; rm -rf "$t"' EXIT

# small volumes: this is about behaviour, bench/ measures
export JACCL_VERIFY_MB=32 JACCL_VERIFY_MAX_MB=4
PORT=32323

# run_ranks "RANKS" [ring] -- ARGS: start the given ranks (rank 0 first),
# each with only the mlx.launch environment; wait for all of them.
run_ranks() {
	local ranks=$1 ring=$2 r
	shift 2
	for r in $ranks; do
		rt_exec "$r" env -i PATH="$PATH" \
		    ${JACCL_VERIFY_MB:+JACCL_VERIFY_MB=$JACCL_VERIFY_MB} \
		    ${JACCL_VERIFY_MAX_MB:+JACCL_VERIFY_MAX_MB=$JACCL_VERIFY_MAX_MB} \
		    ${JACCL_VERIFY_SECONDS:+JACCL_VERIFY_SECONDS=$JACCL_VERIFY_SECONDS} \
		    ${JACCL_IBVERBS_LIB:+JACCL_IBVERBS_LIB=$JACCL_IBVERBS_LIB} \
		    ${SOFTVERBS_MAX_QP:+SOFTVERBS_MAX_QP=$SOFTVERBS_MAX_QP} \
		    ${JACCL_VERIFY_FRAMES:+JACCL_VERIFY_FRAMES=$JACCL_VERIFY_FRAMES} \
		    ${TRACE:+JACCL_VERIFY_TRACE=$TRACE} ${CORRUPT:+JACCL_VERIFY_CORRUPT=$CORRUPT} \
		    MLX_RANK="$r" MLX_IBV_DEVICES="$t/devs.json" \
		    ${NOCOORD:-MLX_JACCL_COORDINATOR="$RT_MGMT.10:$PORT"} ${ring:+MLX_JACCL_RING=1} \
		    ${BREAK:+JACCL_TEST_BREAK=$BREAK} \
		    timeout 120 "${RANK_BIN:-$JACCL_CONFIG}" verify-rank "$@" \
		    >"$t/out$r" 2>"$t/err$r" &
		eval "pid$r=\$!"
	done
	for r in $ranks; do
		eval "wait \$pid$r"
		eval "st$r=\$?"
	done
}

# lossy RANK IFACE PERCENT: the cable at RANK's IFACE loses that share of
# its packets: tc netem on what leaves, or where the kernel has no netem an
# nftables rule on what arrives (silent, as on a wire); fails if neither works
lossy() {
	rt_exec "$1" tc qdisc add dev "$2" root netem loss "$3%" 2>/dev/null && return 0
	command -v nft >/dev/null || return 1
	rt_exec "$1" nft add table inet lossy &&
		rt_exec "$1" nft "add chain inet lossy in { type filter hook input priority 0; }" &&
		rt_exec "$1" nft add rule inet lossy in iifname "$2" numgen random mod 100 "<" "$3" drop
}

all_zero() {
	local r s
	for r in "$@"; do eval "s=\$st$r"; [ "$s" = 0 ] || return 1; done
}

# ops_ok FILE N SHIFTS: the all-gather and send/recv sections of a passing
# report of N ranks: every block size (8, 8008, 65544 and JACCL_VERIFY_MAX_MB
# MiB / N in whole words) a row, no wrong word, nccl-tests'
# busbw (all-gather: algbw * (N - 1) / N of N blocks; send/recv: algbw),
# send/recv to rank + s for each s of SHIFTS ("1,2": s = 1 then 2)
ops_ok() {
	python3 - "$@" "$JACCL_VERIFY_MAX_MB" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n, shifts = int(sys.argv[2]), [int(x) for x in sys.argv[3].split(",")]
blocks = [8, 8008, 65544, (int(sys.argv[4]) << 20) // n // 8 * 8]
for key in ("allgather", "sendrecv"):
    s = r[key]
    assert s["status"] == "ok" and s["wrong"] == 0 and s["errors"] == [], (key, s)
    assert "first_wrong" not in s, s
    assert [x["block"] for x in s["rows"]] == blocks, (key, s["rows"])
    for x in s["rows"]:
        total = x["block"] * (n if key == "allgather" else 1)
        assert x["size"] == total and x["count"] == total // 8 and x["type"] == "uint64", x
        assert x["wrong"] == 0 and "first_wrong" not in x, x
        f = (n - 1) / n if key == "allgather" else 1
        assert abs(x["busbw"] - x["algbw"] * f) < 1e-9 * max(1, x["algbw"]), x
        assert abs(x["algbw"] - total / (x["time_us"] / 1e6) / 1e9) < 1e-6 * x["algbw"], x
assert r["sendrecv"]["shifts"] == shifts, r["sendrecv"]["shifts"]
PY
}

show() { for r in "$@"; do diag "rank $r: status $(eval echo \$st$r)"; sed 's/^/  /' "$t/err$r" | head -5 | while read -r l; do diag "$l"; done; done; }

# --- 2-rank mesh, human report
if only mesh2; then
rt_up 2; rt_cable 0 1; rt_matrix "$t/devs.json"
run_ranks "0 1" "" --timeout 5
all_zero 0 1; ok $? "mesh of 2: every rank exits 0" || show 0 1
grep -q '^verify: PASS' "$t/out0"; ok $? "mesh of 2: rank 0 prints PASS"
grep -Eq '^ +0 rdma_en2 +1 rdma_en2 +[0-9.]+ +[0-9.]+ +[0-9.]+' "$t/out0"
ok $? "mesh of 2: the link is measured in both directions"
grep -q 'Out of bounds values : 0 OK' "$t/out0"; ok $? "mesh of 2: all-reduce results right"
grep -q '^# All-gather ' "$t/out0" &&
    grep -q '^# Send/recv (every rank sends to rank + s and receives from rank - s at once, for s = 1)$' "$t/out0" &&
    [ "$(grep -c '^# Wrong values         : 0 OK$' "$t/out0")" = 2 ] &&
    [ "$(grep -cE '^ +[0-9]+ +[0-9]+ +uint64 +none +-1 ' "$t/out0")" = 8 ]
ok $? "mesh of 2: all-gather and send/recv tables, 4 sizes each, no wrong value"
[ ! -s "$t/out1" ]; ok $? "mesh of 2: rank 1 prints nothing"
# a floor no veth reaches
run_ranks "0 1" "" --timeout 5 --min-bw 100000GB/s
[ "$st0" = 1 ] && [ "$st1" = 1 ] && grep -q 'slower than the floor' "$t/out0"
ok $? "--min-bw above every link: exit 1, the slow link named"
# no coordinator: the error names both fixes; the file side channel needs none
NOCOORD=RT_NONE=1 run_ranks "0 1" "" --timeout 5
[ "$st0" = 1 ] && grep -q 'MLX_JACCL_COORDINATOR.*--side-channel' "$t/err0"
ok $? "no coordinator: the error names both fixes"
mkdir "$t/sc"
NOCOORD=RT_NONE=1 run_ranks "0 1" "" --timeout 5 --side-channel "file=$t/sc"
all_zero 0 1 && grep -q 'side channel file=' "$t/out0" && grep -q '^verify: PASS' "$t/out0"
ok $? "file side channel without a coordinator: PASS" || show 0 1
rt_down
fi

# --- 3-rank mesh, JSON report
if only mesh3 || only corrupt; then
rt_up 3; rt_cable 0 1; rt_cable 0 2; rt_cable 1 2; rt_matrix "$t/devs.json"
run_ranks "0 1 2" "" --timeout 5 --json
all_zero 0 1 2; ok $? "mesh of 3: every rank exits 0" || show 0 1 2
python3 - "$t/out0" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is True and r["group"] == "mesh" and r["ranks"] == 3, r
assert [(l["a"], l["b"], l["status"]) for l in r["links"]] == [(0, 1, "ok"), (0, 2, "ok"), (1, 2, "ok")]
assert all(l["a_to_b"]["GBps"] > 0 and l["b_to_a"]["GBps"] > 0 for l in r["links"])
assert r["all_links"]["status"] == "ok"
rows = r["allreduce"]["rows"]
assert rows[0]["size"] == 1024 and rows[-1]["type"] == "int32" and all(x["wrong"] == 0 for x in rows)
assert abs(rows[0]["busbw"] - rows[0]["algbw"] * 4 / 3) < 1e-6
PY
ok $? "mesh of 3: --json report with 3 links, right all-reduce, busbw = algbw*2(n-1)/n"

# the sum expected at element i, by hand: every rank r puts (r + 1) * h(i),
# h(i) = (i * 7919 mod 1021) + 1; the 1 KiB float32 row and the int32 row
# are compared with it element by element
python3 - "$t/out0" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
h = lambda i: (i % 1021) * 7919 % 1021 + 1
rows = r["allreduce"]["rows"]
assert all("first_wrong" not in x and "bad_input" not in x for x in rows), rows
assert r["allreduce"]["bad_input"] == [] and "first_wrong" not in r["allreduce"]
PY
ok $? "mesh of 3: no wrong element, no wrong contribution reported"
ops_ok "$t/out0" 3 1,2
ok $? "mesh of 3: all-gather and send/recv (to rank + 1, then + 2) right at every size"
fi

if only corrupt; then
# rank 1 adds 1 to its element 200 (in the last third of the smallest row,
# a chunk another rank reduces): every rank fails, rank 0 names rank 1, the
# element, what rank 1 put there and what it should have, and the first
# wrong element of the results, all computed here by hand
CORRUPT=1:200 run_ranks "0 1 2" "" --timeout 5 --json
[ "$st0" = 1 ] && [ "$st1" = 1 ] && [ "$st2" = 1 ]; ok $? "rank 1 contributes wrong data: every rank exits 1" || show 0 1 2
python3 - "$t/out0" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
h = lambda i: (i % 1021) * 7919 % 1021 + 1
mine, want = 2 * h(200) + 1, 2 * h(200)
assert r["ok"] is False and r["allreduce"]["status"] == "wrong", r["allreduce"]["status"]
f = r["failures"]
assert "all-reduce: rank 1 contributed wrong data: its element 200 was %d, not %d" % (mine, want) in f, f
first = "the first: element 200 of the 1024-byte float all-reduce on rank 0 is %d, not %d" % (6 * h(200) + 1, 6 * h(200))
assert any(first in x for x in f), (first, f)
rows = r["allreduce"]["rows"]
for x in rows:
    assert x["wrong"] == 3 and x["first_wrong"]["element"] == 200, x   # one element, on 3 ranks
    assert x["bad_input"] == [{"rank": 1, "element": 200, "value": mine, "want": want}], x
PY
ok $? "rank 1 contributes wrong data: rank 1 and element 200 named, with the values computed by hand"
fi

if only mesh3; then
# the same cluster as a jaccl-ring: MLX_JACCL_RING picks the ring
run_ranks "0 1 2" ring --timeout 5 --json
all_zero 0 1 2 && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and r["group"] == "ring"' "$t/out0" &&
    ops_ok "$t/out0" 3 1,2
ok $? "MLX_JACCL_RING=1 on a triangle: ring group, right results" || show 0 1 2


# a rank that never starts: rank 0 waits for it 1.5 x the side channel's
# bound, 2 x --timeout + 5 s + a cable's stream (JACCL_VERIFY_SECONDS)
JACCL_VERIFY_SECONDS=1 run_ranks "0 1" "" --timeout 1
[ "$st0" = 1 ] && grep -q 'did not connect to the coordinator within 12 s (missing: rank 2)' "$t/err0"
ok $? "rank 2 never starts: rank 0 names it after 1.5 x (2 x 1 + 5 + 1) s" || show 0 1
[ "$st1" = 1 ]; ok $? "rank 2 never starts: rank 1 fails too"
fi
rt_down

# --- 4-rank ring, 2 cables per neighbour (jaccl-ring)
if only ring4; then
rt_up 4
for i in 0 1 2 3; do rt_cable "$i" $(( (i + 1) % 4 )); rt_cable "$i" $(( (i + 1) % 4 )); done
rt_matrix "$t/devs.json" list
run_ranks "0 1 2 3" ring --timeout 5 --json
all_zero 0 1 2 3; ok $? "ring of 4 x 2 cables: every rank exits 0" || show 0 1 2 3
python3 - "$t/out0" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] and r["group"] == "ring" and r["wires"] == 2, r
assert len(r["links"]) == 8 and all(l["status"] == "ok" for l in r["links"])
assert r["allreduce"]["wrong"] == 0 and len(r["allreduce"]["rows"]) == 14
PY
ok $? "ring of 4 x 2 cables: 8 connections measured, all-reduce right"
ops_ok "$t/out0" 4 1,3
ok $? "ring of 4 x 2 cables: all-gather and send/recv (to the right, then the left neighbour) right"
rt_down
fi

# --- the deliberately wrong build: each bug seen, named to the element
# broken BUG RANKS RING -- ARGS: run the ranks of the broken build with
# JACCL_TEST_BREAK=BUG; every rank must exit 1
broken() {
	local bug=$1 ranks=$2 ring=$3
	shift 4
	BREAK=$bug RANK_BIN=$JACCL_CONFIG_BROKEN run_ranks "$ranks" "$ring" "$@"
	for r in $ranks; do eval "[ \$st$r = 1 ]" || return 1; done
}
# first_wrong FILE KEY FAILURE RANK ELEMENT PEER GOT WANT: the report names
# exactly that first wrong word, in its section and in the failure text
# ({wrong}: the section's count of wrong words). w CALL FROM TO I computes a
# word by hand from its layout (rt_verify_word): the checked call % 127 + 1
# << 56 | from << 44 | to + 1 << 32 | i; the all-gather's calls count from
# 0, send/recv's from 64, two per size (and per shift)
first_wrong() {
	python3 - "$@" <<'PY'
import json, sys
f, key, text, rank, el, peer, got, want = sys.argv[1:9]
r = json.load(open(f))
s = r[key]
assert r["ok"] is False and s["status"] == "wrong" and s["wrong"] > 0, s["status"]
fw = s["first_wrong"]
who = "block" if key == "allgather" else "from"
assert (fw["rank"], fw["element"], fw[who], fw["got"], fw["want"]) == \
    (int(rank), int(el), int(peer), got, want), fw
text = text.replace("{wrong}", str(s["wrong"]))
assert text in r["failures"], (text, r["failures"])
PY
}
w() { printf '0x%016x' $(( ($1 % 127 + 1) << 56 | $2 << 44 | ($3 + 1) << 32 | $4 )); }
if only broken; then
if [ -x "${JACCL_CONFIG_BROKEN:-}" ]; then
	# a ring of 4 with 2 cables per neighbour
	rt_up 4
	for i in 0 1 2 3; do rt_cable "$i" $(( (i + 1) % 4 )); rt_cable "$i" $(( (i + 1) % 4 )); done
	rt_matrix "$t/devs.json" list
	# MLX #4443's bug: both directions carry the lower half of each block.
	# Blocks of 8 and 8008 bytes (4 ranks: <= 32 KiB) take one direction and
	# one wire and are right; in the 65544-byte blocks (8193 words, checked
	# call 4 of the phase) the bytes from 32772 on never arrive: on rank 0 the
	# first is in word 4096 of rank 1's block (element 8193 + 4096), whose
	# low 4 bytes came and whose high 4 are still the fill (ones)
	want=$(w 4 1 -1 4096)
	broken allgather-half "0 1 2 3" ring -- --timeout 5 --json
	[ $? = 0 ] && first_wrong "$t/out0" allgather "all-gather: {wrong} wrong values; the first: element 12289 of the 262176-byte all-gather on rank 0 (rank 1's block, its element 4096) is 0xffffffff${want:10}, not $want (partly never written: 4 of its 8 bytes still the fill)" \
	    0 12289 1 "0xffffffff${want:10}" "$want"
	ok $? "ring of 4 x 2, all-gather sends the lower half both ways (MLX #4443): every rank fails, rank 0's element 12289 (rank 1's word 4096) named" || show 0 1 2 3
	python3 - "$t/out0" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows = r["allgather"]["rows"]
assert [x["wrong"] for x in rows[:2]] == [0, 0] and all(x["wrong"] > 0 for x in rows[2:]), rows
assert r["sendrecv"]["status"] == "ok" and r["allreduce"]["status"] == "ok", r["sendrecv"]
PY
	ok $? "all-gather's bug: only the blocks that take both directions are wrong; send/recv and all-reduce right"
	# send/recv over 2 wires where each wire sends the first one's slice: the
	# first word rank 0 receives from rank 3 (8 bytes, to rank + 1, call 64
	# of the phase) is wire 0's 4 low bytes twice (all zero)
	broken sendrecv-half "0 1 2 3" ring -- --timeout 5 --json
	[ $? = 0 ] && first_wrong "$t/out0" sendrecv "send/recv: {wrong} wrong values; the first: element 0 of the 8 bytes rank 0 received from rank 3 is 0x0000000000000000, not $(w 64 3 0 0) (not a value of this test)" \
	    0 0 3 0x0000000000000000 "$(w 64 3 0 0)"
	ok $? "ring of 4 x 2, send/recv's wires all send the first slice: rank 0's element 0 from rank 3 named" || show 0 1 2 3
	# a send that carries its first call's data: the second call of the 8-byte
	# row (to rank + 3: rank 0 receives from rank 1, call 65) brings what rank
	# 1 sent rank 2 in call 64
	broken sendrecv-stale "0 1 2 3" ring -- --timeout 5 --json
	[ $? = 0 ] && first_wrong "$t/out0" sendrecv "send/recv: {wrong} wrong values; the first: element 0 of the 8 bytes rank 0 received from rank 1 is $(w 64 1 2 0), not $(w 65 1 0 0) (rank 1's element 0 for rank 2 of an earlier call)" \
	    0 0 1 "$(w 64 1 2 0)" "$(w 65 1 0 0)"
	ok $? "ring of 4 x 2, a stale send: the earlier call's word named as such" || show 0 1 2 3
	rt_down
	# a mesh of 3 whose all-gather swaps the blocks of the two peers: rank 0's
	# element 1 (rank 1's block in the first, 8-byte row) is rank 2's word
	rt_up 3; rt_cable 0 1; rt_cable 0 2; rt_cable 1 2; rt_matrix "$t/devs.json"
	broken allgather-rank "0 1 2" "" -- --timeout 5 --json
	[ $? = 0 ] && first_wrong "$t/out0" allgather "all-gather: {wrong} wrong values; the first: element 1 of the 24-byte all-gather on rank 0 (rank 1's block, its element 0) is $(w 0 2 -1 0), not $(w 0 1 -1 0) (rank 2's element 0)" \
	    0 1 1 "$(w 0 2 -1 0)" "$(w 0 1 -1 0)"
	ok $? "mesh of 3, all-gather puts a peer's block in the other's place: rank 0's element 1 named as rank 2's" || show 0 1 2
	# the same build with nothing broken passes: the checks accuse no one
	RANK_BIN=$JACCL_CONFIG_BROKEN run_ranks "0 1 2" "" --timeout 5 --json
	all_zero 0 1 2 && ops_ok "$t/out0" 3 1,2
	ok $? "the test build without JACCL_TEST_BREAK: every check passes" || show 0 1 2
	rt_down
else
	for i in 1 2 3 4 5 6; do skip "the deliberately wrong build is missing (JACCL_CONFIG_BROKEN: run through make check)"; done
fi
fi

# --- 2-rank mesh, the cable goes down once its bandwidth measurement has
# started (a stream of 1 TiB, bounded by 3 s: it cannot end before)
if only cable-down; then
rt_up 2; rt_cable 0 1; rt_matrix "$t/devs.json"
: >"$t/trace"
(
	wait_event "$t/trace" '^rank 0: link 0 0-1 stream' && rt_exec 0 ip link set en2 down
) &
downer=$!
TRACE=$t/trace JACCL_VERIFY_MB=1048576 JACCL_VERIFY_SECONDS=3 JACCL_VERIFY_MAX_MB=64 \
    run_ranks "0 1" "" --timeout 2
wait "$downer"; ok $? "cable down mid-run: taken down once rank 0 streams on it" || diag "$(cat "$t/trace")"
grep -q '^rank 0: link 0 0-1 failed' "$t/trace"; ok $? "cable down mid-run: the measurement of that cable failed" || diag "$(cat "$t/trace")"
[ "$st0" = 1 ] && grep -q 'rdma_en2' "$t/out0" "$t/err0" && grep -Eq 'down|no data moved' "$t/out0" "$t/err0"
ok $? "cable down mid-run: rank 0 exits 1 and names rdma_en2" || { show 0 1; cat "$t/out0" | while read -r l; do diag "$l"; done; }
[ "$st1" = 1 ]; ok $? "cable down mid-run: rank 1 exits 1"
[ -z "$(rt_pids)" ]; ok $? "no process left in the namespaces"
rt_down
fi

# --- the verbs fabric, on the userspace verbs device of the test suite
if ! only verbs && ! only verbs-broken && ! only verbs-cable-down; then
	:
elif [ -z "${SOFTVERBS_LIB:-}" ] || [ ! -f "$SOFTVERBS_LIB" ]; then
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do
		skip "verbs fabric: no userspace verbs device (SOFTVERBS_LIB) in this build"
	done
else
	export JACCL_IBVERBS_LIB=$SOFTVERBS_LIB JACCL_VERIFY_MB=2 JACCL_VERIFY_MAX_MB=1
	if only verbs; then
	rt_up 3; rt_cable 0 1; rt_cable 0 2; rt_cable 1 2; rt_matrix "$t/devs.json"
	run_ranks "0 1 2" "" --timeout 5 --json
	all_zero 0 1 2 && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and r["fabric"] == "verbs" and r["allreduce"]["wrong"] == 0 and len(r["allreduce"]["rows"]) == 12' "$t/out0"
	ok $? "verbs chosen by default when every rank has the devices: mesh of 3 right" || show 0 1 2
	echo '[[null, "rdma_en9", "rdma_en3"], ["rdma_en2", null, "rdma_en3"], ["rdma_en3", "rdma_en3", null]]' >"$t/devs.json"
	run_ranks "0 1 2" "" --timeout 2 --fabric verbs
	[ "$st0" = 1 ] && grep -q 'rank 0: link to rank 1 over rdma_en9.*Could not find device' "$t/err0"
	ok $? "verbs: a device that does not exist is named" || show 0 1 2
	rt_down
	rt_up 4
	for i in 0 1 2 3; do rt_cable "$i" $(( (i + 1) % 4 )); rt_cable "$i" $(( (i + 1) % 4 )); done
	rt_matrix "$t/devs.json" list
	run_ranks "0 1 2 3" ring --timeout 5 --json --fabric verbs
	all_zero 0 1 2 3 && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and r["group"] == "ring" and r["wires"] == 2 and r["allreduce"]["wrong"] == 0' "$t/out0" &&
	    ops_ok "$t/out0" 4 1,3
	ok $? "verbs: ring of 4 x 2 cables right, all-gather and send/recv too" || show 0 1 2 3
	rt_down

	# a full mesh of 4 over verbs, and the same cabling as a ring
	rt_up 4
	for i in 0 1 2; do for j in $(seq $((i + 1)) 3); do rt_cable "$i" "$j"; done; done
	rt_matrix "$t/devs.json"
	run_ranks "0 1 2 3" "" --timeout 5 --json --fabric verbs
	all_zero 0 1 2 3 && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and r["group"] == "mesh" and r["fabric"] == "verbs" and len(r["links"]) == 6 and all(l["status"] == "ok" for l in r["links"]) and r["allreduce"]["wrong"] == 0' "$t/out0" &&
	    ops_ok "$t/out0" 4 1,2,3
	ok $? "verbs: mesh of 4, every link measured, all-reduce, all-gather and send/recv right" || show 0 1 2 3
	JACCL_VERIFY_FRAMES=large run_ranks "0 1 2 3" "" --timeout 5 --json --fabric verbs
	all_zero 0 1 2 3 && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and r["allreduce"]["wrong"] == 0' "$t/out0"
	ok $? "verbs: mesh of 4 in JACCL's large frames (macOS 26.3), all-reduce right" || show 0 1 2 3
	JACCL_VERIFY_FRAMES=huge run_ranks "0 1 2 3" "" --timeout 5 --fabric verbs
	[ "$st0" = 1 ] && grep -q "JACCL_VERIFY_FRAMES='huge': want small or large" "$t/err0"
	ok $? "verbs: a frame size that is not small or large is refused by name" || show 0 1 2 3
	run_ranks "0 1 2 3" ring --timeout 5 --json --fabric verbs
	all_zero 0 1 2 3 && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and r["group"] == "ring" and r["allreduce"]["wrong"] == 0' "$t/out0"
	ok $? "verbs: ring of 4 on the mesh's cables right" || show 0 1 2 3
	rt_down

	# 2 ranks: mesh, then the queue-pair budget of the device exceeded
	rt_up 2; rt_cable 0 1; rt_matrix "$t/devs.json"
	run_ranks "0 1" "" --timeout 5 --json --fabric verbs
	all_zero 0 1 && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and r["fabric"] == "verbs" and r["allreduce"]["wrong"] == 0' "$t/out0"
	ok $? "verbs: mesh of 2 right" || show 0 1
	SOFTVERBS_MAX_QP=1 run_ranks "0 1" ring --timeout 2 --fabric verbs
	[ "$st0" = 1 ] && [ "$st1" = 1 ] && grep -qi 'queue pair' "$t/err0" "$t/err1" && grep -q 'rdma_en2' "$t/err0" "$t/err1"
	ok $? "verbs: more queue pairs than the device allows: a clear error naming the device, no crash" || show 0 1
	rt_down
	fi

	# the deliberately wrong build over verbs: a ring of 2 with 2 cables,
	# whose all-gather sends the lower half both ways (MLX #4443): rank 0's
	# first wrong word is word 4096 of rank 1's 65544-byte block, half there
	if only verbs-broken; then
	if [ -x "${JACCL_CONFIG_BROKEN:-}" ]; then
		rt_up 2; rt_cable 0 1; rt_cable 0 1; rt_matrix "$t/devs.json" list
		run_ranks "0 1" ring --timeout 5 --json --fabric verbs
		all_zero 0 1 && ops_ok "$t/out0" 2 1
		ok $? "verbs: ring of 2 x 2 cables: all-gather and send/recv right" || show 0 1
		want=$(w 4 1 -1 4096)
		broken allgather-half "0 1" ring -- --timeout 5 --json --fabric verbs
		[ $? = 0 ] && first_wrong "$t/out0" allgather "all-gather: {wrong} wrong values; the first: element 12289 of the 131088-byte all-gather on rank 0 (rank 1's block, its element 4096) is 0xffffffff${want:10}, not $want (partly never written: 4 of its 8 bytes still the fill)" \
		    0 12289 1 "0xffffffff${want:10}" "$want"
		ok $? "verbs: ring of 2 x 2, all-gather sends the lower half both ways: rank 0's element 12289 named" || show 0 1
		rt_down
	else
		for i in 1 2; do skip "the deliberately wrong build is missing (JACCL_CONFIG_BROKEN: run through make check)"; done
	fi
	fi

	# the cable goes down once verbs traffic runs on it
	if only verbs-cable-down; then
	rt_up 2; rt_cable 0 1; rt_matrix "$t/devs.json"
	: >"$t/trace"
	(
		wait_event "$t/trace" '^rank 0: link 0 0-1 stream' && rt_exec 0 ip link set en2 down
	) &
	downer=$!
	TRACE=$t/trace JACCL_VERIFY_MB=1048576 JACCL_VERIFY_SECONDS=3 JACCL_VERIFY_MAX_MB=4 \
	    run_ranks "0 1" "" --timeout 2 --fabric verbs
	wait "$downer"; ok $? "verbs: cable down mid-run: taken down once rank 0 streams on it" || diag "$(cat "$t/trace")"
	grep -q '^rank 0: link 0 0-1 failed' "$t/trace"; ok $? "verbs: cable down mid-run: the measurement of that cable failed" || diag "$(cat "$t/trace")"
	[ "$st0" = 1 ] && grep -q 'rdma_en2' "$t/out0" "$t/err0"
	ok $? "verbs: cable down mid-run: rank 0 exits 1 and names rdma_en2" || show 0 1
	[ -z "$(rt_pids)" ]; ok $? "verbs: no process left in the namespaces"
	rt_down
	fi

	# a cable that loses datagrams: a named failure, not a hang
	if only verbs-lossy; then
	rt_up 2; rt_cable 0 1; rt_matrix "$t/devs.json"
	if lossy 1 en2 30; then
		JACCL_VERIFY_MB=8 run_ranks "0 1" "" --timeout 3 --fabric verbs
		[ "$st0" = 1 ] && grep -q '^FAIL: link 0-1 (rdma_en2/rdma_en2)' "$t/out0"
		ok $? "verbs: a cable losing 30% of its packets: exit 1, the link rdma_en2 named" || show 0 1
		grep -h 'the cable loses data' "$t/err0" "$t/err1" | head -2 | while IFS= read -r l; do diag "$l"; done
	else
		skip "verbs: lossy cable: neither tc netem nor nftables works here"
	fi
	rt_down
	fi
	unset JACCL_IBVERBS_LIB
fi
[ -z "$(ip netns list | grep "^${RT_BASE}g")" ]; ok $? "namespaces removed"
done_testing
