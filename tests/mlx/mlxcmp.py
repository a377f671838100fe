# SPDX-License-Identifier: MIT
"""Comparisons of jaccl-config's output with MLX's mlx.distributed_config.

mlxcmp.py commands MLX_OUT OUR_OUT
    The setup commands both print in manual mode, host by host, equal once
    ours are written in MLX's form: MLX's `route change P -interface IF`
    fails on macOS when no route to P exists (the usual case), so we run
    `route -n delete -host P` then `route -n add -host P -interface IF`;
    and we also take the cabled ports out of bridge0 (`deletem`), which
    MLX's `ifconfig bridge0 down` leaves in it. Prints a diff, exits 1.
mlxcmp.py errors MLX_ERR OUR_ERR
    Every line of MLX's messages (colours and [ERROR]/[WARN] tags removed)
    is in ours, but for MLX's "Rings found:" list (partial rings), where we
    name the hosts that keep a ring from closing instead. Prints the missing
    lines, exits 1.
mlxcmp.py envs MLX_DIR OUR_DIR
    The environment each rank saw, one RANK.json per rank in each folder
    (written by the rank: its environment, with the contents of the files
    MLX_IBV_DEVICES and MLX_HOSTFILE name under "@MLX_IBV_DEVICES" and
    "@MLX_HOSTFILE"), started by mlx.launch and by jaccl-config launch:
    the same ranks, the same variables with the same values, but for the
    ssh session's own (mlx.launch asks ssh for a terminal: SSH_TTY, TERM;
    the client's address and port) and the files' paths, whose contents
    are compared instead. Prints the differences, exits 1.
mlxcmp.py jaccl-links HOSTFILE
    The pairs of ranks a jaccl or jaccl-ring hostfile links, with the
    devices: "HOST_A rdma_x HOST_B rdma_y", one line per pair."""
import difflib
import json
import re
import sys


def mlx_commands(path):
    out = []
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("Setup for ") or line.startswith("sudo "):
            out.append(line)
    return out


def our_commands(path):
    out = []
    for line in open(path):
        line = line.rstrip("\n")
        m = re.fullmatch(r"sudo route -n add -host (\S+) -interface (\S+)", line)
        if m:
            out.append("sudo route change %s -interface %s" % m.groups())
        elif re.fullmatch(r"sudo route -n delete -host \S+", line):
            continue
        elif re.fullmatch(r"sudo ifconfig bridge0 down( deletem \S+)+", line):
            out.append("sudo ifconfig bridge0 down")  # MLX leaves the members in
        elif line.startswith("Setup for ") or line.startswith("sudo "):
            out.append(line)
    return out


def commands(mlx, ours):
    a, b = mlx_commands(mlx), our_commands(ours)
    if a == b and a:
        return 0
    if not a:
        print("MLX printed no setup command")
    sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(a, b, "mlx", "ours", lineterm=""))
    return 1


def errors(mlx, ours):
    text = open(ours).read()
    missing = 0
    in_rings = False
    for line in open(mlx):
        line = re.sub(r"\x1b\[[0-9;]*m", "", line).rstrip()
        line = re.sub(r"^\[(ERROR|WARN)\] ?", "", line).strip()
        if not line:
            continue
        if line == "Rings found:":
            in_rings = True
            continue
        if in_rings and line.startswith("- "):
            continue
        in_rings = False
        if line not in text:
            print("missing: %s" % line)
            missing += 1
    return 1 if missing else 0


def jaccl_links(path):
    hf = json.load(open(path))
    hosts = hf["hosts"]
    for i, h in enumerate(hosts):
        for j, d in enumerate(h["rdma"]):
            if j > i and d is not None:
                print(h["ssh"], d, hosts[j]["ssh"], hosts[j]["rdma"][i])
    return 0


# set by sshd and the login shell, not by the launcher
SESSION = {"SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "TERM", "SHLVL", "_", "OLDPWD",
           "MLX_IBV_DEVICES", "MLX_HOSTFILE", "@dir"}


def envs(mlx, ours):
    import os
    bad = 0
    ranks_m = sorted(f for f in os.listdir(mlx) if f.endswith(".json"))
    ranks_o = sorted(f for f in os.listdir(ours) if f.endswith(".json"))
    if ranks_m != ranks_o or not ranks_m:
        print("ranks: mlx.launch %s, ours %s" % (ranks_m, ranks_o))
        return 1
    for f in ranks_m:
        m = json.load(open(os.path.join(mlx, f)))
        o = json.load(open(os.path.join(ours, f)))
        for k in ("MLX_IBV_DEVICES", "MLX_HOSTFILE"):
            if (k in m) != (k in o):
                print("rank %s: %s set by %s only" % (f[:-5], k, "mlx.launch" if k in m else "us"))
                bad += 1
        for k in sorted(set(m) | set(o)):
            if k in SESSION:
                continue
            if m.get(k) != o.get(k):
                print("rank %s: %s = %r, mlx.launch: %r" % (f[:-5], k, o.get(k), m.get(k)))
                bad += 1
    return 1 if bad else 0


def main():
    cmd = sys.argv[1]
    if cmd == "commands":
        return commands(sys.argv[2], sys.argv[3])
    if cmd == "errors":
        return errors(sys.argv[2], sys.argv[3])
    if cmd == "envs":
        return envs(sys.argv[2], sys.argv[3])
    if cmd == "jaccl-links":
        return jaccl_links(sys.argv[2])
    print("usage: mlxcmp.py commands|errors|envs|jaccl-links ...", file=sys.stderr)
    return 2


sys.exit(main())
