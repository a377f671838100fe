#!/bin/sh
# SPDX-License-Identifier: MIT
# sync's command line without a cluster: usage errors, a source host that
# is not in the hostfile, a local folder on a machine that is none of the
# hosts, and --dry-run of a local folder when this machine is one (its
# route, and the expected time for the folder's size from a verify report
# written here: 8 Gb/s, so 8 s per GB), a link out of the folder refused.
. "${top_srcdir:-.}/tests/lib/tap.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
me=$(hostname)
cat >"$t/hf.json" <<JSON
{"backend": "jaccl", "hosts": [
  {"ssh": "$me", "ips": ["10.0.0.1"], "rdma": [null, "rdma_en2"]},
  {"ssh": "peer", "ips": ["10.0.0.2"], "rdma": ["rdma_en2", null]}]}
JSON
sed "s/\"$me\"/\"elsewhere\"/" "$t/hf.json" >"$t/other.json"
mkdir -p "$t/src/d"
head -c 3000000 /dev/zero >"$t/src/d/f"

"$JACCL_CONFIG" sync "$t/src" >/dev/null 2>"$t/err"
is "$?" 2 "no --hostfile: a usage error"
"$JACCL_CONFIG" sync --hostfile "$t/hf.json" >/dev/null 2>"$t/err"
is "$?" 2 "no SRC: a usage error"
grep -q 'required: SRC' "$t/err"; ok $? "... saying SRC is needed"
"$JACCL_CONFIG" sync --hostfile "$t/hf.json" "$(printf 'peer:/a\nb')" >/dev/null 2>"$t/err"
is "$?" 2 "a folder with a newline: a usage error"
"$JACCL_CONFIG" sync --hostfile "$t/hf.json" nohost:/x >/dev/null 2>"$t/err"
is "$?" 1 "a source host not in the hostfile: exit 1"
grep -q "jaccl-config: error: nohost: not a host of $t/hf.json" "$t/err"; ok $? "... named"
"$JACCL_CONFIG" sync --hostfile "$t/other.json" --dry-run "$t/src" >/dev/null 2>"$t/err"
is "$?" 1 "a local folder, this machine none of the hosts: exit 1"
grep -q "this machine ($me) is none of the hosts" "$t/err"; ok $? "... said, with HOST:FOLDER as the way"

"$JACCL_CONFIG" sync --hostfile "$t/hf.json" --dry-run --state-dir "$t/none" "$t/src" >"$t/out" 2>"$t/err"
is "$?" 0 "--dry-run of a local folder: exit 0"
grep -q "^route: chain from $me, 1 part$" "$t/out" && grep -q "^  part 1: $me -> peer$" "$t/out"
ok $? "... the route from this machine to its peer"
mkdir -p "$t/st"
cat >"$t/st/verify.json" <<JSON
{"hosts": ["$me", "peer"], "links": [{"a": 0, "b": 1, "status": "ok",
  "a_to_b": {"Gbps": 8.0}, "b_to_a": {"Gbps": 8.0}}]}
JSON
"$JACCL_CONFIG" sync --hostfile "$t/hf.json" --dry-run --state-dir "$t/st" --json "$t/src" >"$t/out" 2>"$t/err"
python3 - "$t/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
# 3 MB over one cable at 8 Gb/s: 0.003 s; 1 GB: 1 s
assert r["kind"] == "chain" and r["bytes"] == 3000000, r
assert abs(r["expected_seconds"] - 0.003) < 1e-9 and abs(r["seconds_per_GB"] - 1.0) < 1e-9, r
PY
ok $? "--dry-run --json: 3 MB at 8 Gb/s expected in 3 ms"
ln -s ../../etc "$t/src/d/out"
"$JACCL_CONFIG" sync --hostfile "$t/hf.json" --dry-run "$t/src" >/dev/null 2>"$t/err"
is "$?" 1 "--dry-run of a folder with a link out of it: exit 1"
grep -q "d/out: a link to '../../etc', outside the folder: refused" "$t/err"; ok $? "... the link named"
done_testing
