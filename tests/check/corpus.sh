#!/bin/sh
# SPDX-License-Identifier: MIT
# `jaccl-config check` on a corpus of hostfiles: each file of expected.tsv
# must give the listed exit status, backend, problem codes and warning
# codes, and --json must print exactly one JSON document that agrees with
# the exit status. Then files made at run time: a 10 MB hostfile, a file
# over the size limit, a directory, paths that cannot be read; the human
# output; usage errors; and the example hostfiles of data/hostfiles.
. "${top_srcdir:-.}/tests/lib/tap.sh"
dir="$top_srcdir/tests/check"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed to read the JSON reports"

# Python starts slowly on a busy machine, so one run of summary.py sums up
# every report: for each OUT STATUS pair it prints "exit backend problems
# warnings" (codes sorted and unique, "-" for none).
cat >"$t/summary.py" <<'PY'
import json, sys
args = sys.argv[1:]
for out, status in zip(args[0::2], args[1::2]):
    try:
        with open(out) as f:
            d = json.loads(f.read())    # exactly one document, nothing after it
        p = sorted(set(x["code"] for x in d["problems"]))
        w = sorted(set(x["code"] for x in d["warnings"]))
        assert d["valid"] == (not p), "valid disagrees with problems"
        assert d["valid"] == (status == "0"), "valid disagrees with the exit status"
        for x in d["problems"] + d["warnings"]:
            assert x["message"] and len(x["hosts"]) == len(x["ranks"]), x
        print(status, d["backend"] or "null", ",".join(p) or "-", ",".join(w) or "-")
    except Exception as e:
        print("bad report: %r" % (e,))
PY
: >"$t/runs"
n=0
# run LABEL EXPECTED FILE [OPTION...]: check --json, remembered for the summary
run() {
	label=$1 want=$2 file=$3
	shift 3
	n=$((n + 1))
	"$JACCL_CONFIG" check --json "$@" "$file" >"$t/out.$n.json" 2>"$t/err.$n"
	printf '%s\t%s\t%s\t%s\n' "$t/out.$n.json" "$?" "$want" "$label" >>"$t/runs"
}

# 1. the corpus
while IFS='	' read -r file status backend problems warnings opts; do
	case $file in '#'* | '') continue ;; esac
	# shellcheck disable=SC2086
	run "$file${opts:+ $opts}" "$status $backend $problems $warnings" "$dir/hostfiles/$file" ${opts:-}
done <"$dir/expected.tsv"

# 1b. MLX's own launcher on the files whose verdict rests on what it reads:
# run with every "ssh" set to 127.0.0.1 (mlx.launch then runs each rank
# here, without ssh), each rank writes down what the launcher handed it. It
# accepts them all: the ring backend's errors are the C++ backend's, from
# the lists it hands over (see expected.tsv).
peer=
for d in "${JC_MLX_PEERS:-}" "${MLX_PEER:-}" "$top_srcdir/../shared/peers/mlx" "$top_srcdir/../../shared/peers/mlx"; do
	[ -n "$d" ] && [ -x "$d/bin/mlx.launch" ] && { peer=$d; break; }
