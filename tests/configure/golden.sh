#!/bin/sh
# SPDX-License-Identifier: MIT
# The configure pipeline replayed on every example bundle (and on the
# worked example of MLX's notes, tests/configure/appendix-a): the DOT, the
# printed setup commands with the hostfile, and the messages equal the
# expected files in tests/configure/expected (NAME.dot, NAME.out, NAME.err,
# NAME.status) that exist, and every hostfile written passes `jaccl-config
# check`. What MLX can produce is judged by MLX itself (tests/mlx: its tool
# and ours on the simulated cluster, and the bundle replay against the live
# run), so expected/ keeps only what MLX cannot produce: our messages
# (NAME.err), and everything for the inputs MLX cannot run on (garbage,
# where MLX stops with a Python traceback; appendix-a, a worked example
# with no cluster behind it).
# JC_REGEN=1 rewrites the existing expected files instead (then read them
# by hand).
. "$top_srcdir/tests/lib/tap.sh"

[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
exp=$top_srcdir/tests/configure/expected

# case NAME BUNDLE [OPTIONS...]
case_() {
	name=$1 bundle=$2
	shift 2
	"$JACCL_CONFIG" --from "$bundle" "$@" --dot > "$t/$name.dot" 2>/dev/null
	"$JACCL_CONFIG" --from "$bundle" "$@" > "$t/$name.out" 2> "$t/$name.err" < /dev/null
	echo $? > "$t/$name.status"
	for x in dot out err status; do
		[ -f "$exp/$name.$x" ] || continue
		[ "${JC_REGEN:-0}" = 1 ] && cp "$t/$name.$x" "$exp/$name.$x"
		if cmp -s "$t/$name.$x" "$exp/$name.$x"; then
			ok 0 "$name: $x as expected"
		else
			ok 1 "$name: $x as expected"
			diff -u "$exp/$name.$x" "$t/$name.$x" | sed 's/^/# /' | head -40
		fi
	done
	if [ "$(cat "$t/$name.status")" = 0 ]; then
		rm -f "$t/hf.json"
		"$JACCL_CONFIG" --from "$bundle" "$@" --output-hostfile "$t/hf.json" \
		    > "$t/manual" 2>/dev/null < /dev/null
		"$JACCL_CONFIG" check "$t/hf.json" > "$t/check" 2>&1
		ok $? "$name: the hostfile written passes jaccl-config check"
		# the file holds what standard output shows after "Hostfile / ========"
		sed '1,/^========$/d' "$t/$name.out" > "$t/stdout-hf"
		printf '\n' >> "$t/hf.json"
		cmp -s "$t/hf.json" "$t/stdout-hf"
		ok $? "$name: --output-hostfile writes the hostfile printed on standard output"
		! grep -q '^Hostfile$' "$t/manual"
		ok $? "$name: with --output-hostfile nothing but the commands on standard output"
	fi
}

for b in "$top_srcdir"/data/examples/*/; do
	b=${b%/}
	case_ "${b##*/}" "$b"
done
a=$top_srcdir/tests/configure/appendix-a
case_ appendix-a "$a"
case_ appendix-a-jaccl-ring "$a" --backend jaccl-ring
case_ appendix-a-ring "$a" --backend ring
case_ appendix-a-ethernet "$a" --over ethernet --env FOO=bar
case_ studio-mesh4-jaccl-ring "$top_srcdir/data/examples/studio-mesh4" --backend jaccl-ring
case_ mini-ring4-jaccl "$top_srcdir/data/examples/mini-ring4" --backend jaccl

# --hostfile: the hosts (and their existing ips) come from an mlx hostfile
cat > "$t/in.json" <<'EOT'
{"backend": "", "envs": [], "hosts": [{"ssh": "a", "ips": ["10.0.0.10"]},
 {"ssh": "b", "ips": ["10.0.0.11"]}, {"ssh": "c", "ips": ["10.0.0.12"]}]}
EOT
"$JACCL_CONFIG" --from "$a" --hostfile "$t/in.json" --output-hostfile "$t/hf2.json" \
    > /dev/null 2>&1 < /dev/null
