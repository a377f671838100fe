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

# summary FILE.json: "exit backend problems warnings", codes sorted and unique
summary() {
	python3 -c '
import json, sys
with open(sys.argv[1]) as f:
    text = f.read()
d = json.loads(text)          # exactly one document, nothing after it
assert isinstance(d, dict)
p = sorted(set(x["code"] for x in d["problems"]))
w = sorted(set(x["code"] for x in d["warnings"]))
assert d["valid"] == (not p), "valid disagrees with problems"
assert d["valid"] == (sys.argv[2] == "0"), "valid disagrees with the exit status"
for x in d["problems"] + d["warnings"]:
    assert x["message"] and len(x["hosts"]) == len(x["ranks"])
print(sys.argv[2], d["backend"] or "null", ",".join(p) or "-", ",".join(w) or "-")
' "$1" "$2" 2>"$t/py.err" || { cat "$t/py.err" >&2; echo "unreadable report"; }
}

# check LABEL FILE [OPTION...]: run check --json, print the summary
check() {
	file=$2
	shift 2
	"$JACCL_CONFIG" check --json "$@" "$file" >"$t/out.json" 2>"$t/err"
	summary "$t/out.json" $?
}

# 1. the corpus
while IFS='	' read -r file status backend problems warnings opts; do
	case $file in '#'* | '') continue ;; esac
	# shellcheck disable=SC2086
	got=$(check "$file" "$dir/corpus/$file" ${opts:-})
	is "$got" "$status $backend $problems $warnings" "$file${opts:+ $opts}"
done <"$dir/expected.tsv"

