#!/bin/sh
# SPDX-License-Identifier: MIT
# MLX's mlx.distributed_config on stock Macs (sudo-scoped): mini1's sudo is
# NOPASSWD for everything, mini2's only for the network commands
# (/sbin/ifconfig, /sbin/route, /usr/sbin/networksetup), the rule an owner
# who cares writes. MLX's tool checks sudo with `ssh host sudo ls`, which
# that rule refuses: MLX then finds no passwordless sudo on mini2 and does
# not set anything up, although every command its setup runs is allowed
# there.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/mlx/lib.sh"
sim_require_stock
mlx_start sudo-scoped

# what MLX's check meets on each host: its own command, over its own ssh
for h in mini1 mini2; do
	JC_MLX_SSH_CONFIG=$MX_CFG "$t/mlx-bin/ssh" -o BatchMode=yes "$h" sudo ls </dev/null >/dev/null 2>"$t/$h.err"
	echo $? >"$t/$h.st"
done
is "$(cat "$t/mini1.st")" 0 "mini1 (NOPASSWD: ALL): ssh mini1 sudo ls passes"
is "$(cat "$t/mini2.st") $(tail -1 "$t/mini2.err")" "1 sudo: a password is required" \
    "mini2 (scoped): ssh mini2 sudo ls is refused, a password would be needed"
is "$(sim_ssh mini2 'sudo -n -l /sbin/ifconfig && sudo -n -l /sbin/route && sudo -n -l /usr/sbin/networksetup' </dev/null 2>&1)" \
    "/sbin/ifconfig
/sbin/route
/usr/sbin/networksetup" "mini2: yet each command of a setup is allowed without a password"

# MLX's tool itself: --auto-setup from the cluster as it came up
_mx_state "$t/s0"
mlx_config --hosts "$MX_HOSTS" --auto-setup --output-hostfile "$t/m.json" >"$t/m.out" 2>"$t/m.err"
is "$?" 0 "mlx.distributed_config --auto-setup: exit 0 (it prints the setup instead)"
cat "$t/m.out" "$t/m.err" >"$t/m.all"
grep -q '\[WARN\] Automatic setup requested but the following hosts do not have passwordless sudo' "$t/m.err"
ok $? "MLX warns that it found no passwordless sudo"
# its warnings: "ESC[33m[WARN]  -  mini2 ESC[0m"
is "$(sed -n 's/^.*\[WARN\] *- *\(mini[0-9]\) .*$/\1/p' "$t/m.err" | sort -u | tr '\n' ' ')" "mini2 " \
    "... on mini2, the scoped host, only"
grep -q 'passwordless sudo' "$t/m.err" || diag "$(cat "$t/m.err")"
grep -q '^Setup for mini2' "$t/m.all" && grep -q 'sudo ifconfig' "$t/m.all"
ok $? "MLX prints the setup commands for the owner to run"
grep -q 'Running auto setup' "$t/m.all"
ok $((!$?)) "MLX runs no setup on any host"
_mx_state "$t/s1"
cmp -s "$t/s0" "$t/s1"
ok $? "every host's addresses, routes and bridge0 as they came up"
grep -c ' COMMAND=/usr/bin/ls$' "$SIM_DIR/hosts/mini1/sudo.log" >"$t/n"
[ "$(cat "$t/n")" -ge 2 ]
ok $? "mini1's sudo log shows MLX's sudo ls (and ours)"
grep -q 'COMMAND=/sbin/ifconfig' "$SIM_DIR/hosts/mini2/sudo.log"
ok $((!$?)) "mini2's sudo log: MLX ran nothing through sudo there"
[ -s "$t/m.json" ]
ok $? "MLX still writes its hostfile"
mlx_done
done_testing
