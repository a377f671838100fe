#!/bin/sh
# SPDX-License-Identifier: MIT
# make-bundle.sh TOPOLOGY OUTDIR: write a probe bundle that looks like the
# probe of real Macs cabled as TOPOLOGY describes (a name from topologies/
# or a path). The fake macOS commands run in their offline mode (no
# namespaces, no root): the management address of host i is 192.168.1.(10+i)
# on en0, cabled Thunderbolt ports have a carrier and an IPv6 link-local
# address, nothing is configured yet.
#
# Layout: OUTDIR/<host>/<file> for every host (stdout and stderr of the
# command, as `cmd 2>&1` gives), OUTDIR/manifest.json
#   {"version": 1, "hosts": [{"name": H, "outputs": {"FILE": {"status": EXIT}}}]}
# in host order, and OUTDIR/topology.json (the true cabling). Linux hosts of
# a topology are not part of a bundle (it describes Macs only). The commands
# are those of the probe that made the example bundles (data/examples);
# KC_BUNDLE_CMDS (below) names others. The Macs are the kind ones
# (KC_STOCK=0) unless KC_STOCK says otherwise: the fakes answer by name, as
# the probe that made the example bundles asked.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 2 ] || { echo "usage: make-bundle.sh TOPOLOGY OUTDIR" >&2; exit 2; }
case $1 in
*/* | *.json) topo=$1 ;;
*) topo=$here/topologies/$1.json ;;
esac
out=$2
[ -f "$topo" ] || { echo "make-bundle: no topology $topo" >&2; exit 1; }
py=${KC_PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$topo" "$work/topology.json"   # OUTDIR may hold TOPOLOGY: it is replaced
KC_STOCK=${KC_STOCK:-0} "$py" "$here/fakemac/simtopo.py" compile "$work/topology.json" "$work" bundle 192.168.1

# file name <TAB> command
cmds='uname.txt	uname -s
system_profiler-SPThunderboltDataType.json	system_profiler SPThunderboltDataType -json
networksetup-listallhardwareports.txt	networksetup -listallhardwareports
ibv_devices.txt	ibv_devices
ibv_devinfo.txt	ibv_devinfo
ifconfig.txt	ifconfig -a
ipconfig-getifaddr-en0.txt	ipconfig getifaddr en0
ipconfig-getifaddr-en1.txt	ipconfig getifaddr en1
sw_vers.txt	sw_vers
rdma_ctl-status.txt	rdma_ctl status
sudo-n-true.txt	sudo -n true
sysctl-hw.model.txt	sysctl -n hw.model'
# KC_BUNDLE_CMDS=FILE: these commands instead (FILE<TAB>COMMAND lines, as
# tests/parse/probe_cmds prints a backend's), e.g. today's probe's
if [ -n "${KC_BUNDLE_CMDS:-}" ]; then
	cmds=$(cat "$KC_BUNDLE_CMDS") || exit 1
fi

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
for h in $(awk -F'\t' '$5 == "mac" {print $1}' "$work/hosts.tsv"); do
	mkdir -p "$out/$h"
	echo "$h" > "$out/$h/hostname.txt"
	printf '%s\n' "$cmds" | sed "s|^|$work/hosts/$h	$out/$h/|"
done > "$work/batch.tsv"
FAKEMAC_OFFLINE=1 "$py" -S "$here/fakemac/fakemac.py" --run-batch < "$work/batch.tsv" > "$work/status.tsv"
cp "$work/topology.json" "$out/topology.json"
"$py" - "$work/status.tsv" "$out/manifest.json" <<'EOF'
import json, sys
hosts = []
for line in open(sys.argv[1]):
    path, st = line.rstrip("\n").split("\t")
    h, f = path.split("/")[-2:]
    if not hosts or hosts[-1]["name"] != h:
        hosts.append({"name": h, "outputs": {}})
    hosts[-1]["outputs"][f] = {"status": int(st)}
    if f == "sysctl-hw.model.txt":
        hosts[-1]["outputs"]["hostname.txt"] = {"status": 0}
with open(sys.argv[2], "w") as f:
    json.dump({"version": 1, "hosts": hosts}, f, indent=2)
    f.write("\n")
EOF
