#!/bin/sh
# SPDX-License-Identifier: MIT
# The stock simulated Macs (tests/sim/README.md, "Stock Macs"): each property
# a real Mac has over ssh, judged where possible from outside the host (the
# kernel's view of its processes, its files in the state folder, a TCP
# connection from this machine) rather than from what the host says: an
# admin user of uid 501 with zsh (fish on mac2) as login shell, Apple's PATH
# and a per-user TMPDIR, the fake commands at their macOS paths only, /bin/sh
# bash in POSIX mode with XPG's echo, no view of the source and build trees,
# /opt/homebrew with the client's jaccl-config and a Python of its own, the
# xcode-select stub and Apple's 3.9 as /usr/bin/python3, real sudo with the
# three sudoers rules and its own log, fail-sudo counting privileged fakes,
# the application firewall, zsh's NOMATCH; the fast path of the fake
# commands against the python path as admin and through sudo; and `down`
# leaving the machine as it was.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/sim.sh"
sim_require
sim_require_stock
command -v nft >/dev/null 2>&1 || skip_all "nft missing (package nftables): no firewall"
command -v fish >/dev/null 2>&1 || skip_all "fish missing (package fish): mac2's login shell"
[ -x "$JACCL_CONFIG" ] || skip_all "jaccl-config was not built"

# the machine before: mounts, users, /etc, /opt, /run, /usr/local, processes
machine() {
	{
		# (other tests' clusters come and go meanwhile: their namespaces,
		# links and sshds, the machine's sudo of their Linux hosts)
		echo "== mounts"; findmnt -rn -o TARGET,SOURCE,FSTYPE | grep -v '^/run/netns' | sort
		echo "== users"; getent passwd; getent group
		echo "== files"; { find /etc /opt /run /usr/local -xdev -type d -printf '%p %U %G %m\n'
		    find /etc /opt /run /usr/local -xdev ! -type d -printf '%p %U %G %m %s %T@\n'; } \
		    2>/dev/null | grep -v -e '^/run/netns' -e '^/run/sshd' -e '^/run/sudo' | sort
		echo "== links"; ip -o link show | awk '{print $2}' |
		    grep -v -E -e '^j[0-9a-f]+t[0-9]+-' -e '-br:$' -e '-m[0-9]+@' | sort
	}
}
machine >"$t/before"

sim_up stock-macs
ok $? "stock-macs up (three stock Macs, one as before)"
hd1=$SIM_DIR/hosts/mac1
hd2=$SIM_DIR/hosts/mac2
hd3=$SIM_DIR/hosts/mac3

