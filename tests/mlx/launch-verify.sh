#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's own launcher runs jaccl-config verify-rank: on the simulated cluster
# of 4 Mac Studios in a full mesh, `jaccl-config --auto-setup
# --output-hostfile h.json`, then `mlx.launch --hostfile h.json --
# jaccl-config verify-rank --fabric tcp` passes, for the jaccl hostfile
# (mesh) and the jaccl-ring one (ring, MLX_JACCL_RING set by mlx.launch).
#
# mlx.launch stops reading a rank's output once its ssh has exited, so the
# last lines a rank prints may be lost, and it exits 0 whatever the ranks
# do: each rank's report and exit status go to files of its own.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
mlx_start studio-mesh4

# run_verify NAME HOSTFILE RANKS GROUP LINKS: mlx.launch runs verify-rank on
# every host; rank 0's JSON report passes with the expected group and links
# Each rank's files go in the cluster's shared folder, the one path of the
# client's that every host sees (a stock Mac sees neither the build tree nor
# $t), where the ssh user of every host may write. The program is
# jaccl-config as each host has it: this build's (seen by the old Macs), or
# Homebrew's on a stock Mac, whose PATH for ssh commands has no
# /opt/homebrew/bin: there mlx.launch is given the path, as a user does.
sh_dir=$(sim_shared)
rbin=$JACCL_CONFIG
! sim_stock "$(echo "$MX_HOSTS" | cut -d, -f1)" || rbin=/opt/homebrew/bin/jaccl-config
run_verify() {
	mkdir -p "$t/$1" "$sh_dir/$1" && chmod 1777 "$sh_dir/$1"
	timeout 300 sh -c '
		JC_MLX_SSH_CONFIG=$1 PATH=$2:$PATH exec sh "$3/bin/mlx.launch" --hostfile "$4" \
		    --env JACCL_VERIFY_MB=1 --env JACCL_VERIFY_MAX_MB=1 -- \
		    sh -c "\"\$@\" > $5/rank\$MLX_RANK.json 2> $5/rank\$MLX_RANK.err; echo \$? > $5/rank\$MLX_RANK.status" \
		    sh "$6" verify-rank --fabric tcp --timeout 120 --json' \
	    sh "$MX_CFG" "$t/mlx-bin" "$MLX_PEERS" "$2" "$sh_dir/$1" "$rbin" \
	    > "$t/$1/launch.out" 2> "$t/$1/launch.err"
	is "$?" 0 "$1: mlx.launch exits 0"
	is "$(cat "$sh_dir/$1"/rank*.status 2>/dev/null | tr '\n' ' ')" "$(for r in $(seq 0 $(($3 - 1))); do printf '0 '; done)" \
	    "$1: verify-rank exits 0 on each of the $3 ranks mlx.launch started"
	python3 - "$sh_dir/$1/rank0.json" "$3" "$4" "$5" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n, group, links = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
assert r["ok"] is True, r.get("failures")
assert r["ranks"] == n and r["group"] == group, (r["ranks"], r["group"])
assert len(r["links"]) == links and all(l["status"] == "ok" for l in r["links"]), r["links"]
assert r["allreduce"]["wrong"] == 0 and r["allreduce"]["rows"]
assert r["failures"] == []
PY
	ok $? "$1: rank 0's report: PASS, a $4 of $3 ranks, $5 links, all-reduce right"
	[ -s "$sh_dir/$1/rank0.json" ] || diag "$(tail -5 "$t/$1"/*.err "$sh_dir/$1"/*.err)"
}

"$JACCL_CONFIG" -F "$MX_CFG" $MX_SLOW --hosts "$MX_HOSTS" --auto-setup --state-dir "$t/st" \
    --output-hostfile "$t/h.json" < /dev/null > "$t/setup.out" 2> "$t/setup.err"
ok $? "jaccl-config --auto-setup --output-hostfile h.json"
run_verify jaccl "$t/h.json" 4 mesh 6

"$JACCL_CONFIG" -F "$MX_CFG" $MX_SLOW --hosts "$MX_HOSTS" --backend jaccl-ring --auto-setup \
    --state-dir "$t/st" --output-hostfile "$t/hr.json" < /dev/null > "$t/setup.out" 2> "$t/setup.err"
ok $? "jaccl-config --backend jaccl-ring --auto-setup --output-hostfile hr.json"
run_verify jaccl-ring "$t/hr.json" 4 ring 4
mlx_done
done_testing
