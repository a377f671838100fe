# SPDX-License-Identifier: MIT
# Sourced by the --persist tests of simulated Linux hosts, after sim.sh:
# what a host's network manager is, as discovery reads it.
#
# _netmgr_etc H UNIT...: give host H a private /etc/systemd, the folder
# $t/etc/H bind-mounted over it in the mount namespace of H's sshd only
# (never this machine's: refused when they are the same), holding an empty
# network/ and, for each UNIT (NetworkManager, systemd-networkd), the link
# `systemctl enable UNIT` leaves in system/multi-user.target.wants.
_nm_bail() { echo "Bail out! $*"; exit 1; }

_netmgr_etc() {
	_nm_h=$1
	shift
	_nm_d=$t/etc/$_nm_h
	mkdir -p "$_nm_d/network" "$_nm_d/system/multi-user.target.wants"
	for _nm_u in "$@"; do
		_nm_w=$_nm_d/system/multi-user.target.wants/$_nm_u.service
		ln -s "/lib/systemd/system/$_nm_u.service" "$_nm_w" 2>/dev/null
		[ -e "$_nm_w" ] || { rm -f "$_nm_w"; : > "$_nm_w"; }
	done
	_nm_pid=$(cat "$SIM_DIR/hosts/$_nm_h/sshd.pid")
	if [ "$(readlink "/proc/$_nm_pid/ns/mnt")" = "$(readlink /proc/self/ns/mnt)" ]; then
		_nm_bail "$_nm_h: its sshd shares this machine's mount namespace: not mounting over /etc"
	fi
	nsenter -t "$_nm_pid" -m mount --bind "$_nm_d" /etc/systemd ||
	    _nm_bail "$_nm_h: cannot mount its /etc/systemd"
}