done
mlx_run() {	# FILE [OPTION...]: the ranks' reports, sorted, in $t/mlx.out
	f=$1
	shift
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for h in d["hosts"]:
    h["ssh"] = "127.0.0.1"
json.dump(d, open(sys.argv[2], "w"))' "$dir/hostfiles/$f" "$t/local.json" &&
	rm -rf "$t/ranks" && mkdir "$t/ranks" &&
	TMPDIR=$t "$peer/bin/mlx.launch" --hostfile "$t/local.json" "$@" -- sh -c \
	    'echo "$MLX_RANK ${MLX_JACCL_COORDINATOR:-} $(cat "${MLX_HOSTFILE:-/dev/null}")" >"$0/$MLX_RANK"' \
	    "$t/ranks" </dev/null >/dev/null 2>"$t/mlx.err"
	# a rank's stdout may be lost when it exits quickly, so each writes a file
	cat "$t/ranks"/* 2>/dev/null | sort >"$t/mlx.out"
}
if [ -z "$peer" ]; then
	skip "MLX's mlx.launch (shared/peers/mlx) not found: set JC_MLX_PEERS or configure MLX_PEER"
else
	r='[["192.168.0.2:32323"], ["192.168.4.2:32324"], ["192.168.8.2:32325"], ["192.168.12.2:32326"]]'
	mlx_run ring-rdma-malformed.json
	is "$(cat "$t/mlx.out")" "$(printf '%s\n' "0  $r" "1  $r" "2  $r" "3  $r")" \
	    "mlx.launch runs a ring whose rdma is malformed: launch_ring reads ssh and ips only"
	mlx_run ring-rdma-malformed.json --backend jaccl
	grep -q "Malformed hostfile for jaccl backend" "$t/mlx.err"
	ok $? "mlx.launch --backend jaccl refuses the same file"
	mlx_run jaccl-other-ips.json
	is "$(cat "$t/mlx.out")" "$(printf '%s\n' "0 10.0.0.1:32323 " "1 10.0.0.1:32323 " "2 10.0.0.1:32323 ")" \
	    "mlx.launch runs jaccl with garbage in other ranks' ips: only hosts[0].ips[0] is read"
	mlx_run ring-ip-count.json
	r='[["192.168.0.2:32323", "192.168.16.2:32324"], ["192.168.4.2:32325"], ["192.168.8.2:32326"]]'
	is "$(sed -n 1p "$t/mlx.out")" "0  $r" \
	    "mlx.launch hands the ring 2 addresses for rank 0 and 1 for rank 1 (ring.cpp refuses it)"
	mlx_run ring-ipv6.json
	is "$(sed -n 1p "$t/mlx.out")" '0  [["fd00::1:32323"], ["192.168.4.2:32324"]]' \
	    "mlx.launch hands an IPv6 address to the ring as is (ring.cpp splits it at its first ':')"
	mlx_run bad-octet.json
	is "$(sed -n 1p "$t/mlx.out")" '0  [["10.0.0.1:32323"], ["10.0.0.256:32324"]]' \
	    "mlx.launch hands 10.0.0.256 to the ring as is (getaddrinfo does not take it)"
fi

# 2. files made here: a valid ring hostfile of about 10 MB (200000 hosts
# with one IP each), a 10 MB JACCL matrix of 1000 hosts where every host
# uses one device for every peer, 200000 hosts without rdma (all three by
# big-hostfiles.py, which bench/check-bench.sh times), a file over the size
# limit, a directory, paths that cannot be read
python3 "$dir/big-hostfiles.py" "$t"
head -c 17000000 /dev/zero | tr '\0' ' ' >"$t/huge.json"
ln -s "$t/nowhere.json" "$t/dangling.json"
run "10 MB ring hostfile is valid" "0 ring - -" "$t/big-ring.json"
big_ring=$n
run "10 MB matrix: one device for every peer, too many ranks, too many queue pairs" \
	"1 jaccl command-too-long,device-two-peers,mesh-too-large,qp-budget -" "$t/big-mesh.json"
big_mesh=$n
# JACCL rings of 416 and 417 hosts: mlx.launch's command line for the
# longest rank is 1044488 and 1049500 bytes, under and over macOS's 1 MiB
python3 "$dir/big-hostfiles.py" "$t" jaccl-ring-416 jaccl-ring-417
run "a JACCL ring of 416 hosts: its command line fits" "0 jaccl-ring - -" "$t/jaccl-ring-416.json"
run "a JACCL ring of 417 hosts: over ARG_MAX" "1 jaccl-ring command-too-long -" "$t/jaccl-ring-417.json"
ring417=$n
run "200000 hosts without rdma lists" "1 jaccl mesh-too-large,rank0-no-ip,rdma-length -" "$t/many-hosts.json"
run "a file over 16 MiB is refused" "1 null too-large -" "$t/huge.json"
run "a directory is not a hostfile" "1 null not-a-file -" "$t"
run "a missing file" "1 null missing-file -" "$t/no-such.json"
run "a device is not a hostfile" "1 null not-a-file -" /dev/null
mkfifo "$t/fifo.json"
run "a FIFO without a writer reads as empty, not waited on" "1 null empty-file -" "$t/fifo.json"
run "a dangling symbolic link" "1 null missing-file -" "$t/dangling.json"
run "a path through a regular file cannot be read" "1 null unreadable -" \
	"$dir/hostfiles/mesh-2.json/x.json"
if [ "$(id -u)" -ne 0 ]; then
	cp "$dir/hostfiles/mesh-2.json" "$t/locked.json"
	chmod 000 "$t/locked.json"
	run "a file without read permission" "1 null unreadable -" "$t/locked.json"
fi

# every report, summed up at once, against its expectation
# shellcheck disable=SC2046
python3 "$t/summary.py" $(cut -f1,2 "$t/runs") >"$t/summaries"
k=0
while IFS='	' read -r out status want label; do
	k=$((k + 1))
	is "$(sed -n "${k}p" "$t/summaries")" "$want" "$label"
done <"$t/runs"
[ "$(id -u)" -eq 0 ] && skip "a file without read permission: root reads it anyway"

# the longest command line, as mlx.launch itself would write it: its
# launch_jaccl and RemoteProcess run on each file with the process start
# captured, from "/" (the shortest working directory), without a command;
# the bytes and the rank against check's launch_line
if [ -z "$peer" ]; then
	skip "MLX's mlx.launch (shared/peers/mlx) not found: the command lines are not compared"
else
	# (the 417-host ring only: each ring costs mlx.launch's code 417 lines of 1 MB)
	for f in "$t/out.$ring417.json $t/jaccl-ring-417.json" \
	    "$t/launch-line.json $dir/hostfiles/launch-line.json"; do
		set -- $f
		[ -f "$1" ] || "$JACCL_CONFIG" check --json "$2" >"$1" 2>/dev/null
		got=$(python3 -c 'import json, sys; l = json.load(open(sys.argv[1]))["launch_line"]; print(l["bytes"], l["rank"])' "$1")
		want=$(cd / && python3 - "$peer" "$2" <<'PY'
import argparse, sys, types
sys.path.insert(0, sys.argv[1] + "/python")
from mlx._distributed_utils import launch as L
from mlx._distributed_utils.common import Hostfile
lines = []
def io(cls, arguments, verbose):
    L.Popen = lambda cmd, **kw: lines.append(cmd.encode()) or types.SimpleNamespace()
    for a, kw in arguments:
        cls(*a, **kw)
L._launch_with_io = io
hf = Hostfile.from_file(sys.argv[2])
L.launch_jaccl(None, hf.hosts, argparse.Namespace(env=list(hf.envs), cwd=None,
    starting_port=32323, backend=hf.backend, python=None, verbose=False), [])
w = max(range(len(lines)), key=lambda r: len(lines[r]))
print(len(lines[w]), w)
PY
)
		is "$got" "$want" "$(basename "$2"): the longest command line (bytes, rank) is mlx.launch's"
	done
	grep -q '"at least 1049500 bytes for rank 100, over the 1048576 bytes\|at least 1049500 bytes for rank 100, over the 1048576 bytes' "$t/out.$ring417.json"
	ok $? "jaccl-ring-417.json: the message names the bytes, the rank and the limit"
fi

# every code seen is documented in the man page
for c in $(awk '{ print $3; print $4 }' "$t/summaries" | tr ',' '\n' | sort -u); do
	[ "$c" = - ] && continue
	grep -q "^\.It Li .*\<$c\>" "$top_srcdir/man/jaccl-config.1"
	ok $? "code $c is documented in the man page"
done

# every corpus file is in the table
for f in "$dir"/hostfiles/*; do
	b=$(basename "$f")
	grep -q "^$b	" "$dir/expected.tsv"
	ok $? "$b has an expectation"
done

size=$(wc -c <"$t/big-ring.json")
[ "$size" -ge 10000000 ]; ok $? "generated a 10 MB ring hostfile ($size bytes)"
size=$(wc -c <"$t/big-mesh.json")
[ "$size" -ge 10000000 ]; ok $? "generated a 10 MB JACCL matrix ($size bytes)"
python3 - "$t/out.$big_ring.json" "$t/out.$big_mesh.json" >"$t/big" 2>&1 <<'PY'
import json, sys, collections
d = json.load(open(sys.argv[1]))
print("ring hosts", d["hosts"])
d = json.load(open(sys.argv[2]))
c = collections.Counter(x["code"] for x in d["problems"])
print("mesh kept", c["device-two-peers"], c["qp-budget"])
last = [x for x in d["problems"] if x["code"] == "qp-budget"][-1]
print("mesh sum", last["message"], len(last["hosts"]))
PY
is "$(sed -n 1p "$t/big")" "ring hosts 200000" "10 MB ring hostfile: 200000 hosts counted"
is "$(sed -n 2p "$t/big")" "mesh kept 21 21" "10 MB matrix: 20 problems of a kind, then one sum"
is "$(sed -n 3p "$t/big")" "mesh sum and 980 more problems of this kind 980" \
	"10 MB matrix: the sum names the other 980 hosts"

# 3. human output
"$JACCL_CONFIG" check "$dir/hostfiles/seed-broken.json" >"$t/out" 2>"$t/err"
is "$?" 1 "human output: invalid hostfile exits 1"
is "$(sed -n 1p "$t/err")" \
	"jaccl-config: $dir/hostfiles/seed-broken.json: error: no RDMA device is listed for m3-ultra-1 to m3-ultra-2 (jaccl needs a cable between every pair of hosts)" \
	"human output: the problem names the hosts, prefixed with the file"
grep -q "^jaccl-config: $dir/hostfiles/seed-broken.json: warning: the hostfile names no backend" "$t/err"
ok $? "human output: the warning is prefixed with the file"
grep -q "^$dir/hostfiles/seed-broken.json: invalid (1 problem, 1 warning)\$" "$t/out"
ok $? "human output: the verdict"
grep -q "^  hosts: *4 (6 Mac-to-Mac links needed for a full mesh, 5 listed)\$" "$t/out"
ok $? "human output: the link count of a full mesh"
grep -q "^  coordinator: 123.123.123.1:32323\$" "$t/out"
ok $? "human output: the coordinator"
"$JACCL_CONFIG" check "$dir/hostfiles/syntax.json" >"$t/out" 2>"$t/err"
is "$(cat "$t/err")" "jaccl-config: error: $dir/hostfiles/syntax.json:4:35: string or '}' expected near '}'" \
	"human output: a syntax error with line and column"
"$JACCL_CONFIG" check "$dir/hostfiles/hostile-control.json" >"$t/out" 2>"$t/err"
LC_ALL=C grep -q "$(printf '\033')" "$t/out" "$t/err"
is "$?" 1 "human output: no control character of the file reaches the terminal"
"$JACCL_CONFIG" check -p 4000 "$dir/hostfiles/mesh-2.json" >"$t/out" 2>"$t/err"
grep -q "^  coordinator: 192.168.10.1:4000\$" "$t/out"
ok $? "--starting-port sets the coordinator port"
[ ! -s "$t/err" ]; ok $? "a valid hostfile without warnings prints nothing on stderr"

# 4. usage errors
"$JACCL_CONFIG" check >"$t/out" 2>"$t/err"
is "$?" 2 "no HOSTFILE: usage error"
grep -q "HOSTFILE" "$t/err"; ok $? "the usage error names HOSTFILE"
"$JACCL_CONFIG" check a.json b.json >"$t/out" 2>"$t/err"
is "$?" 2 "two HOSTFILEs: usage error"
"$JACCL_CONFIG" check --backend mpi "$dir/hostfiles/mesh-2.json" >"$t/out" 2>"$t/err"
is "$?" 2 "--backend mpi: usage error"

# 5. the example hostfiles are valid
n=0
for f in "$top_srcdir"/data/hostfiles/*.json; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	"$JACCL_CONFIG" check "$f" >"$t/out" 2>"$t/err"
	ok $? "example $(basename "$f") is valid"
	grep -q "error:" "$t/err"; is "$?" 1 "example $(basename "$f") reports no problem"
done
[ "$n" -ge 4 ]; ok $? "at least 4 example hostfiles ($n)"
done_testing
