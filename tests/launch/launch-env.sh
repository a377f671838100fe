#!/bin/bash
# SPDX-License-Identifier: MIT
# jaccl-config launch on a simulated cluster of 4 Linux hosts: the
# environment every rank receives, variable by variable, against what MLX's
# own mlx.launch gives the same command on the same cluster (jaccl,
# jaccl-ring and ring hostfiles, hostfile envs before --env, ports,
# connections per IP; skipped with the reason when MLX's tools are missing);
# values that need quoting; one failing rank stops the others and is named;
# a rank killed on its host; an interrupt; nothing left on the hosts.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${top_srcdir:-.}/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/launch/lib.sh"
. "$top_srcdir/tests/mlx/lib.sh"

SIM_SANITIZE=1	# also in the sanitizer build
sim_require
lv_up linux-mesh4 || { echo "Bail out! cannot bring the simulated cluster up"; exit 1; }
lv_address || { echo "Bail out! cannot address the cables"; exit 1; }
CFG=$(sim_ssh_config)
MX_CFG=$CFG
MX_HOSTS=$(sim_hosts)
mlx_find || MLX_PEERS=
# every launch is bounded: a hang is a failure, not a stuck test
jc() { timeout 60 "$JACCL_CONFIG" "$@"; }
# the printer: each rank writes its environment to DIR/RANK.json (the
# hosts share this machine's files; mlx.launch may lose the last lines a
# rank prints) and prints it
PRINTENV='import os, json, sys
e = dict(os.environ)
for k in ("MLX_IBV_DEVICES", "MLX_HOSTFILE"):
    if k in e:
        e["@" + k] = open(e[k]).read()
        e["@dir"] = os.path.dirname(e[k])
json.dump(e, open(os.path.join(sys.argv[1], e["MLX_RANK"] + ".json"), "w"))
print(json.dumps(e))'

# compare NAME HOSTFILE [launch options...]: launch the printer with
# jaccl-config and with mlx.launch, compare.
compare() {
	local name=$1 hf=$2
	shift 2
	rm -rf "$t/env-ours" "$t/env-mlx"
	mkdir -p "$t/env-ours" "$t/env-mlx"
	jc launch --hostfile "$hf" -F "$CFG" "$@" -- python3 -c "$PRINTENV" "$t/env-ours" \
	    >"$t/out" 2>"$t/err"
	local st=$?
	isd "$st" 0 "$name: every rank exits 0" "$t/err"
	if [ -n "$MLX_PEERS" ]; then
		mlx_launch --hostfile "$hf" "$@" -- python3 -c "$PRINTENV" "$t/env-mlx" \
		    >"$t/mlx.out" 2>"$t/mlx.err"
		python3 "$MX_PY" envs "$t/env-mlx" "$t/env-ours" >"$t/diff"
		ok $? "$name: every variable of every rank as mlx.launch sets it"
		[ -s "$t/diff" ] && diag "$(head -20 "$t/diff")"
	else
		skip "$name: every variable as mlx.launch sets it: $MLX_MISSING"
	fi
	# the folders that held the files are gone
	left=$(python3 -c 'import json, re, sys
for l in open(sys.argv[1]):
    m = re.match(r"^\[\d+\] (\{.*\})$", l)
    if m: print(json.loads(m.group(1)).get("@dir", ""))' "$t/out" | while read -r d; do
		[ -n "$d" ] && [ -e "$d" ] && echo "$d"; done)
	is "$left" "" "$name: the temporary folders were removed"
}

# jaccl: hostfile envs (one overridden by --env, one invalid), values to quote
lv_hostfile "$t/jaccl.json" jaccl
python3 - "$t/jaccl.json" <<'PY'
import json, sys
p = sys.argv[1]
h = json.load(open(p))
h["envs"] = ["FROM_FILE=1", "BOTH=file", "not-valid=x", "QUOTED=it's \"q\" $HOME `x` \\ ;|&"]
json.dump(h, open(p, "w"), indent=4)
PY
compare "jaccl" "$t/jaccl.json" --env BOTH=cli --env "SPACE=a  b" --env "EMPTY="
if [ -n "$MLX_PEERS" ]; then
	# mlx.launch warns from one thread per rank, its lines may interleave
	msg=$(sed -n "s/^.*warning: \('not-valid=x' .*\)\$/\1/p" "$t/err" | head -n 1)
	[ -n "$msg" ] && sed 's/\x1b\[[0-9;]*m//g' "$t/mlx.err" | grep -qF "$msg"
	okd $? "jaccl: an invalid entry is ignored with mlx.launch's warning" "$t/err" "$t/mlx.err"