# --- the login: admin, uid 501, zsh (fish), Apple's PATH and TMPDIR ----------
# session H CMD: start an ssh session on H running CMD (a `sleep 297` and
# something after it, so that the shell forks the sleep), wait until the kernel shows that sleep inside H, then print the
# shell that runs it (its parent): comm, uid, and its environment's PATH and
# TMPDIR; the session is then stopped.
session() {
	sim_ssh "$1" "$2" </dev/null >/dev/null 2>&1 &
	_sp=$!
	_sl=""
	for _i in $(seq 1 400); do
		for _p in $(ip netns pids "$(sim_ns "$1")"); do
			[ "$({ tr '\0' ' ' <"/proc/$_p/cmdline"; } 2>/dev/null)" = "sleep 297 " ] || continue
			_sl=$_p
		done
		[ -n "$_sl" ] && break
		sleep 0.05
	done
	if [ -z "$_sl" ]; then
		kill "$_sp" 2>/dev/null
		echo "no session"
		return 1
	fi
	_sh=$(awk '/^PPid:/ {print $2}' "/proc/$_sl/status")
	echo "comm=$(cat "/proc/$_sh/comm") uid=$(awk '/^Uid:/ {print $2 "/" $3}' "/proc/$_sh/status")" \
	    "gid=$(awk '/^Gid:/ {print $3}' "/proc/$_sh/status")" \
	    "argv0=$(tr '\0' '\n' <"/proc/$_sh/cmdline" | head -1)"
	tr '\0' '\n' <"/proc/$_sh/environ" | grep -E '^(PATH|TMPDIR|HOME|USER|SHELL)=' | sort
	kill "$_sl" 2>/dev/null
	wait "$_sp" 2>/dev/null
	return 0
}
tmp1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["user"]["tmpdir"])' "$hd1/mac.json")
session mac1 'sleep 297; :' >"$t/s1"
is "$(cat "$t/s1")" "comm=zsh uid=501/501 gid=20 argv0=zsh
HOME=/Users/admin
PATH=/usr/bin:/bin:/usr/sbin:/sbin
SHELL=/bin/zsh
TMPDIR=$tmp1
USER=admin" "mac1: the kernel shows the session's shell: zsh as uid 501 (staff), Apple's PATH, a per-user TMPDIR"
case $tmp1 in
/var/folders/??/*0000gn/T/) ok 0 "mac1: TMPDIR /var/folders/XX/...0000gn/T/ with its trailing slash ($tmp1)" ;;
*) ok 1 "mac1: TMPDIR /var/folders/XX/...0000gn/T/ with its trailing slash ($tmp1)" ;;
esac
is "$(stat -c '%u %g %a' "$hd1$tmp1")" "501 20 700" "mac1: the TMPDIR folder exists, owned by admin:staff, 0700 (its file in the state folder)"
sim_ssh mac1 'touch "$TMPDIR/x" && ls -l "$TMPDIR/x" | awk "{print \$3}"' </dev/null >"$t/tmpx"
is "$(cat "$t/tmpx") $(stat -c %u "$hd1$tmp1/x" 2>&1)" "admin 501" "mac1: admin writes its TMPDIR"
session mac2 'sleep 297; true' >"$t/s2"
is "$(head -1 "$t/s2")" "comm=fish uid=501/501 gid=20 argv0=fish" "mac2: fish as login shell"
is "$(sim_ssh mac2 'id -u; id -gn; id -Gn | tr " " "\n" | grep -cx admin; echo $HOME' </dev/null | tr '\n' ' ')" \
    "501 staff 1 /Users/admin " "mac2: id -u 501, group staff, also in admin; home /Users/admin"
is "$(getent passwd admin 2>/dev/null)" "" "the machine has no user admin (the host's passwd is its own)"
session mac4 'sleep 297; :' >"$t/s4"
is "$(head -1 "$t/s4")" "comm=bash uid=0/0 gid=0 argv0=bash" "mac4 (\"stock\": false): root with bash, as before"
is "$(grep '^PATH=' "$t/s4")" "PATH=$SIM_DIR/hosts/mac4/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    "mac4: the fakes first on PATH, as before"

# --- zsh's NOMATCH, /bin/sh -------------------------------------------------
sim_ssh mac1 'for d in /tmp/jc-none.*; do echo "$d"; done; echo done' </dev/null >"$t/nm.out" 2>"$t/nm.err"
is "$? $(cat "$t/nm.out")" "1 " "mac1: a zsh command line with an unmatched glob aborts (status 1, nothing run after it)"
grep -q 'no matches found: /tmp/jc-none\.\*' "$t/nm.err"
ok $? "mac1: zsh says 'no matches found'"
is "$(sim_ssh mac1 "/bin/sh -c 'for d in /tmp/jc-none.*; do echo \"\$d\"; done; echo done'" </dev/null 2>&1)" \
    "/tmp/jc-none.*
done" "mac1: the same loop under /bin/sh -c keeps the word and goes on"
sim_ssh mac1 '/bin/sh -c "readlink /proc/\$\$/exe; case :\$SHELLOPTS: in *:posix:*) echo posix ;; esac; echo -n x; echo \"a\\tb\""' \
    </dev/null >"$t/sh"
is "$(cat "$t/sh")" "$(readlink -f /bin/bash)
posix
-n x
a	b" "mac1: /bin/sh is bash in POSIX mode, its echo XPG's as on macOS (-n printed, \\t expanded)"

# --- the fake commands at their macOS paths only ----------------------------
where() { # where H NAME...: every place zsh finds each NAME on the host's PATH
	_wh=$1
	shift
	sim_ssh "$_wh" "for c in $*; do whence -ap \$c || echo \"\$c: none\"; done" </dev/null 2>&1
}
is "$(where mac1 system_profiler networksetup ipconfig sysctl scutil netstat ifconfig route ibv_devices ibv_devinfo rdma_ctl sw_vers uname pmset socketfilterfw | tr '\n' ' ')" \
    "/usr/sbin/system_profiler /usr/sbin/networksetup /usr/sbin/ipconfig /usr/sbin/sysctl /usr/sbin/scutil /usr/sbin/netstat /sbin/ifconfig /sbin/route /usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/rdma_ctl /usr/bin/sw_vers /usr/bin/uname /usr/bin/pmset socketfilterfw: none " \
    "mac1: each fake command once on PATH, where macOS has it; socketfilterfw not on PATH"
sim_ssh mac1 '/usr/libexec/ApplicationFirewall/socketfilterfw --getglobalstate; /usr/sbin/system_profiler SPThunderboltDataType -json | head -1; ls /usr/sbin/ifconfig /usr/sbin/route /sbin/sysctl /sbin/system_profiler /usr/local/bin 2>&1 | sed "s/.*cannot access .\(.*\).: No such.*/no \1/"' \
    </dev/null >"$t/paths"
