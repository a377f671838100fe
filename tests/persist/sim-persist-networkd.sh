#!/bin/sh
# SPDX-License-Identifier: MIT
# configure --persist on Linux hosts whose network systemd-networkd sets up at
# boot (simulated linux-mesh4). Each host gets a private /etc/systemd (a
# folder of this test bind-mounted over it in the mount namespace of that
# host's sshd only, never this machine's): systemd-networkd enabled there as
# `systemctl enable` leaves it (the link in multi-user.target.wants), and a
# network/ folder holding a file that is not ours. Judged by the files
# themselves (read here, compared with text written by hand from
# systemd.network(5)) and the hosts' kernel state:
#  - discovery names the manager of every host;
#  - --auto-setup --persist writes exactly one .network file per cable
#    interface with the address the kernel shows on it, replacing one of
#    ours left there before;
#  - restore removes the files it added, puts back the one it replaced and
#    leaves the other file untouched;
#  - a setup failing on one host (its last file write: read-only) leaves no
#    file of ours written;
#  - a host with no manager enabled refuses --persist before any change.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
. "$top_srcdir/tests/configure/sim-lib.sh"
. "$top_srcdir/tests/persist/netmgr-lib.sh"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"
sim_require
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"

topo=linux-mesh4
sim_up $topo || { ok 1 "$topo: cluster up"; done_testing; exit; }
cfg=$(sim_ssh_config)
hosts=$(sim_hosts)
st=$t/state
slow="--connect-timeout 60 --command-timeout 300"
wants=system/multi-user.target.wants/systemd-networkd.service

# _etc H: the folder that is host H's /etc/systemd
_etc() { echo "$t/etc/$1"; }

# a private /etc/systemd per host (netmgr-lib.sh), systemd-networkd enabled,
# and a file that is not ours
for h in $(_hosts); do
	_netmgr_etc "$h" systemd-networkd
	printf '[Match]\nName=mgmt0\n\n[Network]\nDHCP=yes\n' > "$(_etc "$h")/network/50-mgmt.network"
done
cp "$(_etc lx1)/network/50-mgmt.network" "$t/mgmt.network"
# lx2 has a file of ours from an earlier run, which the setup replaces
printf '[Match]\nName=eth1\n\n[Network]\nAddress=10.9.9.1/30\n' > "$t/old.network"
cp "$t/old.network" "$(_etc lx2)/network/10-jaccl-config-eth1.network"

# _files: every host's network folder: "host file", sorted
_files() {
	for h in $(_hosts); do
		(cd "$(_etc "$h")/network" && ls -A) | sed "s/^/$h /"
	done | sort
}
_files > "$t/files-before"

# --- discovery --------------------------------------------------------------
"$JACCL_CONFIG" probe --hosts "$hosts" -F "$cfg" $slow --json < /dev/null > "$t/inv.json" \
    2> "$t/err"
ok $? "$topo: probe succeeds"
is "$(python3 -c '
import json, sys
def walk(o):
    if isinstance(o, dict):
        if "network_manager" in o:
            yield o.get("name"), o["network_manager"]
        for v in o.values():
            yield from walk(v)
    elif isinstance(o, list):
        for v in o:
            yield from walk(v)
print(" ".join(sorted("%s=%s" % x for x in walk(json.load(open(sys.argv[1]))))))' \
    "$t/inv.json")" "lx1=systemd-networkd lx2=systemd-networkd lx3=systemd-networkd lx4=systemd-networkd" \
    "$topo: discovery finds systemd-networkd enabled on every host"

# --- the setup --------------------------------------------------------------
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup --persist \
    --json --output-hostfile "$t/hf.json" < /dev/null > "$t/plan.json" 2> "$t/err"