else
	skip "jaccl: an invalid entry is ignored with mlx.launch's warning: $MLX_MISSING"
fi

# jaccl-ring from the command line over a jaccl hostfile, another port
compare "jaccl-ring" "$t/jaccl.json" --backend jaccl-ring --starting-port 40100

# ring: the hostfile's backend, two connections per IP
lv_hostfile "$t/ring.json" ring
compare "ring" "$t/ring.json" --connections-per-ip 2 --starting-port 5000

# a legacy list hostfile (no backend: ring)
python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["hosts"][:2]))' \
    "$t/ring.json" >"$t/list.json"
compare "list hostfile" "$t/list.json"

# output is prefixed by rank, stdout and stderr apart
jc launch --hostfile "$t/ring.json" -F "$CFG" -- \
    sh -c 'echo "out $MLX_RANK"; echo "err $MLX_RANK" >&2' >"$t/out" 2>"$t/err"
is "$(sort "$t/out" | tr '\n' ' ')" "[0] out 0 [1] out 1 [2] out 2 [3] out 3 " \
    "each line of standard output carries its rank"
is "$(grep '^\[' "$t/err" | sort | tr '\n' ' ')" "[0] err 0 [1] err 1 [2] err 2 [3] err 3 " \
    "each line of standard error carries its rank"

# the ranks' standard input is at its end: a command reading it does not wait
jc launch --hostfile "$t/ring.json" -F "$CFG" -- sh -c 'cat; echo "eof $MLX_RANK"' \
    </dev/zero >"$t/out" 2>"$t/err"
is "$?:$(sort "$t/out" | tr '\n' ' ')" "0:[0] eof 0 [1] eof 1 [2] eof 2 [3] eof 3 " \
    "standard input: every rank reads its end at once"

# one rank fails: the others (sleeping) are stopped, the failure is named
jc launch --hostfile "$t/ring.json" -F "$CFG" -- \
    sh -c 'if [ "$MLX_RANK" = 2 ]; then sleep 0.5; exit 3; fi; exec sleep 300' \
    >"$t/out" 2>"$t/err"
st=$?
is "$st" 3 "a failing rank: the launcher exits with its code"
grep -q 'lx3: warning: Node with rank 2 exited with code 3' "$t/err"
okd $? "a failing rank: named as mlx.launch names it" "$t/err"
is "$(lv_leftovers 'sleep 300')" "" "a failing rank: the other ranks were stopped on their hosts"

