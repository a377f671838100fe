#!/bin/sh
# SPDX-License-Identifier: MIT
# make-drift-bundles.sh BUNDLES STATES: regenerate the bundles of the
# doctor's drift and sameness checks (with the doctor's own outputs, saved
# by `jaccl-config doctor --save`) and the state directory of the setup
# they are compared with. From a live simulated cluster (tests/sim: needs
# root), tests/doctor/topologies/triangle3.json, set up with --auto-setup
# into STATES/triangle3:
#   sw-same      right after the setup: every host alike
#   drift        mini1's first planned address flushed (as a reboot does),
#                bridge0 of mini2 up again with the port of its cable to mini1
#   sw-differ    mini2 with pmset sleep 10, mini3 with MLX_METAL_FAST_SYNCH=1
#                in its shell startup file and mlx 0.29.1 installed (package
#                metadata), mini1's firewall blocking all
#   drift-moved  the same three hosts cabled as triangle3-moved.json (the
#                mini1 -- mini2 cable on other ports), fresh: nothing set up
#   bridge-dhcp  sw-same with two edits of the saved outputs: mini1's bridge0
#                holds a self-assigned 169.254 address, mini2's default route
#                goes through bridge0
# The management network 10.0.1.0/24 replaces the simulator's.
#   JACCL_CONFIG   the binary (default ./jaccl-config)
#   KC_PREFIX, KC_MGMT_NET   namespace prefix and management /24 to use
#   KC_STOCK       0 (default here): the old kind Macs, whose answers the
#                  bundles in the tree are; 1: stock Macs
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sim=$here/../sim
out=$1
states=$2
jc=${JACCL_CONFIG:-./jaccl-config}
export KC_PREFIX=${KC_PREFIX:-drd$$} KC_MGMT_NET=${KC_MGMT_NET:-10.237.8} KC_QUIET=1
# the bundles in the tree are the old kind Macs' answers (KC_STOCK=1: stock Macs')
export KC_STOCK=${KC_STOCK:-0}
export KC_DIR=${TMPDIR:-/tmp}/$KC_PREFIX-sim
trap 'bash "$sim/simcluster.sh" down >/dev/null 2>&1 || :' EXIT
mkdir -p "$out" "$states"
S() { _h=$1; shift; ssh -F "$KC_DIR/ssh_config" "$_h" "$@" </dev/null; }
hosts=mini1,mini2,mini3
st=$states/triangle3

save() { # save NAME: doctor --save, then the management net replaced
	rm -rf "${out:?}/$1"
	"$jc" doctor -F "$KC_DIR/ssh_config" --hosts "$hosts" --state-dir "$st" \
	    --save "$out/$1" >/dev/null || :
	grep -rl "$KC_MGMT_NET\\." "$out/$1" |
	    xargs -r sed -i "s/$(echo "$KC_MGMT_NET" | sed 's/\./\\./g')\\./10.0.1./g"
}

bash "$sim/simcluster.sh" up "$here/topologies/triangle3.json" >/dev/null
rm -rf "$st"
"$jc" -F "$KC_DIR/ssh_config" --hosts "$hosts" --state-dir "$st" --auto-setup \
    </dev/null >/dev/null 2>&1
save sw-same

ifc=$(python3 -c '
import glob, json, sys
print(json.load(open(glob.glob(sys.argv[1] + "/hosts/*-mini1.json")[0]))["addresses"][0]["iface"])' "$st")
ip -n "$KC_PREFIX-mini1" addr flush dev "$ifc" scope global
m=$(python3 -c '
import json, sys
h = json.load(open(sys.argv[1] + "/hosts/mini2/mac.json"))
print(next(p["if"] for p in h["tb_ports"] if p["receptacle"] == 1))' "$KC_DIR")
S mini2 "sudo ifconfig bridge0 up; sudo ifconfig bridge0 addm $m" >/dev/null
save drift
"$jc" -F "$KC_DIR/ssh_config" --hosts "$hosts" --state-dir "$st.redo" --auto-setup \
    </dev/null >/dev/null 2>&1
rm -rf "$st.redo"
S mini2 "sudo ifconfig bridge0 deletem $m; sudo ifconfig bridge0 down" >/dev/null

S mini2 "sudo pmset -a sleep 10"
echo 'export MLX_METAL_FAST_SYNCH=1' >>"$KC_DIR/hosts/mini3/home/.bashrc"
S mini1 "sudo socketfilterfw --setblockall on" >/dev/null
site=$(S mini3 "python3 -c 'import site; print(site.getusersitepackages())'")
S mini3 "mkdir -p '$site/mlx-0.29.1.dist-info' &&
    printf 'Metadata-Version: 2.1\nName: mlx\nVersion: 0.29.1\n' >'$site/mlx-0.29.1.dist-info/METADATA'"
save sw-differ
bash "$sim/simcluster.sh" down >/dev/null

bash "$sim/simcluster.sh" up "$here/topologies/triangle3-moved.json" >/dev/null
save drift-moved
bash "$sim/simcluster.sh" down >/dev/null

# bridge-dhcp: edits of sw-same's outputs
rm -rf "$out/bridge-dhcp"
cp -r "$out/sw-same" "$out/bridge-dhcp"
python3 - "$out/bridge-dhcp" <<'PY'
import re, sys
d = sys.argv[1]
p = d + "/mini1/ifconfig.txt"
s = open(p).read()
s = re.sub(r"(\nbridge0: [^\n]*\n(?:\t[^\n]*\n)*?\tether [^\n]*\n)",
           r"\1\tinet 169.254.10.1 netmask 0xffff0000 broadcast 169.254.255.255\n", s, count=1)
open(p, "w").write(s)
open(d + "/mini2/route-n-get-default.txt", "w").write(
    "   route to: default\ndestination: default\n       mask: default\n"
    "    gateway: 169.254.10.1\n  interface: bridge0\n"
    "      flags: <UP,GATEWAY,DONE,STATIC,PRCLONING>\n"
    " recvpipe  sendpipe  ssthresh  rtt,msec    rttvar  hopcount      mtu     expire\n"
    "       0         0         0         0         0         0      1500         0 \n")
PY
python3 - "$out/bridge-dhcp/manifest.json" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
for h in m["hosts"]:
    if h["name"] == "mini2":
        h["outputs"]["route-n-get-default.txt"]["status"] = 0
with open(p, "w") as f:
    json.dump(m, f, indent=2)
    f.write("\n")
PY
