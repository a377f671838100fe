# SPDX-License-Identifier: MIT
"""mlx.launch's per-rank environment, written from its documented rules
independently of the C code, and a comparison with what ranks printed.

usage: mlx_env.py HOSTFILE OUTPUT [--backend B] [--env K=V]... [--starting-port P]
                  [--connections-per-ip N]
OUTPUT holds the launcher's output: lines "[rank] {json}" where the JSON is
the rank's environment, the contents of MLX_IBV_DEVICES and MLX_HOSTFILE
being given under "@MLX_IBV_DEVICES" and "@MLX_HOSTFILE". Prints one line per
difference and exits 1 when there is any."""
import argparse
import json
import re
import sys


def expected(hostfile, backend, envs, port, cpi):
    data = json.load(open(hostfile))
    if isinstance(data, list):
        hosts, hf_backend, hf_envs = data, "", []
    else:
        hosts, hf_backend, hf_envs = data["hosts"], data.get("backend", ""), data.get("envs", [])
    backend = backend or hf_backend or "ring"
    user = {}
    for e in hf_envs + envs:
        key, sep, value = e.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z0-9_]+", key):
            continue
        user[key] = value
    files = {}
    fixed = {}
    if backend in ("jaccl", "jaccl-ring"):
        fixed["MLX_JACCL_COORDINATOR"] = "%s:%d" % (hosts[0]["ips"][0], port)
        if backend == "jaccl-ring":
            fixed["MLX_JACCL_RING"] = "1"
        files["MLX_IBV_DEVICES"] = json.dumps([h.get("rdma", []) for h in hosts])
    else:
        if len(hosts) > 1:
            rows, p = [], port
            for h in hosts:
                row = []
                for ip in h["ips"]:
                    for _ in range(cpi):
                        row.append("%s:%d" % (ip, p))
                        p += 1
                rows.append(row)
            files["MLX_HOSTFILE"] = json.dumps(rows)
        else:
            files["MLX_HOSTFILE"] = ""
    out = []
    for rank in range(len(hosts)):
        env = dict(user)
        env.update(fixed)
        for k, v in files.items():
            env["@" + k] = v + "\n"     # mlx writes it with echo
        env["MLX_RANK"] = str(rank)
        out.append(env)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hostfile")
    ap.add_argument("output")
    ap.add_argument("--backend")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--starting-port", type=int, default=32323)
    ap.add_argument("--connections-per-ip", type=int, default=1)
    a = ap.parse_args()
    want = expected(a.hostfile, a.backend, a.env, a.starting_port, a.connections_per_ip)
    got = {}
    for line in open(a.output):
        m = re.match(r"^\[(\d+)\] (\{.*\})$", line.rstrip("\n"))
        if m:
            got[int(m.group(1))] = json.loads(m.group(2))
    bad = 0
    for rank, env in enumerate(want):
        if rank not in got:
            print("rank %d: no environment printed" % rank)
            bad += 1
            continue
        g = got[rank]
        for k in [k[1:] for k in env if k.startswith("@")]:
            if not g.get(k):
                print("rank %d: %s (a file's path) is not set" % (rank, k))
                bad += 1
        for k, v in env.items():
            if g.get(k) != v:
                print("rank %d: %s = %r, want %r" % (rank, k, g.get(k), v))
                bad += 1
        for k in g:
            if (k.startswith("MLX_") and k not in env and "@" + k not in env) or \
                    (k.startswith("@") and k != "@dir" and k not in env):
                print("rank %d: unexpected %s = %r" % (rank, k, g[k]))
                bad += 1
    if len(got) != len(want):
        print("%d ranks printed, want %d" % (len(got), len(want)))
        bad += 1
    return 1 if bad else 0


sys.exit(main())