# every corpus file is in the table
for f in "$dir"/corpus/*; do
	b=$(basename "$f")
	grep -q "^$b	" "$dir/expected.tsv"
	ok $? "$b has an expectation"
done

# 2. files made here
python3 - "$t" <<'EOF'
import json, sys
t = sys.argv[1]
# a valid ring hostfile of about 10 MB: 200000 hosts with one IP each
hosts = [{"ssh": "h%d" % i, "ips": ["10.%d.%d.%d" % (i >> 16, (i >> 8) & 255, i & 255)],
          "rdma": []} for i in range(200000)]
with open(t + "/big-ring.json", "w") as f:
    json.dump({"backend": "ring", "envs": [], "hosts": hosts}, f)
# a 10 MB JACCL matrix of 1000 hosts where every host uses one device for every peer
n = 1000
with open(t + "/big-mesh.json", "w") as f:
    f.write('{"backend": "jaccl", "hosts": [\n')
    for i in range(n):
        row = ",".join("null" if j == i else '"rdma_en2"' for j in range(n))
        f.write('{"ssh": "m%d", "ips": ["10.0.0.1"], "rdma": [%s]}%s\n'
                % (i, row, "," if i + 1 < n else ""))
    f.write("]}\n")
EOF
size=$(wc -c <"$t/big-ring.json")
[ "$size" -ge 10000000 ]; ok $? "generated a 10 MB ring hostfile ($size bytes)"
is "$(check big "$t/big-ring.json")" "0 ring - -" "10 MB ring hostfile is valid"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["hosts"] != 200000)' "$t/out.json"
ok $? "10 MB ring hostfile: 200000 hosts counted"

size=$(wc -c <"$t/big-mesh.json")
[ "$size" -ge 10000000 ]; ok $? "generated a 10 MB JACCL matrix ($size bytes)"
is "$(check big "$t/big-mesh.json")" "1 jaccl device-two-peers,mesh-too-large,qp-budget -" \
	"10 MB matrix: one device for every peer, too many ranks, too many queue pairs"
python3 -c '
import json, sys, collections
d = json.load(open(sys.argv[1]))
c = collections.Counter(x["code"] for x in d["problems"])
assert c["device-two-peers"] == 21 and c["qp-budget"] == 21, c
last = [x for x in d["problems"] if x["code"] == "qp-budget"][-1]
assert last["message"] == "and 980 more problems of this kind", last["message"]
assert len(last["hosts"]) == 980
' "$t/out.json" 2>"$t/py.err"
ok $? "10 MB matrix: 20 problems of a kind, then one that sums up the other 980"
[ -s "$t/py.err" ] && diag "$(cat "$t/py.err")"

head -c 17000000 /dev/zero | tr '\0' ' ' >"$t/huge.json"
is "$(check huge "$t/huge.json")" "1 null too-large -" "a file over 16 MiB is refused"
is "$(check dir "$t")" "1 null not-a-file -" "a directory is not a hostfile"
is "$(check missing "$t/no-such.json")" "1 null missing-file -" "a missing file"
ln -s "$t/nowhere.json" "$t/dangling.json"
is "$(check dangling "$t/dangling.json")" "1 null missing-file -" "a dangling symbolic link"
is "$(check notdir "$dir/corpus/mesh-2.json/x.json")" "1 null unreadable -" \
	"a path through a regular file cannot be read"
cp "$dir/corpus/mesh-2.json" "$t/locked.json"
chmod 000 "$t/locked.json"
if [ "$(id -u)" -eq 0 ]; then
	skip "root reads a file of mode 000"
else
	is "$(check locked "$t/locked.json")" "1 null unreadable -" "a file without read permission"
fi

# 3. human output
"$JACCL_CONFIG" check "$dir/corpus/seed-broken.json" >"$t/out" 2>"$t/err"
is "$?" 1 "human output: invalid hostfile exits 1"
is "$(sed -n 1p "$t/err")" \
	"jaccl-config: $dir/corpus/seed-broken.json: error: no RDMA device is listed for m3-ultra-1 to m3-ultra-2 (jaccl needs a cable between every pair of hosts)" \
	"human output: the problem names the hosts, prefixed with the file"
grep -q "^jaccl-config: $dir/corpus/seed-broken.json: warning: the hostfile names no backend" "$t/err"
ok $? "human output: the warning is prefixed with the file"
grep -q "^$dir/corpus/seed-broken.json: invalid (1 problem, 1 warning)\$" "$t/out"
ok $? "human output: the verdict"
grep -q "^  hosts: *4 (6 Mac-to-Mac links needed for a full mesh, 5 listed)\$" "$t/out"
ok $? "human output: the link count of a full mesh"
grep -q "^  coordinator: 123.123.123.1:32323\$" "$t/out"
ok $? "human output: the coordinator"
"$JACCL_CONFIG" check "$dir/corpus/syntax.json" >"$t/out" 2>"$t/err"
is "$(cat "$t/err")" "jaccl-config: error: $dir/corpus/syntax.json:4:35: string or '}' expected near '}'" \
	"human output: a syntax error with line and column"
"$JACCL_CONFIG" check "$dir/corpus/hostile-control.json" >"$t/out" 2>"$t/err"
LC_ALL=C grep -q "$(printf '\033')" "$t/out" "$t/err"
is "$?" 1 "human output: no control character of the file reaches the terminal"
"$JACCL_CONFIG" check -p 4000 "$dir/corpus/mesh-2.json" >"$t/out" 2>"$t/err"
grep -q "^  coordinator: 192.168.10.1:4000\$" "$t/out"
ok $? "--starting-port sets the coordinator port"
[ ! -s "$t/err" ]; ok $? "a valid hostfile without warnings prints nothing on stderr"

# 4. usage errors
"$JACCL_CONFIG" check >"$t/out" 2>"$t/err"
is "$?" 2 "no HOSTFILE: usage error"
grep -q "HOSTFILE" "$t/err"; ok $? "the usage error names HOSTFILE"
"$JACCL_CONFIG" check a.json b.json >"$t/out" 2>"$t/err"
is "$?" 2 "two HOSTFILEs: usage error"
"$JACCL_CONFIG" check --backend mpi "$dir/corpus/mesh-2.json" >"$t/out" 2>"$t/err"
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