ok $? "--hostfile: runs"
python3 - "$t/hf2.json" <<'EOT'
import json, sys
h = json.load(open(sys.argv[1]))
assert [x["ips"][0] for x in h["hosts"]] == ["10.0.0.10", "10.0.0.11", "10.0.0.12"], h
assert h["hosts"][0]["rdma"] == [None, "rdma_en2", "rdma_en3"], h
EOT
ok $? "--hostfile: existing ips first (rank 0's coordinator is 10.0.0.10), Appendix A's rdma"
printf '{"hosts": [{"ips": []}]}' > "$t/bad.json"
"$JACCL_CONFIG" --from "$a" --hostfile "$t/bad.json" > "$t/o" 2> "$t/e"
st=$?
[ $st -eq 2 ] && grep -q "Failed to parse hostfile" "$t/e"
ok $? "--hostfile: a bad file is a usage error (exit 2), mlx's message"
"$JACCL_CONFIG" --from "$a" --hostfile "$t/none.json" > "$t/o" 2> "$t/e"
[ $? -eq 2 ] && grep -q "doesn't exist" "$t/e"
ok $? "--hostfile: a missing file is a usage error, mlx's message"

# --json: one document with every part
"$JACCL_CONFIG" --from "$a" --json > "$t/j" 2> "$t/e" < /dev/null
python3 - "$t/j" <<'EOT'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["backend"] == "jaccl" and d["ring"] is None
assert len(d["cables"]) == 3 and len(d["hosts"]) == 3
assert d["plan"][0]["addresses"][0] == {"iface": "en2", "ip": "192.168.0.1", "peer": "b", "peer_ip": "192.168.0.2"}
assert d["hostfile"]["hosts"][2]["rdma"] == ["rdma_en2", "rdma_en3", None]
EOT
ok $? "--json: inventory, cables, backend, plan and hostfile in one document"

# --save-cabling
"$JACCL_CONFIG" --from "$a" --save-cabling "$t/cab.json" --dot > /dev/null 2>&1
python3 - "$t/cab.json" <<'EOT'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 2 and d["hosts"] == ["a", "b", "c"], d
c = [(x["a"], x["a_iface"], x["b"], x["b_iface"]) for x in d["cables"]]
assert c == [("a", "en2", "b", "en2"), ("a", "en3", "c", "en2"), ("b", "en3", "c", "en3")], c
assert d["cables"][0]["a_port"] == "1" and d["cables"][0]["b_port"] == "1", d["cables"][0]
EOT
ok $? "--save-cabling: the hosts and cables, in the format doctor --expect reads (version 2)"

# unreachable hosts, as mlx: the list and its hint, exit 3; or left out
"$JACCL_CONFIG" --from "$a" --hosts a,b,zz > "$t/o" 2> "$t/e" < /dev/null
st=$?
[ $st -eq 3 ] && grep -qx 'Could not ssh to the following hosts:' "$t/e" &&
    grep -qx '  -  zz' "$t/e" && grep -qx 'Maybe they are not set-up for password-less ssh?' "$t/e" &&
    [ ! -s "$t/o" ]
ok $? "an unreachable host: mlx's message, exit 3, nothing on standard output"
"$JACCL_CONFIG" --from "$a" --hosts a,b,zz --ignore-unreachable --output-hostfile "$t/hf3.json" \
    > /dev/null 2> "$t/e" < /dev/null
st=$?
[ $st -eq 0 ] && grep -q 'zz: warning: unreachable, left out' "$t/e" &&
    python3 -c 'import json, sys; h = json.load(open(sys.argv[1])); assert [x["ssh"] for x in h["hosts"]] == ["a", "b"]' "$t/hf3.json"
ok $? "--ignore-unreachable: left out with a warning, the others configured"

# peers outside the host list: ignored, named only with --verbose; a docked cable is named
m=$top_srcdir/data/examples/studio-mesh4
"$JACCL_CONFIG" --from "$m" --hosts m3-ultra-1,m3-ultra-2 -v < /dev/null > /dev/null 2> "$t/e"
is "$(grep -c 'not in the host list; ignored' "$t/e")" 4 "--verbose names each cable to a host outside the list"
"$JACCL_CONFIG" --from "$m" --hosts m3-ultra-1,m3-ultra-2 < /dev/null > /dev/null 2> "$t/e"
! grep -q 'not in the host list' "$t/e"
ok $? "... and says nothing of them without --verbose"
grep -q 'goes through a dock or hub: not used for RDMA' "$exp/dock-peer.err"
ok $? "a cable through a dock is reported as such"

# manual mode never waits when standard input is not a terminal
timeout 20 "$JACCL_CONFIG" --from "$a" > /dev/null 2>&1 < /dev/null
ok $? "manual mode does not block without a terminal"
"$JACCL_CONFIG" --from "$a" --verify > /dev/null 2> "$t/e"
[ $? -eq 2 ] && grep -q "cannot run on a replayed bundle" "$t/e"
ok $? "--verify on a replayed bundle: a usage error"
done_testing
