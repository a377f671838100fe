#!/bin/sh
# SPDX-License-Identifier: MIT
# `jaccl-config doctor` against a live simulated cluster (3 Mac minis in a
# triangle, mini2 with RDMA disabled): fresh, it finds RDMA disabled on
# mini2, the peers' ports down because of it, the bridges and their loop,
# and no IPv4 on the cables; every host reaches the coordinator (rank 0's
# management address: "connection refused" counts as reachable). After the
# network setup the bridge and IPv4 checks pass. With a route on mini3 that
# makes mini1 unreachable, the coordinator check fails for mini3 only,
# with EHOSTUNREACH; with something listening on the coordinator port, the
# other hosts get a warning.
. "${top_srcdir:-.}/tests/lib/tap.sh"
. "${top_srcdir:-.}/tests/lib/sim.sh"
. "${top_srcdir:-.}/tests/doctor/lib.sh"
SIM_SANITIZE=1	# also in the sanitizer build
sim_require
command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed to read the JSON reports"
sim_up rdma-disabled || { echo "Bail out! cannot bring the simulated cluster up"; exit 1; }

cat >"$t/q.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = {x["name"]: x for x in d["checks"]}
if sys.argv[2] == "status":
    print(" ".join(f"{n}={c[n]['status']}" for n in sys.argv[3:]))
else:   # findings of a check: "host message"
    for f in c[sys.argv[3]]["findings"]:
        print(f["host"], f["message"])
PY

doctor() {
	"$JACCL_CONFIG" doctor --json -F "$(sim_ssh_config)" --hosts "$(sim_hosts)" "$@" \
	    >"$t/out.json" 2>"$t/err"
}

doctor
is "$?" 8 "fresh cluster: exit 8"
is "$(python3 "$t/q.py" "$t/out.json" status rdma-enabled port-state bridge ipv4 coordinator reachable)" \
    "rdma-enabled=error port-state=error bridge=error ipv4=error coordinator=ok reachable=ok" \
    "fresh cluster: the checks that fire"
python3 "$t/q.py" "$t/out.json" findings rdma-enabled >"$t/f"
is "$(cat "$t/f")" "mini2 RDMA is disabled (rdma_ctl status: disabled)" \
    "fresh cluster: RDMA disabled on mini2 only"
python3 "$t/q.py" "$t/out.json" findings bridge | grep -c 'Thunderbolt Bridge loop' >"$t/f"
is "$(cat "$t/f")" 1 "fresh cluster: one bridge loop"
grep -q "\"coordinator\": \"$(sim_host_ip mini1):32323\"" "$t/out.json"
ok $? "the coordinator is rank 0's management address and the default port"

dr_setup
ok $? "network set up (bridge down, one /30 per cable)"
doctor
is "$(python3 "$t/q.py" "$t/out.json" status rdma-enabled bridge ipv4 coordinator)" \
    "rdma-enabled=error bridge=ok ipv4=ok coordinator=ok" "after setup: bridge and IPv4 pass"

ip -n "$(sim_ns mini3)" route add unreachable "$(sim_host_ip mini1)/32"
ok $? "mini3 loses its route to mini1"
doctor
is "$?" 8 "blocked: exit 8"
python3 "$t/q.py" "$t/out.json" findings coordinator >"$t/f"
is "$(cut -d' ' -f1 "$t/f")" "mini3" "blocked: only mini3 fails the coordinator check"
grep -q "EHOSTUNREACH" "$t/f"
ok $? "blocked: with the errno ($(cat "$t/f"))"
"$JACCL_CONFIG" doctor -F "$(sim_ssh_config)" --hosts "$(sim_hosts)" >"$t/out" 2>"$t/err"
sed -n '/^mini3:$/,/^$/p' "$t/out" | grep -q "error   coordinator: cannot connect to the coordinator $(sim_host_ip mini1):32323: EHOSTUNREACH"
ok $? "blocked: human output under mini3"
ip -n "$(sim_ns mini3)" route del unreachable "$(sim_host_ip mini1)/32"

# a firewall on mini1 that drops the coordinator port's SYNs: no answer, so
# each attempt ends by the host's own bound, which leaves no connect behind
# (the kernel would retry the SYN for minutes after doctor returned)
c0=$(sim_host_ip mini1)
if command -v nft >/dev/null 2>&1 &&
	ip netns exec "$(sim_ns mini1)" nft add table inet jcdrop 2>/dev/null &&
	ip netns exec "$(sim_ns mini1)" nft "add chain inet jcdrop in { type filter hook input priority 0; }" &&
	ip netns exec "$(sim_ns mini1)" nft add rule inet jcdrop in tcp dport 32323 drop; then
	doctor --command-timeout 2
	is "$?" 8 "dropped SYNs: exit 8"
	python3 "$t/q.py" "$t/out.json" findings coordinator >"$t/f"
	is "$(grep -c "ETIMEDOUT" "$t/f")" 3 "dropped SYNs: every host times out (mini1 too: its input hook drops its own SYNs) ($(tr '\n' ';' <"$t/f"))"
	grep -q 'timed out after 2 s' "$t/f"
	ok $? "dropped SYNs: the host's bound said so"
	pgrep -f "dev/tcp.* connect $c0 32323" >"$t/left"
	is "$(wc -l <"$t/left" | tr -d ' ')" 0 "dropped SYNs: no connect attempt is left on the hosts"
	ip netns exec "$(sim_ns mini1)" nft delete table inet jcdrop
else
	for _ in 1 2 3 4; do skip "nft cannot drop packets in a network namespace here"; done
fi

# something listening on the coordinator port (a stale job)
sim_exec mini1 "$(sim_python)" -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 32323)); s.listen(16); time.sleep(20)' >/dev/null 2>&1 &
lpid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
	ip netns exec "$(sim_ns mini1)" ss -ltn 2>/dev/null | grep -q ':32323 ' && break
	sleep 0.3
done
doctor
is "$(python3 "$t/q.py" "$t/out.json" status coordinator)" "coordinator=warning" \
    "port in use: a warning"
python3 "$t/q.py" "$t/out.json" findings coordinator | grep -c 'already listens' >"$t/f"
is "$(cat "$t/f")" 2 "port in use: for mini2 and mini3"
kill "$lpid" 2>/dev/null
wait "$lpid" 2>/dev/null
done_testing