r=$?
ok $r "$topo: --auto-setup --persist succeeds"
[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -20

# every cable interface (kernel state: the ethN with a /30) has its file,
# written here by hand from systemd.network(5), and there is no other file
bad=
: > "$t/want"
for h in $(_hosts); do
	ns=$(sim_ns "$h")
	for ifc in eth1 eth2 eth3; do
		a=$(ip -n "$ns" -4 -o addr show dev "$ifc" | awk '$4 ~ /\/30$/ {print $4}')
		[ -n "$a" ] || { bad="$bad $h:$ifc:no-address"; continue; }
		echo "$h 10-jaccl-config-$ifc.network" >> "$t/want"
		printf '# written by jaccl-config --persist\n[Match]\nName=%s\n\n[Network]\nAddress=%s\nLinkLocalAddressing=ipv6\n' \
		    "$ifc" "$a" > "$t/expect"
		cmp -s "$t/expect" "$(_etc "$h")/network/10-jaccl-config-$ifc.network" ||
		    bad="$bad $h:$ifc"
	done
	echo "$h 50-mgmt.network" >> "$t/want"
done
is "$bad" "" "$topo: each cable interface's .network file holds exactly its live address"
sort "$t/want" > "$t/want.s"
_files > "$t/files-setup"
cmp -s "$t/want.s" "$t/files-setup"
ok $? "$topo: ... one file per cable interface, and no other file written"
cmp -s "$t/want.s" "$t/files-setup" || diff -u "$t/want.s" "$t/files-setup" | sed 's/^/# /'

# --- restore ----------------------------------------------------------------
"$JACCL_CONFIG" restore -F "$cfg" $slow --state-dir "$st" > "$t/out" 2> "$t/err"
r=$?
ok $r "$topo: restore succeeds"
[ $r -eq 0 ] || sed 's/^/# /' "$t/err" | tail -20
_files > "$t/files-restored"
cmp -s "$t/files-before" "$t/files-restored"
ok $? "$topo: ... removes the files it added, and only those"
cmp -s "$t/files-before" "$t/files-restored" ||
    diff -u "$t/files-before" "$t/files-restored" | sed 's/^/# /'
cmp -s "$t/old.network" "$(_etc lx2)/network/10-jaccl-config-eth1.network"
ok $? "$topo: ... puts back the file of an earlier run it had replaced"
bad=
for h in $(_hosts); do
	cmp -s "$t/mgmt.network" "$(_etc "$h")/network/50-mgmt.network" || bad="$bad $h"
done
is "$bad" "" "$topo: ... and leaves the file that is not ours untouched"
# (whatever restore did, the next part starts from no file of ours)
rm -f "$t"/etc/*/network/10-jaccl-config-*
_files > "$t/files-before"

# --- a setup failing on one host leaves no file of ours -----------------------
# lx3's last file is there already (ours, from an earlier run) and read-only
# (a read-only bind mount in its sshd's namespace): writing it fails after
# the others were written. (fail-sudo counts no command of a shell run
# through sudo, and the write is one.)
victim=lx3
last=$(python3 -c '
import json, re, sys
for h in json.load(open(sys.argv[1]))["plan"]:
    if h["host"] == sys.argv[2]:
        print([m.group(0) for c in h["commands"]
               for m in [re.search(r"10-jaccl-config-[a-z0-9]+[.]network", c)] if m][-1])' \
    "$t/plan.json" "$victim")
[ -n "$last" ] || _nm_bail "no file of ours planned on $victim"
printf '[Match]\nName=old\n' > "$t/stale.network"
cp "$t/stale.network" "$(_etc $victim)/network/$last"
vpid=$(cat "$SIM_DIR/hosts/$victim/sshd.pid")
nsenter -t "$vpid" -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"' sh \
    "/etc/systemd/network/$last" || _nm_bail "$victim: cannot make $last read-only"
_files > "$t/files-before"
_state "$t/before"
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup --persist \
    --output-hostfile "$t/hf2.json" < /dev/null > "$t/out" 2> "$t/err"
r=$?
nsenter -t "$vpid" -m umount "/etc/systemd/network/$last"
is "$r" 5 "$topo: $victim's last file write ($last) failing fails the setup (exit 5)"
[ "$r" -eq 5 ] || sed 's/^/# /' "$t/err" | tail -20
grep -q "$victim: error: sudo -n sh -c" "$t/err" && grep -q "/$last.*Read-only file system" "$t/err"
ok $? "$topo: ... the failure names the host, the write and why"

_files > "$t/files-rolled"
cmp -s "$t/files-before" "$t/files-rolled"
ok $? "$topo: ... and no host keeps a file of ours it wrote ($victim's earlier ones removed)"
cmp -s "$t/files-before" "$t/files-rolled" ||
    diff -u "$t/files-before" "$t/files-rolled" | sed 's/^/# /'
cmp -s "$t/stale.network" "$(_etc $victim)/network/$last"
ok $? "$topo: ... and the file that was there holds what it held"
_state "$t/after"
cmp -s "$t/before" "$t/after"
ok $? "$topo: ... and every host's addresses and routes are as before"
rm -f "$(_etc $victim)/network/$last"
_files > "$t/files-before"

# --- no manager enabled: refused before any change ---------------------------
rm -f "$(_etc lx4)/$wants"
"$JACCL_CONFIG" --hosts "$hosts" -F "$cfg" $slow --state-dir "$st" --auto-setup --persist \
    --output-hostfile "$t/hf3.json" < /dev/null > "$t/out" 2> "$t/err"
r=$?
ok $((r == 0)) "$topo: lx4 without a network manager: --auto-setup --persist fails (exit $r)"
grep -q 'lx4: --persist: no network manager found (none of NetworkManager, systemd-networkd, ifupdown is enabled at boot)' "$t/err"
ok $? "$topo: ... naming the host and what was found"
grep -q '^\[#\]' "$t/err"
ok $((!$?)) "$topo: ... and no command ran"
_state "$t/after2"
cmp -s "$t/before" "$t/after2"
ok $? "$topo: ... every host's addresses and routes are as before"
_files > "$t/files-none"
cmp -s "$t/files-before" "$t/files-none"
ok $? "$topo: ... and no file written"
done_testing