# a rank killed on its host
(
	for i in $(seq 1 100); do
		p=$(ip netns pids "$(sim_ns lx2)" | while read -r p; do
			{ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -q 'sleep 301' && echo "$p"; done)
		[ -n "$p" ] && { kill -9 $p; break; }
		sleep 0.1
	done
) &
killer=$!
jc launch --hostfile "$t/ring.json" -F "$CFG" -- sleep 301 >"$t/out" 2>"$t/err"
st=$?
wait "$killer"
is "$st" 137 "a rank killed on its host (SIGKILL): exit 128 + 9"
grep -q 'lx2: warning: Node with rank 1 was killed (SIGKILL)' "$t/err"
okd $? "a rank killed on its host: named" "$t/err"
is "$(lv_leftovers 'sleep 301')" "" "a rank killed on its host: the others were stopped"

# a rank ended by SIGSEGV: the job's status is 128 + 11 (the others were
# stopped, never a 0); under jaccl, with tbt_post_recv in its output, it is
# named as the known crash of Apple's driver; under ring nothing is guessed
segv='if [ "$MLX_RANK" = 1 ]; then echo "frame #0: libthunderboltrdma.dylib\`tbt_post_recv + 92" >&2; kill -SEGV $$; fi; exec sleep 305'
jc launch --hostfile "$t/jaccl.json" -F "$CFG" -- sh -c "$segv" >"$t/out" 2>"$t/err"
st=$?
is "$st" 139 "jaccl, a rank killed by SIGSEGV: exit 128 + 11"
grep -q "^jaccl-config: error: rank 1 (lx2) was killed by SIGSEGV" "$t/err" &&
    grep -q "^jaccl-config: lx2: error: rank 1: SIGSEGV in tbt_post_recv: the known crash of Apple's Thunderbolt RDMA driver (libthunderboltrdma's tbt_post_recv, MLX #4192, #4319).*; fix: check the cables (jaccl-config watch), then run the job again$" "$t/err"
okd $? "jaccl, SIGSEGV in tbt_post_recv: the rank, the signal and the known crash named" "$t/err"
is "$(lv_leftovers 'sleep 305')" "" "jaccl, SIGSEGV: the other ranks were stopped"
jc launch --hostfile "$t/ring.json" -F "$CFG" -- sh -c "$segv" >"$t/out" 2>"$t/err"
st=$?
is "$st" 139 "ring, a rank killed by SIGSEGV: exit 139"
! grep -q 'known crash' "$t/err"
okd $? "ring, SIGSEGV: no JACCL crash guessed" "$t/err"

# JACCL_PROGRESS_TIMEOUT_S and MLX_JACCL_PROGRESS_TIMEOUT_S pass through to
# every rank when whole numbers (a bad one is warned about), --env wins
pt='echo "pt $MLX_RANK ${JACCL_PROGRESS_TIMEOUT_S:-unset} ${MLX_JACCL_PROGRESS_TIMEOUT_S:-unset}"'
JACCL_PROGRESS_TIMEOUT_S=42 MLX_JACCL_PROGRESS_TIMEOUT_S=soon \
    jc launch --hostfile "$t/jaccl.json" -F "$CFG" -- sh -c "$pt" >"$t/out" 2>"$t/err"
is "$?:$(sort "$t/out" | tr '\n' ' ')" "0:[0] pt 0 42 unset [1] pt 1 42 unset [2] pt 2 42 unset [3] pt 3 42 unset " \
    "JACCL_PROGRESS_TIMEOUT_S=42 reaches every rank, a bad MLX_ one none"
grep -q "warning: MLX_JACCL_PROGRESS_TIMEOUT_S='soon' is not a whole number of seconds: not passed to the ranks" "$t/err"
okd $? "the bad value is warned about" "$t/err"
MLX_JACCL_PROGRESS_TIMEOUT_S=0 JACCL_PROGRESS_TIMEOUT_S=42 \
    jc launch --hostfile "$t/jaccl.json" -F "$CFG" --env JACCL_PROGRESS_TIMEOUT_S=7 -- sh -c "$pt" >"$t/out" 2>"$t/err"
is "$?:$(sort "$t/out" | tr '\n' ' ')" "0:[0] pt 0 7 0 [1] pt 1 7 0 [2] pt 2 7 0 [3] pt 3 7 0 " \
    "--env JACCL_PROGRESS_TIMEOUT_S=7 wins over the passed value; 0 (off) passes"

# an interrupt stops every rank
"$JACCL_CONFIG" launch --hostfile "$t/ring.json" -F "$CFG" -- sleep 302 >"$t/out" 2>"$t/err" &
pid=$!
for i in $(seq 1 100); do
	[ "$(lv_leftovers 'sleep 302' | wc -l)" = 4 ] && break
	sleep 0.1
done
kill -INT "$pid"
wait "$pid"
st=$?
is "$st" 130 "SIGINT: the launcher exits 130"
is "$(lv_leftovers 'sleep 302')" "" "SIGINT: every rank was stopped on its host"

# a host that cannot be reached: nothing starts, the host is named
python3 - "$t/ring.json" "$t/bad.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
h["hosts"][3]["ssh"] = "nosuchhost.invalid"
json.dump(h, open(sys.argv[2], "w"))
PY
jc launch --hostfile "$t/bad.json" -F "$CFG" --connect-timeout 2 -- sleep 303 \
    >"$t/out" 2>"$t/err"
st=$?
is "$st" 3 "unreachable host: exit 3"
grep -q 'nosuchhost.invalid' "$t/err"; ok $? "unreachable host: named"
is "$(lv_leftovers 'sleep 303')" "" "unreachable host: no rank was started"

# usage errors as mlx.launch's
jc launch --hostfile "$t/ring.json" -F "$CFG" >/dev/null 2>"$t/err"
st=$?
is "$st" 2 "no command: exit 2"
grep -q 'No script is provided' "$t/err"; ok $? "no command: mlx's message"
python3 - "$t/jaccl.json" "$t/selfdev.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
h["hosts"][1]["rdma"][1] = "rdma_eth9"
json.dump(h, open(sys.argv[2], "w"))
PY
jc launch --hostfile "$t/selfdev.json" -F "$CFG" -- true >/dev/null 2>"$t/err"
st=$?
is "$st" 2 "malformed jaccl hostfile: exit 2"
grep -q 'RDMA device of self should be null' "$t/err"; ok $? "malformed jaccl hostfile: mlx's message"

mlx_done
done_testing
