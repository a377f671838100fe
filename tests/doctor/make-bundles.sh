#!/bin/sh
# SPDX-License-Identifier: MIT
# make-bundles.sh OUTDIR: regenerate the probe bundles of the doctor tests.
# Each comes from a live simulated cluster (tests/sim: needs root) set up
# as mlx.distributed_config would (bridge down, one /30 per cable) except
# for the fault the bundle is about, then probed with `jaccl-config probe
# --save`. A few faults the simulator cannot make are edits of the saved
# outputs (a port left PORT_DOWN, one machine listed twice). The
# management network 10.0.1.0/24 replaces the simulator's.
#   JACCL_CONFIG   the binary (default ./jaccl-config)
#   KC_PREFIX, KC_MGMT_NET   namespace prefix and management /24 to use
#   KC_STOCK       0 (default here): the old kind Macs, whose answers the
#                  bundles in the tree are; 1: stock Macs
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sim=$here/../sim
out=$1
jc=${JACCL_CONFIG:-./jaccl-config}
export KC_PREFIX=${KC_PREFIX:-drb$$} KC_MGMT_NET=${KC_MGMT_NET:-10.237.9} KC_QUIET=1
# the bundles in the tree are the old kind Macs' answers (KC_STOCK=1: stock Macs')
export KC_STOCK=${KC_STOCK:-0}
export KC_DIR=${TMPDIR:-/tmp}/$KC_PREFIX-sim
. "$here/lib.sh"
sim_cluster_json() { echo "$KC_DIR/cluster.json"; }
sim_ssh() { _h=$1; shift; ssh -F "$KC_DIR/ssh_config" "$_h" "$@"; }
trap 'bash "$sim/simcluster.sh" down >/dev/null 2>&1 || :' EXIT
mkdir -p "$out"

# bundle NAME TOPOLOGY SKIP: SKIP is a grep -v pattern of setup commands to leave out
bundle() {
	bash "$sim/simcluster.sh" up "$2" >/dev/null
	dr_setup_cmds "$KC_DIR/cluster.json" | grep -v -e "$3" |
	    while IFS='	' read -r h c; do sim_ssh "$h" "$c" </dev/null >/dev/null; done
	rm -rf "${out:?}/$1"
	"$jc" probe -F "$KC_DIR/ssh_config" --save "$out/$1" \
	    --hosts "$(cut -f1 "$KC_DIR/hosts.tsv" | paste -sd, -)" >/dev/null
	bash "$sim/simcluster.sh" down >/dev/null
	grep -rl "$KC_MGMT_NET\\." "$out/$1" | xargs sed -i "s/$(echo "$KC_MGMT_NET" | sed 's/\./\\./g')\\./10.0.1./g"
}

topo=$sim/topologies
bundle configured "$topo/studio-mesh4.json" '^$'
bundle rdma-disabled "$topo/rdma-disabled.json" '^$'
bundle tb4-link "$topo/mesh4-tb4-link.json" '^$'
bundle dock "$topo/dock-peer.json" '^$'
bundle bridge-loop "$topo/studio-mesh4.json" 'bridge0 down'
bundle no-ipv4 "$topo/studio-mesh4.json" '^m3-ultra-1	sudo ifconfig en5 '
bundle os-mismatch "$here/topologies/os-mismatch.json" '^$'
bundle moved "$here/topologies/moved.json" '^$'
"$sim/make-bundle.sh" "$here/topologies/mesh9.json" "$out/mesh9"

# port-down: m3-ultra-2's end of its cable to m3-ultra-1 (en5) stays down
rm -rf "$out/port-down"
cp -r "$out/configured" "$out/port-down"
python3 - "$out/port-down/m3-ultra-2/ibv_devinfo.txt" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
blocks = s.split("hca_id:")
for i, b in enumerate(blocks):
    if b.startswith("\trdma_en5\n"):
        blocks[i] = b.replace("PORT_ACTIVE (4)", "PORT_DOWN (1)")
open(p, "w").write("hca_id:".join(blocks))
PY

# duplicate: m3-ultra-1 reached a second time under another name
rm -rf "$out/duplicate"
cp -r "$out/configured" "$out/duplicate"
cp -r "$out/duplicate/m3-ultra-1" "$out/duplicate/studio-a"
python3 - "$out/duplicate/manifest.json" <<'PY'
import copy, json, sys
p = sys.argv[1]
m = json.load(open(p))
h = copy.deepcopy(m["hosts"][0])
h["name"] = "studio-a"
m["hosts"].append(h)
with open(p, "w") as f:
    json.dump(m, f, indent=2)
    f.write("\n")
PY