is "$(cat "$t/paths")" "Firewall is enabled. (State = 1)
{
no /usr/sbin/ifconfig
no /usr/sbin/route
no /sbin/sysctl
no /sbin/system_profiler
no /usr/local/bin" "mac1: socketfilterfw by its path, system_profiler works; nothing at a path macOS does not have"
is "$(sim_ssh mac1 'command -v sudo; ls -l /usr/bin/sudo | cut -c1-10' </dev/null)" "/usr/bin/sudo
-rwsr-xr-x" "mac1: sudo is the real, setuid one"

# --- the client's trees, /opt/homebrew, jaccl-config ------------------------
jc=$(cd "$(dirname "$JACCL_CONFIG")" && pwd -P)/$(basename "$JACCL_CONFIG")
src=$(cd "$top_srcdir" && pwd -P)
sim_ssh mac1 "ls -A '$src' '$(dirname "$jc")' 2>&1; test -e '$jc' || echo 'no $jc'; test -e '$src/configure.ac' || echo 'no configure.ac'" \
    </dev/null >"$t/trees"
grep -q "^no $jc\$" "$t/trees" && grep -q '^no configure.ac$' "$t/trees" &&
    ! grep -q -e '\.c$' -e '^Makefile' "$t/trees"
ok $? "mac1: the source and build trees are not visible (nor the client's jaccl-config)"
grep -q '^no ' "$t/trees" || diag "$(cat "$t/trees")"
is "$(sim_ssh mac1 '/opt/homebrew/bin/jaccl-config --version' </dev/null 2>&1)" "$("$JACCL_CONFIG" --version 2>&1)" \
    "mac1: /opt/homebrew/bin/jaccl-config --version is the client's"
cmp -s "$hd1/homebrew/bin/jaccl-config" "$JACCL_CONFIG"
ok $? "mac1: and it is a copy of the binary under test"
sim_ssh mac1 'command -v jaccl-config' </dev/null >/dev/null 2>&1
ok $((!$?)) "mac1: jaccl-config is not on the session's PATH"
is "$(sim_ssh mac1 'zsh -lc "command -v jaccl-config python3"' </dev/null 2>&1)" "/opt/homebrew/bin/jaccl-config
/opt/homebrew/bin/python3" "mac1: a login zsh (~/.zprofile: Homebrew's shellenv) finds both in /opt/homebrew/bin"
echo 'shared file' >"$(sim_shared)/f"
is "$(sim_ssh mac3 "cat '$(sim_shared)/f'" </dev/null 2>&1)" "shared file" "sim_shared: a file put there is seen on the hosts"

# --- python3 ------------------------------------------------------------------
sim_ssh mac1 'python3 -c "print(1)"' </dev/null >"$t/py.out" 2>"$t/py.err"
is "$? $(wc -c <"$t/py.out")" "1 0" "mac1: /usr/bin/python3 is the stub: exit 1, nothing on stdout"
is "$(head -1 "$t/py.err")" "xcode-select: note: No developer tools were found, requesting install." \
    "mac1: the xcode-select message on stderr"
is "$(sim_ssh mac2 'python3 --version; python3 -c "import sys, platform; print(sys.version.split()[0], sys.version_info[:2], platform.python_version())"' </dev/null 2>&1)" \
    "Python 3.9.6
3.9.6 (3, 9) 3.9.6" "mac2 (\"python\": \"apple\"): python3 is Apple's 3.9.6"
sim_mlx mac2 0.29.1
ok $? "sim_mlx mac2 0.29.1"
vers='import importlib.metadata as m
try:
    print(m.version("mlx"))
except m.PackageNotFoundError:
    print("no mlx")'
is "$(sim_ssh mac2 "python3 -c '$vers'; /opt/homebrew/bin/python3 -c '$vers'" </dev/null 2>&1)" "no mlx
0.29.1" "mac2: Apple's python3 does not see the mlx that Homebrew's python3 sees"
is "$(stat -c %u "$hd2/homebrew/lib/python"*"/site-packages/mlx-0.29.1.dist-info/METADATA")" 501 \
    "mac2: mlx's metadata in Homebrew's site-packages, owned by admin"
is "$(sim_ssh mac1 "/opt/homebrew/bin/python3 -c '$vers'" </dev/null 2>&1)" "no mlx" "mac1: no mlx until sim_mlx"

# --- sudo -----------------------------------------------------------------------
sudo_try() { # sudo_try H: status and messages of sudo -n true, -l ifconfig, sh -c, ifconfig
	# (one /bin/sh script: mac2's login shell is fish; its errors on its
	# output, in order)
	sim_ssh "$1" "/bin/sh -c 'exec 2>&1; sudo -n true; echo true=\$?; sudo -n -l /sbin/ifconfig; echo l=\$?;
	    sudo -n /bin/sh -c true; echo sh=\$?; sudo -n /sbin/ifconfig en2 up; echo ifconfig=\$?'" </dev/null
}
is "$(sudo_try mac1)" "true=0
/sbin/ifconfig
l=0
sh=0
ifconfig=0" "mac1 nopasswd: everything passwordless"
is "$(sudo_try mac2)" "sudo: a password is required
true=1
sudo: a password is required
l=1
sudo: a password is required
sh=1
sudo: a password is required
ifconfig=1" "mac2 password (macOS's default): every sudo -n wants a password"
is "$(sudo_try mac3)" "sudo: a password is required
true=1
/sbin/ifconfig
l=0
sudo: a password is required
sh=1
ifconfig=0" "mac3 scoped: sudo -n true and /bin/sh refused, -l /sbin/ifconfig and ifconfig itself allowed"
is "$(sim_ssh mac3 'sudo -n id' </dev/null 2>&1; echo "rc=$?")" "sudo: a password is required
rc=1" "mac3 scoped: any other command is refused"
for h in mac1 mac3; do
	is "$(sim_exec $h visudo -c 2>&1 | tr '\n' ' ')" "/etc/sudoers: parsed OK /private/etc/sudoers.d/rule: parsed OK " \
	    "$h: visudo -c on the host: macOS's sudoers and the host's rule parse"
done
is "$(sim_exec mac2 visudo -c 2>&1 | tr '\n' ' ')" "/etc/sudoers: parsed OK " "mac2: visudo -c: macOS's sudoers alone (no rule)"
grep ' : admin : PWD=/Users/admin ; USER=root ; COMMAND=/usr/bin/true$' "$hd1/sudo.log" >/dev/null &&
    grep ' : admin : PWD=/Users/admin ; USER=root ; COMMAND=/sbin/ifconfig en2 up$' "$hd1/sudo.log" >/dev/null
ok $? "mac1: sudo's own log has each command run (sim_sudo_log)"
is "$(sim_sudo_log mac3 | sed 's/^.* : admin : //')" "a password is required ; PWD=/Users/admin ; USER=root ; COMMAND=/usr/bin/true
a password is required ; PWD=/Users/admin ; USER=root ; COMMAND=/bin/sh -c true
PWD=/Users/admin ; USER=root ; COMMAND=/sbin/ifconfig en2 up
a password is required ; PWD=/Users/admin ; USER=root ; COMMAND=/usr/bin/id" \
    "mac3: the log names each refusal"
is "$(sed -n 's/^.* sudo=\([01]\) \(ifconfig en2 up\)$/\1 \2/p' "$hd3/calls.log")" "1 ifconfig en2 up" \
    "mac3: the fake ifconfig run through sudo is privileged (sudo=1), by its effective uid"
# a rule of one's own: checked by visudo, the only one
printf 'admin ALL=(root) NOPASSWD: /usr/sbin/networksetup\n' >"$t/rule"
sim_sudoers mac3 "$t/rule"
ok $? "sim_sudoers mac3: a rule for networksetup alone"
is "$(sim_ssh mac3 'exec 2>&1; sudo -n /sbin/ifconfig en2 up; echo "ifconfig=$?"; sudo -n -l /usr/sbin/networksetup; echo "l=$?"' </dev/null)" \
    "sudo: a password is required
ifconfig=1
/usr/sbin/networksetup
l=0" "mac3: now networksetup only"
printf 'admin ALL=(root) NOPASSWD /sbin/ifconfig\n' >"$t/bad"
sim_sudoers mac3 "$t/bad" 2>"$t/bad.err"
ok $((!$?)) "sim_sudoers: a rule visudo refuses is not installed"
grep -q 'syntax error' "$t/bad.err"
ok $? "and visudo's message is shown"
is "$(ls "$hd3/sudoers.d")" "rule" "mac3: the previous rule stays, alone"
sim_sudoers mac4 "$t/rule" 2>/dev/null
ok $((!$?)) "sim_sudoers refuses a Mac with the fake sudo"

# fail-sudo counts the privileged fake commands: each through sudo, each of
# a script run through sudo; not sudo true, not what sim_exec runs as root
echo 2 >"$hd1/fail-sudo"
rm -f "$hd1/fail-sudo.count"
sim_exec mac1 /sbin/ifconfig en2 up >/dev/null
sim_ssh mac1 'sudo -n true && sudo -n /sbin/ifconfig en2 up && ! sudo -n /sbin/ifconfig en2 up && echo third' </dev/null >"$t/fs" 2>"$t/fs.err"
is "$(cat "$t/fs") $(cat "$t/fs.err")" "third sudo: simulated failure (fail-sudo)" \
    "fail-sudo 2: the 2nd privileged fake fails (sudo true and sim_exec's not counted)"
echo 2 >"$hd1/fail-sudo"
rm -f "$hd1/fail-sudo.count"
sim_ssh mac1 "sudo -n /bin/sh -c '/sbin/ifconfig en2 up && /sbin/route -n get 10.0.0.1 >/dev/null; echo \$?'" </dev/null >"$t/fs2" 2>"$t/fs2.err"
is "$(cat "$t/fs2") $(cat "$t/fs2.err")" "1 sudo: simulated failure (fail-sudo)" \
    "fail-sudo 2: a shell through sudo is not counted, the 2nd fake it runs fails"
rm -f "$hd1/fail-sudo" "$hd1/fail-sudo.count"
is "$(sim_exec mac1 sh -c 'id -u; echo $HOME; /usr/sbin/sysctl -n hw.model')" "0
/var/root
Mac16,11" "sim_exec: root inside the host (HOME /var/root), the fakes at their paths"

# --- the application firewall (mac1: on) ----------------------------------------
# listen H PORT: a TCP listener on H (Homebrew's python3, as admin) that
# answers "hello"; returns once the kernel shows it listening
listen() {
	sim_ssh "$1" "/opt/homebrew/bin/python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"0.0.0.0\", $2))
s.listen()
while True:
    c, _ = s.accept()
    c.sendall(b\"hello\")
    c.close()'" </dev/null >/dev/null 2>&1 &
	for _i in $(seq 1 400); do
		ip netns exec "$(sim_ns "$1")" ss -Hltn "sport = :$2" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}
connect() { # connect IP PORT: "hello" or why not (2 s)
	python3 -c '
import socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)
    print(s.recv(10).decode())
except OSError as e:
    print("no connection:", type(e).__name__)' "$1" "$2"
}
drops() { ip netns exec "$(sim_ns mac1)" nft list table inet kc_alf 2>/dev/null | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p'; }
ip1=$(sim_host_ip mac1)
listen mac1 7070
ok $? "mac1: a TCP listener on port 7070"
d0=$(drops)
is "$(connect "$ip1" 7070)" "no connection: TimeoutError" "firewall on: a connection to it is dropped"
[ "$(drops)" -gt "$d0" ]
ok $? "firewall on: the host's rules counted the dropped SYN"
is "$(sim_ssh mac1 true </dev/null; echo $?)" 0 "firewall on: ssh still gets in"
is "$(sim_ssh mac1 '/usr/libexec/ApplicationFirewall/socketfilterfw --add /opt/homebrew/bin/jaccl-config' </dev/null)" \
    "Application at path ( /opt/homebrew/bin/jaccl-config ) added to firewall" "socketfilterfw --add without sudo says it added"
is "$(connect "$ip1" 7070)" "no connection: TimeoutError" "... but nothing changed"
sim_ssh mac1 'sudo /usr/libexec/ApplicationFirewall/socketfilterfw --add /opt/homebrew/bin/jaccl-config &&
    sudo /usr/libexec/ApplicationFirewall/socketfilterfw --unblockapp /opt/homebrew/bin/jaccl-config' </dev/null >"$t/fw"
is "$(cat "$t/fw")" "Application at path ( /opt/homebrew/bin/jaccl-config ) added to firewall
Incoming connection to the application is permitted" "sudo socketfilterfw --add and --unblockapp jaccl-config"
is "$(connect "$ip1" 7070)" "hello" "jaccl-config allowed: connections get in"
sim_ssh mac1 'sudo /usr/libexec/ApplicationFirewall/socketfilterfw --setblockall on' </dev/null >/dev/null
is "$(connect "$ip1" 7070)" "no connection: TimeoutError" "block all: dropped again, allowed or not"
sim_ssh mac1 'sudo /usr/libexec/ApplicationFirewall/socketfilterfw --setglobalstate off' </dev/null >/dev/null
is "$(connect "$ip1" 7070)" "hello" "firewall off: connections get in"

# --- the fast path of the fake commands as admin and as root --------------------
# Each command of fastpath-commands.txt over ssh on mac1 as admin, through
# the fast path (the wrapper at its macOS path, found on PATH but for
# socketfilterfw), then through the python
# path (fakemac.py run by the same user, through sudo for a `sudo -n` line):
# the same output, errors, status and calls.log line; and fakemacd served
# the fast ones (its counters).
fm=$SIM_DIR/fakemac/fakemac.py
py=$(sim_python)
kill -USR1 "$(cat "$hd1/fakemacd.pid")"
wait_event "$hd1/fakemacd.stats" served
s0=$(sed 's/served=\([0-9]*\) .*/\1/' "$hd1/fakemacd.stats")
: >"$t/paths"
n=0
while IFS= read -r c; do
	n=$((n + 1))
	fast=$c
	case $c in socketfilterfw*) fast=/usr/libexec/ApplicationFirewall/$c ;; esac
	case $c in
	"sudo -n true") slow=$c ;;
	"sudo -n "*) slow="sudo -n $py -S $fm --simhost $hd1 ${c#sudo -n }" ;;
	*) slow="$py -S $fm --simhost $hd1 $c" ;;
	esac
	sim_ssh mac1 "$fast" >"$t/fast.out" 2>"$t/fast.err" </dev/null
	fs=$?
	fl=$(tail -n 1 "$hd1/calls.log")
	sim_ssh mac1 "$slow" >"$t/slow.out" 2>"$t/slow.err" </dev/null
	ss=$?
	sl=$(tail -n 1 "$hd1/calls.log")
	if cmp -s "$t/fast.out" "$t/slow.out" && cmp -s "$t/fast.err" "$t/slow.err" &&
	    [ "$fs" = "$ss" ] && [ "$fl" = "$sl" ]; then
		echo "same: $c" >>"$t/paths"
	else
		echo "DIFFERENT: $c (status $fs/$ss, log '$fl'/'$sl')" >>"$t/paths"
	fi
done <"$top_srcdir/tests/sim/fastpath-commands.txt"
is "$(grep -c '^same: ' "$t/paths")" "$n" "stock mac1: fast and python paths, as admin and through sudo: same output, errors, status and log line ($n commands)"
grep -v '^same: ' "$t/paths" | while IFS= read -r l; do diag "$l"; done
rm -f "$hd1/fakemacd.stats"
kill -USR1 "$(cat "$hd1/fakemacd.pid")"
wait_event "$hd1/fakemacd.stats" served
s1=$(sed 's/served=\([0-9]*\) .*/\1/' "$hd1/fakemacd.stats")
# 39 of the 40 lines run a fake command (sudo -n true does not)
is "$((s1 - s0))" "$((n - 1))" "fakemacd's workers ran each fake command of the fast path"
grep -q 'sudo=1 ifconfig en6 inet 10.99.4.1 ' "$hd1/calls.log" &&
    grep -q 'rc=1 sudo=0 ifconfig en6 inet 10.99.4.5 ' "$hd1/calls.log"
ok $? "the workers (root) ran admin's commands as admin, sudo's as root"

# --- cable events and reboot on a stock Mac -------------------------------------
sim_unplug mac2 en3
is "$(sim_ssh mac1 '/sbin/ifconfig en2 | grep status:' </dev/null)" "	status: inactive" \
    "sim_unplug mac2 en3: the stock mac1 sees its end go"
sim_plug mac2 en3
sim_exec mac3 /sbin/ifconfig en2 inet 10.99.7.1 netmask 255.255.255.252
sim_reboot mac3
is "$(sim_exec mac3 /usr/sbin/ipconfig getifaddr en2; echo "rc=$?")" "rc=1" "sim_reboot mac3: what ifconfig did is gone"

# --- down leaves the machine as it was ------------------------------------------
sim_ssh mac1 'sleep 600 </dev/null >/dev/null 2>&1 &' </dev/null
sim_exec mac2 sh -c 'sleep 600 </dev/null >/dev/null 2>&1 &'
dir=$SIM_DIR
# the cluster's processes: every one in its hosts' namespaces (the shells
# and sleeps of the sessions, sim_exec's, each host's anchor and daemons)
# and every one naming its state folder (ssh clients, the hosts' sshd);
# other tests' clusters may run at the same time, so only these count
for h in $(sim_hosts | tr ',' ' '); do ip netns pids "$(sim_ns "$h")" 2>/dev/null; done >"$t/cl"
for p in $(ps -eo pid=); do
	{ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -q -e "$dir" && echo "$p"
done >>"$t/cl"
sort -un "$t/cl" -o "$t/cl"
grep -q . "$t/cl"
ok $? "before down: the cluster's processes found ($(wc -l <"$t/cl"))"
sim_down
machine >"$t/after"
cmp -s "$t/before" "$t/after"
ok $? "down: mounts, users, /etc, /opt, /run, /usr/local and links as before"
cmp -s "$t/before" "$t/after" || diag "$(diff "$t/before" "$t/after" | head -20)"
left=$(while read -r p; do
	[ -d "/proc/$p" ] && { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null
done <"$t/cl"
for p in $(ps -eo pid=); do
	{ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -e "$dir"
done)
is "$left" "" "down: no process of the cluster left (sessions, sim_exec's, the hosts' own)"
[ ! -e "$dir" ]
ok $? "down: the state folder is gone"
done_testing
