#!/bin/sh
# SPDX-License-Identifier: MIT
# One exit status per class of failure, and with --json the class's code
# string, for the classes that need no simulated cluster: usage (2), a host
# that cannot be reached (3: a port of 127.0.0.1 where nothing listens), a
# cabling that cannot serve the backend (4: JACCL needs every pair of hosts
# cabled, mini-ring4 is a ring), doctor finding an error (8: RDMA disabled
# on a host), and any other failure (1). The setup classes (5, 6) are tested
# on simulated clusters by tests/configure/sim-mac2.sh and sim-mac4.sh, the
# unreachable and refused host keys by tests/probe/keys.sh, a failed
# verification (7) by tests/launch/verify.sh.
. "${top_srcdir:-.}/tests/lib/tap.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
ex=$top_srcdir/data/examples
bundles=$top_srcdir/tests/doctor/bundles

# code FILE: the "code" of FILE's error document (or of the document)
code() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
e = d.get("error", d)
print(e["code"], e.get("status", ""))
' "$1" 2>/dev/null
}

# usage
"$JACCL_CONFIG" --backend bogus >"$t/out" 2>"$t/err"
is "$?" 2 "usage: an invalid --backend exits 2"
"$JACCL_CONFIG" --json --backend bogus >"$t/out" 2>"$t/err"
is "$?" 2 "usage with --json exits 2"
is "$(code "$t/out")" "usage 2" "usage with --json: code usage"

# a host that cannot be reached: a port of 127.0.0.1 nobody listens on
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'Host *\n  StrictHostKeyChecking yes\n  UserKnownHostsFile /dev/null\n' >"$t/ssh_config"
for cmd in "" probe; do
	"$JACCL_CONFIG" $cmd --hosts "127.0.0.1:$port" -F "$t/ssh_config" --connect-timeout 30 \
	    >"$t/out" 2>"$t/err" </dev/null
	is "$?" 3 "${cmd:-configure}: a host refusing the connection exits 3"
	grep -q "Could not ssh to the following hosts" "$t/err"
	ok $? "${cmd:-configure}: ... with mlx's message"
	"$JACCL_CONFIG" $cmd --json --hosts "127.0.0.1:$port" -F "$t/ssh_config" --connect-timeout 30 \
	    >"$t/out" 2>"$t/err" </dev/null
	is "$(code "$t/out")" "unreachable 3" "${cmd:-configure} --json: code unreachable"
done
"$JACCL_CONFIG" probe --json --ignore-unreachable --hosts "127.0.0.1:$port" -F "$t/ssh_config" \
    --connect-timeout 30 >"$t/out" 2>"$t/err" </dev/null
is "$?" 3 "probe --ignore-unreachable with no host left exits 3"

# the cabling cannot serve the backend
"$JACCL_CONFIG" --from "$ex/mini-ring4" --backend jaccl >"$t/out" 2>"$t/err" </dev/null
is "$?" 4 "a ring with --backend jaccl exits 4"
grep -q "Incomplete mesh" "$t/err"; ok $? "... saying the mesh is incomplete"
"$JACCL_CONFIG" --from "$ex/mini-ring4" --backend jaccl --json >"$t/out" 2>"$t/err" </dev/null
is "$(code "$t/out")" "cabling 4" "... --json: code cabling"
"$JACCL_CONFIG" --from "$ex/mini-ring4" --backend ring >"$t/out" 2>"$t/err" </dev/null
is "$?" 0 "the same ring with --backend ring exits 0"
"$JACCL_CONFIG" --from "$ex/dock-peer" >"$t/out" 2>"$t/err" </dev/null
is "$?" 4 "no backend at all (a cable through a dock) exits 4"

# doctor
"$JACCL_CONFIG" doctor --from "$bundles/rdma-disabled" --json >"$t/out" 2>"$t/err"
is "$?" 8 "doctor: RDMA disabled on a host exits 8"
is "$(code "$t/out")" "doctor-error " "doctor --json: code doctor-error"
"$JACCL_CONFIG" doctor --from "$bundles/configured" --json >"$t/out" 2>"$t/err"
is "$?" 0 "doctor: a configured mesh exits 0"
is "$(code "$t/out")" "ok " "doctor --json: code ok"

# any other failure
"$JACCL_CONFIG" --from "$t/nonexistent" >"$t/out" 2>"$t/err" </dev/null
is "$?" 1 "a bundle that does not exist exits 1"
"$JACCL_CONFIG" --from "$t/nonexistent" --json >"$t/out" 2>"$t/err" </dev/null
is "$(code "$t/out")" "failed 1" "... --json: code failed"
python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["error"]["message"])' "$t/out" >"$t/msg" 2>&1
grep -q nonexistent "$t/msg"; ok $? "... the error document carries the message"
"$JACCL_CONFIG" --from "$ex/garbage" >"$t/out" 2>"$t/err" </dev/null
is "$?" 1 "a host whose outputs cannot be read exits 1"
echo '[]' >"$t/empty.json"
"$JACCL_CONFIG" check "$t/empty.json" >"$t/out" 2>"$t/err"
is "$?" 1 "check: an invalid hostfile exits 1"
done_testing
