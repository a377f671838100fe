# SPDX-License-Identifier: MIT
# Helpers of the watch tests (sourced after tests/lib/tap.sh and sim.sh).

# watch_start OUT ARGS...: start `jaccl-config watch` on the current cluster
# in the background, stdout to OUT, stderr to OUT.err; sets WATCH_PID.
watch_start() {
	_w_out=$1
	shift
	"$JACCL_CONFIG" watch -F "$(sim_ssh_config)" --connect-timeout 2 "$@" \
	    >"$_w_out" 2>"$_w_out.err" &
	WATCH_PID=$!
}

# watch_stop SIGNAL: send SIGNAL to the watch and wait for it; its exit
# status in WATCH_RC.
watch_stop() {
	kill -"$1" "$WATCH_PID" 2>/dev/null
	wait "$WATCH_PID"
	WATCH_RC=$?
}

# wev FILE KIND [N]: the N-th (default 1st) JSON event of KIND in FILE,
# printed by the Python expression of $WEV_FMT over e (the event); empty
# when there is none.
wev() {
	python3 - "$1" "$2" "${3:-1}" "${WEV_FMT:-e}" <<'PY'
import json, sys
path, kind, n, fmt = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
seen = 0
for line in open(path):
    line = line.strip()
    if not line:
        continue
    e = json.loads(line)
    if e.get("event") == kind:
        seen += 1
        if seen == n:
            print(eval(fmt))
            break
PY
}

# ends C: "host iface|host iface" of a cable object of an event, ends sorted
WEV_ENDS='"|".join(sorted(x["host"] + " " + x["iface"] for x in CABLE["ends"]))'
wev_ends() { # wev_ends FILE KIND before|after
	WEV_FMT=$(echo "$WEV_ENDS" | sed "s/CABLE/e[\"$3\"]/") wev "$1" "$2"
}

# remote_loops H: how many processes of host H run watch's remote loop,
# and how many ssh sessions H has, right now. A session is counted once by
# the sshd process named for it, "sshd: USER@TTY" (root's session is that
# one process; another user's also has the privileged monitor "sshd: USER
# [priv]", and the listening sshd is neither).
remote_loops() {
	_rl_n=0
	for _rl_p in $(ip netns pids "$(sim_ns "$1")" 2>/dev/null); do
		_rl_c=$(tr '\0' ' ' 2>/dev/null <"/proc/$_rl_p/cmdline") || continue
		case $_rl_c in
		*"jaccl-config watch loop"*) _rl_n=$((_rl_n + 1)) ;;
		"sshd: "*@*) _rl_n=$((_rl_n + 1)) ;;
		esac
	done
	echo "$_rl_n"
}

# wait_no_loops H...: wait (up to 100 s) until no host of H... runs a remote
# loop or an sshd session; 0 when that happened.
wait_no_loops() {
	for _wn in $(seq 1 1000); do
		_wn_left=0
		for _wn_h in "$@"; do
			_wn_left=$((_wn_left + $(remote_loops "$_wn_h")))
		done
		[ "$_wn_left" -eq 0 ] && return 0
		sleep 0.1
	done
	return 1
}
