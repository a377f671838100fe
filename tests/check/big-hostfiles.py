# SPDX-License-Identifier: MIT
# The large hostfiles of the check tests and of bench/check-bench.sh, in
# folder DIR: big-ring.json (a valid ring of 200000 hosts with one IP each,
# about 10 MB), big-mesh.json (a 10 MB JACCL matrix of 1000 hosts where
# every host uses one device for every peer), many-hosts.json (200000 hosts
# without rdma under jaccl).
#   python3 big-hostfiles.py DIR [NAME...]
import sys

t = sys.argv[1]
names = sys.argv[2:] or ["big-ring", "big-mesh", "many-hosts"]
if "big-ring" in names:
    with open(t + "/big-ring.json", "w") as f:
        f.write('{"backend": "ring", "envs": [], "hosts": [\n')
        f.write(",\n".join('{"ssh": "h%d", "ips": ["10.%d.%d.%d"], "rdma": []}'
                           % (i, i >> 16, (i >> 8) & 255, i & 255) for i in range(200000)))
        f.write("]}\n")
if "big-mesh" in names:
    n = 1000
    with open(t + "/big-mesh.json", "w") as f:
        f.write('{"backend": "jaccl", "hosts": [\n')
        for i in range(n):
            row = ",".join("null" if j == i else '"rdma_en2"' for j in range(n))
            f.write('{"ssh": "m%d", "ips": ["10.0.0.1"], "rdma": [%s]}%s\n'
                    % (i, row, "," if i + 1 < n else ""))
        f.write("]}\n")
if "many-hosts" in names:
    # rules that walk pairs of hosts must not walk the 4e10 pairs of a
    # matrix that is not there
    with open(t + "/many-hosts.json", "w") as f:
        f.write('{"backend": "jaccl", "hosts": [%s]}\n'
                % ",".join('{"ssh": "h%d"}' % i for i in range(200000)))
# jaccl-ring-N.json: a JACCL ring of N hosts, one cable to each neighbour
# (rdma_en2 to the right, rdma_en3 to the left): mlx.launch puts its matrix
# of N * N cells on every rank's command line
for name in names:
    if not name.startswith("jaccl-ring-"):
        continue
    n = int(name[len("jaccl-ring-"):])
    hosts = []
    for i in range(n):
        row = ["null"] * n
        row[(i + 1) % n] = '"rdma_en2"'
        row[(i - 1) % n] = '"rdma_en3"'
        hosts.append('{"ssh": "m%d", "ips": ["10.1.%d.%d"], "rdma": [%s]}'
                     % (i, i >> 8, i & 255, ", ".join(row)))
    with open("%s/%s.json" % (t, name), "w") as f:
        f.write('{"backend": "jaccl-ring", "hosts": [\n%s]}\n' % ",\n".join(hosts))
