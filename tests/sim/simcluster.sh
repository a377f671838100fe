#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# simcluster.sh - a simulated Mac cluster on Linux: one network namespace per
# Mac, one veth pair per Thunderbolt cable, an sshd per host and fake macOS
# commands (fakemac/) that describe the cabling the way macOS would.
# Hosts with "personality": "linux" are plain Linux hosts (real commands).
# Needs root, iproute2, openssh-server, openssh-client, util-linux (unshare,
# nsenter, flock, setsid), python3 (stdlib only); cc for the fast path
# (KC_FAST below).
#
#   simcluster.sh up TOPOLOGY.json   create the hosts and cables, start the sshds
#   simcluster.sh down               stop the fakemacd daemons (recorded pids), kill every
#                                    process in the hosts, delete everything
#   simcluster.sh ssh H CMD...       ssh to host H with the generated ssh_config
#   simcluster.sh exec H CMD...      run CMD inside host H (its network, hostname,
#                                    mounts and PATH; no ssh)
#   simcluster.sh status             hosts, links, pids
#   simcluster.sh check              ssh to every host, compare `hostname` and `uname -s`
#   simcluster.sh hosts              print the host names, comma separated
#   simcluster.sh info               print the state folder, ssh_config, hosts and cables
#   simcluster.sh snapshot DIR       write DIR/H.mutations.txt, H.calls.txt, H.ip4.txt
#                                    (IPv4 addresses + routes now) for every host
#   simcluster.sh reboot H           restart Mac H's network as macOS boots: what
#                                    ifconfig/route did is gone (Thunderbolt ports'
#                                    IPv4 addresses and routes, bridge0 changes), the
#                                    enabled network services are applied again
#   simcluster.sh unplug H IF        pull the cable on H's IF (fakes and kernel together)
#   simcluster.sh plug H IF [P PIF]  plug H's IF to P's PIF (moving a cable already on
#                                    H IF), or back where it was pulled from
#   simcluster.sh speed H IF GBPS    the cable on H's IF now links at GBPS Gb/s
#
# Settings (environment):
#   KC_PREFIX=sc                 namespaces sc-<host>, sc--unplugged; bridge sc-br;
#                                root-side management veths sc-m<i>
#   KC_DIR=$TMPDIR/sc-simcluster state folder (ssh_config, keys, per-host logs)
#   KC_MGMT_NET=10.217.0         management /24: bridge .1 in the root namespace,
#                                host i at .(10+i) on its en0
#   KC_OVERLAY=1                 also put the fake commands at their macOS paths
#                                (/usr/sbin/system_profiler, /sbin/ifconfig, ...)
#                                with an overlay mount private to each host
#   KC_PYTHON                    interpreter for the fake commands (default: the
#                                first of /usr/bin/python3, python3 on PATH)
#   KC_FAST=1                    fast path: up compiles fakemac/fakemac-client.c into
#                                $KC_DIR/fakemac-client and starts one fakemacd.py per
#                                host, with its sshd (same namespaces); the wrappers
#                                exec the client, which hands argv, environment, fds
#                                0-2 and cwd to a warm worker of the daemon and returns
#                                its exit status (~1 ms of CPU instead of ~45 ms; same
#                                output, logs and effects).  No cc, no daemon, an edited
#                                fakemac.py or PYTHONPATH & co.: the client execs
#                                fakemac.py itself.  KC_FAST=0: the old wrappers only.
#   KC_STOCK=1                   every Mac host is a stock Mac (README.md: an admin
#                                user of uid 501 with zsh, Apple's PATH and TMPDIR, the
#                                fakes only at their macOS paths, real sudo, its own
#                                file system); 0: the kind Macs (root, bash, the fakes
#                                first on PATH); a host's "stock" key overrides
#   KC_JACCL_CONFIG              the binary a stock Mac has as /opt/homebrew/bin/jaccl-config
#   KC_HIDE                      folders (absolute, ':'-separated) a stock Mac must not
#                                see even where its file system would show them
# Two clusters at once need different KC_PREFIX, KC_DIR and KC_MGMT_NET.
#
# Topology: see README.md and fakemac/simtopo.py. Inside host H:
#   en0          management interface (10.217.0.x/24), on the bridge sc-br
#   enX          one per Thunderbolt port, named by the host's "Thunderbolt N" map;
#                a cabled port is a veth whose other end is the peer's port, an
#                unplugged port is a veth whose other end is down in sc--unplugged
#                (so it exists with no carrier, like a Mac port without a cable)
# Thunderbolt ports are up with no IPv4: configuring them is the job of the
# program under test (through the fake ifconfig, which really applies addresses).
#
# Files in $KC_DIR after `up`:
#   ssh_config, known_hosts, id_ed25519   ssh -F $KC_DIR/ssh_config h0 ...
#   topology.json (copy of the input), cluster.json (compiled), hosts.tsv,
#   python (the interpreter the fakes run on)
#   fakemac/                the fake commands' programs, copied at up (the hosts
#                           run these, not the source tree's)
#   hosts/H/mac.json        what the fake commands report for H
#   hosts/H/bin/            fake commands, first on PATH in H's sessions
#   hosts/H/calls.log       every fake command run on H (rc, sudo, argv)
#   hosts/H/mutations.log   the calls that change (or try to change) H
#   hosts/H/state.json      bridge0 / network service state kept by the fakes
#   hosts/H/sshd.log, sshd.pid, sshd_config, home/
#   fakemac-client, hosts/H/fakemac.sock, fakemacd.pid, fakemacd.log   (KC_FAST=1)
#   stock Macs: hosts/H/root (its /), overlay/, etc/, sudoers.d/, var/, tmp/, run/,
#   home/ (/Users/admin), homebrew/ (/opt/homebrew), Library/, sudo.log, anchor.pid
#   (a process that keeps the host's namespaces for `exec`), macsh (their /bin/sh)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PREFIX=${KC_PREFIX:-sc}
DIR=${KC_DIR:-${TMPDIR:-/tmp}/sc-simcluster}
MGMT=${KC_MGMT_NET:-10.217.0}
OVERLAY=${KC_OVERLAY:-1}
FAST=${KC_FAST:-1}
SSHD=${SSHD:-/usr/sbin/sshd}
BR="${PREFIX}-br"
LIMBO="${PREFIX}--unplugged"
STOCK=${KC_STOCK:-1}
FAKE_BIN="sudo ibv_devices ibv_devinfo rdma_ctl sw_vers uname pmset"    # macOS: /usr/bin
FAKE_LIBEXEC="socketfilterfw"   # /usr/libexec/ApplicationFirewall (kind Macs: on PATH only)
FAKE_ROOTBIN="launchctl"        # /bin (kind Macs: on PATH only)
FAKE_SBIN="system_profiler networksetup ipconfig sysctl ifconfig route scutil netstat"  # /usr/sbin, /sbin
# what a stock Mac's ssh sessions get (Apple's sshd and launchd)
APPLE_PATH=/usr/bin:/bin:/usr/sbin:/sbin
ROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
FM=$DIR/fakemac        # the fakes' programs, copied there at up

die() { echo "simcluster: $*" >&2; exit 1; }
# Clusters come up and go down concurrently (tests run in parallel): the
# machine-wide bits (/run/sshd, the /run/netns mount) are created and
# removed only under this lock, so that one cluster's `down` cannot remove
# them while another cluster is starting.
LOCK=${KC_LOCK:-/tmp/simcluster.lock}
lock() { exec 9>>"$LOCK"; flock 9; }
unlock() { flock -u 9; exec 9>&-; }
our_namespaces() {
    { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}-" || true
      [[ -f $DIR/namespaces ]] && cat "$DIR/namespaces"; } | sort -u
}
host_names() { [[ -f $DIR/hosts.tsv ]] && cut -f1 "$DIR/hosts.tsv"; }
host_field() { # host_field H column  (2 index, 3 namespace, 4 ip, 5 personality, 6 stock)
    local f
    f=$(awk -F'\t' -v h="$1" -v c="$2" '$1 == h {print $c}' "$DIR/hosts.tsv" 2>/dev/null)
    [[ -n $f ]] || die "no such host: $1"
    echo "$f"
}
pick_python() { # the interpreter itself, not a link: a stock Mac's python3 is Apple's
    local py
    if [[ -n ${KC_PYTHON:-} ]]; then py=$KC_PYTHON
    elif [[ -x /usr/bin/python3 ]]; then py=/usr/bin/python3
    else py=$(command -v python3) || die "python3 missing"
    fi
    readlink -f "$py"
}

stop_daemons() { # TERM each host's fakemacd, by its recorded pid, if it is still that daemon
    local f hd pid
    for f in "$DIR"/hosts/*/fakemacd.pid; do
        [[ -f $f ]] || continue
        hd=${f%/fakemacd.pid}
        pid=$(cat "$f" 2>/dev/null) || continue
        [[ $pid =~ ^[0-9]+$ ]] || continue
        if tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "fakemacd.py $hd "; then
            kill -TERM "$pid" 2>/dev/null || true
        fi
    done
}

cmd_down() {
    local nss ns t live
    local -a pids=()
    stop_daemons
    nss=$(our_namespaces)
    # every process inside our namespaces: sshds, sessions, anything they started
    for t in $(seq 1 40); do
        pids=()
        for ns in $nss; do
            mapfile -t -O "${#pids[@]}" pids < <(ip netns pids "$ns" 2>/dev/null || true)
        done
        (( ${#pids[@]} == 0 )) && break
        if (( t == 1 )); then kill -TERM "${pids[@]}" 2>/dev/null || true
        elif (( t == 15 )); then kill -KILL "${pids[@]}" 2>/dev/null || true
        fi
        sleep 0.05
    done
    (( ${#pids[@]} == 0 )) || echo "simcluster: still running: ${pids[*]}" >&2
    if [[ -n $nss ]]; then
        for ns in $nss; do echo "netns del $ns"; done | ip -force -batch - 2>/dev/null || true
    fi
    ip link del "$BR" 2>/dev/null || true
    lock
    for t in $(seq 1 60); do
        ip -o link show 2>/dev/null | grep -E "^[0-9]+: ${PREFIX}-m[0-9]+@" >/dev/null || break
        sleep 0.05
    done
    # /run/sshd only if we made it and no sshd is left; /run/netns when empty
    live=$( (ps -C sshd -o stat= || true) | grep -vc '^Z' || true)
    if [[ -f /run/sshd/.made-by-simcluster ]] && (( live == 0 )); then
        rm -f /run/sshd/.made-by-simcluster
        rmdir /run/sshd 2>/dev/null || true
    fi
    if [[ -d /run/netns && -z $(ls -A /run/netns) ]]; then
        umount /run/netns 2>/dev/null || true
        rmdir /run/netns 2>/dev/null || true
    fi
    unlock
    rm -rf "$DIR"
}

# write_linux_bin HOSTDIR: a linux host runs the real commands; only when
# the machine has no sudo, HOSTDIR/bin gets a small one (root runs anything;
# a host with "sudo": "password" refuses like sudo without a password).
write_linux_bin() {
    local hd=$1 mode
    mkdir -p "$hd/bin"
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v sudo >/dev/null && return 0
    mode=$("$(pick_python)" -c 'import json,sys; print(json.load(open(sys.argv[1]))["sudo"])' "$hd/mac.json")
    cat > "$hd/bin/sudo" <<EOF
#!/bin/sh
# sudo for a simulated Linux host (the machine has no sudo): root may run anything.
mode=$mode
nonint=0
while [ \$# -gt 0 ]; do
    case \$1 in
    --) shift; break ;;
    -u|-g|-p|-C|-h|-D) shift 2 ;;
    --non-interactive) nonint=1; shift ;;
    --*) shift ;;
    -*n*) nonint=1; shift ;;
    -*) shift ;;
    *) break ;;
    esac
done
[ \$# -gt 0 ] || { echo "usage: sudo [-n] command" >&2; exit 1; }
# failure injection for tests (see $hd/sudo-lib/fail-check); a shell run
# through sudo is not counted itself: the commands it runs are (ip, through
# $hd/sudo-bin first on its PATH)
case \${1##*/} in
sh|bash|dash) PATH="$hd/sudo-bin:\$PATH"; export PATH ;;
*) "$hd/sudo-lib/fail-check" "\$*" || exit 1 ;;
esac
if [ "\$mode" = password ]; then
    if [ \$nonint = 1 ]; then echo "sudo: a password is required" >&2
    else echo "sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper" >&2
        echo "sudo: a password is required" >&2; fi
    exit 1
fi
exec "\$@"
EOF
    chmod 755 "$hd/bin/sudo"
    mkdir -p "$hd/sudo-lib" "$hd/sudo-bin"
    cat > "$hd/sudo-lib/fail-check" <<EOF
#!/bin/sh
# failure injection for tests: $hd/fail-sudo holds N: the Nth privileged
# command (run through sudo, or by a script run through sudo; \`sudo true\`
# is not counted) fails without running; N+: the Nth and every later one.
[ -f "$hd/fail-sudo" ] && [ "\$1" != true ] || exit 0
n=\$(( \$(cat "$hd/fail-sudo.count" 2>/dev/null || echo 0) + 1 ))
echo "\$n" > "$hd/fail-sudo.count"
f=\$(cat "$hd/fail-sudo")
if [ "\$n" = "\$f" ] || { [ "\${f%+}" != "\$f" ] && [ "\$n" -ge "\${f%+}" ]; }; then
    echo "sudo: simulated failure (fail-sudo)" >&2
    exit 1
fi
EOF
    cat > "$hd/sudo-bin/ip" <<EOF
#!/bin/sh
# ip in a script run through sudo: one privileged command for fail-sudo
"$hd/sudo-lib/fail-check" "ip \$*" || exit 1
exec $(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v ip) "\$@"
EOF
    chmod 755 "$hd/sudo-lib/fail-check" "$hd/sudo-bin/ip"
}

write_wrappers() { # write_wrappers HOSTDIR PYTHON STOCK [CLIENT]
    # CLIENT (the fast path): `#!CLIENT`, the client is the wrapper's interpreter
    # (no shell: a fake command costs one exec, as a native one does); it finds
    # HOSTDIR and CMD from the wrapper's path and exports PWD as /bin/sh did.
    # A stock Mac has no fake sudo (its sudo is the real one), and its
    # overlays are stockmac.py's.
    local hd=$1 py=$2 stock=$3 client=${4:-} c fakes=$FAKE_BIN
    [[ $stock == 1 ]] && fakes=${FAKE_BIN#sudo }
    mkdir -p "$hd/bin"
    for c in $fakes $FAKE_SBIN $FAKE_LIBEXEC $FAKE_ROOTBIN; do
        if [[ -n $client && ${#client} -le 120 ]]; then
            printf '#!%s\n' "$client" > "$hd/bin/$c"
        elif [[ -n $client ]]; then
            # a path too long for a '#!' line (128 bytes on older kernels):
            # the client's first form, through /bin/sh
            printf '#!/bin/sh\nexec "%s" "%s" "%s" "%s" %s "$@"\n' \
                "$client" "$py" "$FM/fakemac.py" "$hd" "$c" > "$hd/bin/$c"
        else
            # -S: the fakes need only the standard library; skipping site
            # start-up makes every fake command noticeably cheaper
            printf '#!/bin/sh\nexec "%s" -S "%s" --simhost "%s" %s "$@"\n' \
                "$py" "$FM/fakemac.py" "$hd" "$c" > "$hd/bin/$c"
        fi
        chmod 755 "$hd/bin/$c"
    done
    [[ $stock == 1 ]] && return 0
    mkdir -p "$hd/overlay/usr/bin" "$hd/overlay/usr/sbin"
    for c in $FAKE_BIN; do
        [[ -L $hd/overlay/usr/bin/$c ]] || ln -s "$hd/bin/$c" "$hd/overlay/usr/bin/$c"
    done
    for c in $FAKE_SBIN; do
        [[ -L $hd/overlay/usr/sbin/$c ]] || ln -s "$hd/bin/$c" "$hd/overlay/usr/sbin/$c"
    done
}

start_client_build() { # start_client_build: cc in the background; sets CC_PID (and SH_PID)
    CC_PID="" SH_PID=""
    if ! command -v cc >/dev/null; then
        [[ $FAST == 0 ]] || echo "simcluster: no cc: the fake commands use the python path (KC_FAST=0)" >&2
        return 0
    fi
    if [[ $FAST != 0 ]]; then
        cc -O2 -DFAKEMAC_PYTHON="\"$(pick_python)\"" -DFAKEMAC_PY="\"$FM/fakemac.py\"" \
            -o "$DIR/fakemac-client" "$FM/fakemac-client.c" \
            > "$DIR/fakemac-client.log" 2>&1 &
        CC_PID=$!
    fi
    if has_stock; then
        cc -O2 -DBASH="\"$(readlink -f /bin/bash)\"" -o "$DIR/macsh" "$FM/macsh.c" \
            > "$DIR/macsh.log" 2>&1 &
        SH_PID=$!
    fi
}

has_stock() { awk -F'\t' '$6 == 1 {f = 1} END {exit !f}' "$DIR/hosts.tsv"; }
has_kind() { awk -F'\t' '$6 != 1 {f = 1} END {exit !f}' "$DIR/hosts.tsv"; }

# The inside of a stock Mac (run by `sh -c` in its network, UTS and mount
# namespaces, as root; the mounts stay in that mount namespace): its own /
# made of the machine's /usr, /usr/sbin and /etc under overlays (the fakes at
# their macOS paths, Apple's python3, macOS's users and sudoers), its own
# /var, /tmp, /run, /opt/homebrew, /Users/admin and /Library from its state
# folder, the state folder at its own path, nothing else of the machine (not
# the source or build trees); then pivot_root into it, start the process that
# keeps the namespaces for `exec`, the fast path's daemon, and sshd.
# shellcheck disable=SC2016  # $1.. are the inner script's
STOCK_INNER='
set -e
hostname "$1"
hd=$2 D=$3 R=$2/root
mount --bind "$R" "$R"
mount -t overlay kc-usr -o "lowerdir=$hd/overlay/usr:/usr" "$R/usr"
mount -t overlay kc-sbin -o "lowerdir=$hd/overlay/sbin:/usr/sbin" "$R/sbin"
mount -t overlay kc-etc -o "lowerdir=$hd/etc:/etc" "$R/etc"
mount --bind "$hd/sudoers.d" "$R/etc/sudoers.d"
for d in var tmp run; do mount --bind "$hd/$d" "$R/$d"; done
mount --rbind /dev "$R/dev"
mount -t tmpfs -o mode=1777,size=64m kc-shm "$R/dev/shm"
mount -t proc kc-proc "$R/proc"
mount -t sysfs kc-sys "$R/sys"
mount --bind "$hd/homebrew" "$R/opt/homebrew"
mount --bind "$hd/home" "$R/Users/admin"
mount --bind "$hd/Library" "$R/Library"
mount --bind "$D" "$R$D"
IFS=:
for p in $4; do
    case $D/ in "$p"/*) continue ;; esac
    if [ -d "$R$p" ]; then mount -t tmpfs -o ro,mode=0755,size=4k kc-hidden "$R$p"; fi
done
unset IFS
mount -o remount,bind,ro "$R"
if [ -f "$hd/firewall.nft" ]; then nft -f "$hd/firewall.nft"; fi
cd "$R"
pivot_root . .old
umount -l /.old
cd /
(exec setsid sleep 2147483647) </dev/null >/dev/null 2>&1 &
echo $! > "$hd/anchor.pid"
if [ -n "$5" ]; then
    (exec setsid env -i HOME=/var/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        "$5" -B "$6" "$hd" "$hd/fakemac.sock") < /dev/null >> "$hd/fakemacd.log" 2>&1 &
fi
shift 6
exec "$@"'


wait_daemons() { # wait for each Mac's fakemacd (it writes its pid file once ready)
    local name pers k missing
    for (( k = 0; k < 500; k++ )); do
        missing=0
        while IFS=$'\t' read -r name _ _ _ pers _; do
            [[ $pers == linux || -s $DIR/hosts/$name/fakemacd.pid ||
                -e $DIR/hosts/$name/fakemacd.failed ]] || { missing=1; break; }
        done < "$DIR/hosts.tsv"
        (( missing )) || break
        sleep 0.02
    done
    while IFS=$'\t' read -r name _ _ _ pers _; do
        [[ $pers == linux || -s $DIR/hosts/$name/fakemacd.pid ]] ||
            echo "simcluster: fakemacd on $name did not start (see $DIR/hosts/$name/fakemacd.log): its fake commands use the python path" >&2
    done < "$DIR/hosts.tsv"
}

cmd_up() {
    local topo=${1:-}
    [[ -n $topo && -f $topo ]] || die "usage: up TOPOLOGY.json"
    (( EUID == 0 )) || die "must run as root"
    [[ -e $DIR ]] && die "$DIR exists: run down first"
    [[ -z $(our_namespaces) ]] || die "namespaces ${PREFIX}-* exist: run down first"
    [[ $DIR =~ ^/[A-Za-z0-9/._-]+$ ]] || die "KC_DIR must be absolute and may only contain letters, digits and /._-"
    # Linux interface names have at most 15 characters: the root-side
    # management veths are PREFIX-m<index> (index < 50) and the bridge PREFIX-br.
    [[ $PREFIX =~ ^[A-Za-z0-9_]{1,11}$ ]] || die "KC_PREFIX must be 1 to 11 letters, digits or _"
    [[ $STOCK == 0 || $STOCK == 1 ]] || die "KC_STOCK must be 0 or 1"
    [[ -x $SSHD ]] || die "$SSHD missing (apt-get install openssh-server)"
    command -v ssh-keygen >/dev/null || die "ssh-keygen missing (apt-get install openssh-client)"
    local py client
    py=$(pick_python)
    KC_STOCK=$STOCK "$py" "$HERE/fakemac/simtopo.py" check "$topo" >/dev/null

    UP_DONE=0
    trap '[[ ${UP_DONE:-0} == 1 ]] || { echo "simcluster: up failed, cleaning up" >&2; cmd_down; }' EXIT
    mkdir -p "$DIR"
    # others than root pass through (a stock Mac's admin runs the fakes in it)
    chmod 711 "$DIR"
    cp "$topo" "$DIR/topology.json"
    echo "$py" > "$DIR/python"
    KC_STOCK=$STOCK "$py" "$HERE/fakemac/simtopo.py" compile "$topo" "$DIR" "$PREFIX" "$MGMT"
    { cut -f3 "$DIR/hosts.tsv"; echo "$LIMBO"; } > "$DIR/namespaces"
    # the hosts run these copies: a stock Mac does not see the source tree
    mkdir -p "$FM"
    cp "$HERE"/fakemac/{fakemac.py,fakemacd.py,stockmac.py,fakemac-client.c,macsh.c} "$FM/"
    mkdir -p "$DIR/shared"
    chmod 755 "$DIR/shared"
    if has_stock; then
        [[ -u $(readlink -f /usr/bin/sudo) ]] || die "a stock Mac needs the real sudo (apt-get install sudo)"
        command -v zsh >/dev/null || die "a stock Mac's login shell is zsh (apt-get install zsh)"
        ! grep -q '"shell": "fish"' "$DIR/hosts"/*/mac.json || command -v fish >/dev/null ||
            die "a host's login shell is fish (apt-get install fish)"
    fi

    local name ns ip hd pers stock home_of_root
    home_of_root=$(getent passwd root | cut -d: -f6)
    ssh-keygen -q -t ed25519 -N '' -C kc-client -f "$DIR/id_ed25519"
    cp "$DIR/id_ed25519.pub" "$DIR/authorized_keys"
    : > "$DIR/known_hosts"
    echo "# generated by simcluster.sh" > "$DIR/ssh_config"
    # fast path: the client (and a stock Mac's /bin/sh) compile while the hosts
    # are set up; the wrappers name it now and fall back to the python line
    # below if the compile fails
    start_client_build
    client=${CC_PID:+$DIR/fakemac-client}
    if has_stock && [[ -z $SH_PID ]]; then
        echo "simcluster: no cc: a stock Mac's /bin/sh is bash without xpg_echo" >&2
        ln -s "$(readlink -f /bin/bash)" "$DIR/macsh"
    fi
    if has_stock; then
        KC_HIDE=${KC_HIDE:-} "$py" "$FM/stockmac.py" "$DIR" "$py" "$DIR/macsh" ||
            die "cannot make the stock Macs' files"
    fi

    lock
    if has_kind; then
        [[ -d /run/sshd ]] || { mkdir -p /run/sshd; chmod 755 /run/sshd; touch /run/sshd/.made-by-simcluster; }
    fi
    ip -batch "$DIR/ip-root.batch"

    while IFS=$'\t' read -r name _ ns ip pers stock; do
        hd="$DIR/hosts/$name"
        # no duplicate address detection: IPv6 link-local addresses are
        # usable as soon as a cable has a carrier (no tentative phase)
        ip netns exec "$ns" sh -c 'for f in /proc/sys/net/ipv6/conf/*/accept_dad; do echo 0 > "$f"; done' 2>/dev/null || true
        ip -n "$ns" -batch "$hd/ip.batch"
        if [[ $pers == linux ]]; then
            write_linux_bin "$hd"
        else
            write_wrappers "$hd" "$py" "$stock" "$client"
        fi
        mkdir -p "$hd/home"
        if [[ $stock != 1 ]]; then
            chmod 700 "$hd/home"
            if [[ $pers == linux ]]; then
                printf '# simulated Linux host %s\n' "$name" > "$hd/home/.bashrc"
            else
                printf '# simulated Mac %s\n' "$name" > "$hd/home/.bashrc"
            fi
            cp "$hd/home/.bashrc" "$hd/home/.profile"
            : > "$hd/calls.log"
            : > "$hd/mutations.log"
        fi
        ssh-keygen -q -t ed25519 -N '' -C "$name" -f "$hd/ssh_host_ed25519_key"
        echo "$name,$ip $(cut -d' ' -f1,2 "$hd/ssh_host_ed25519_key.pub")" >> "$DIR/known_hosts"
        printf 'Host %s\n    HostName %s\n' "$name" "$ip" >> "$DIR/ssh_config"
        [[ $stock == 1 ]] && printf '    User admin\n' >> "$DIR/ssh_config"
        cat > "$hd/sshd_config" <<EOF
ListenAddress $ip:22
HostKey $hd/ssh_host_ed25519_key
PidFile $hd/sshd.pid
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
UseDNS no
LogLevel VERBOSE
MaxStartups 100:30:200
MaxSessions 100
Subsystem sftp /usr/lib/openssh/sftp-server
EOF
        if [[ $stock == 1 ]]; then
            # Apple's sshd: the user's own authorized_keys, no root login, the
            # standard PATH and the user's TMPDIR (launchd's) for every session
            cat >> "$hd/sshd_config" <<EOF
AuthorizedKeysFile .ssh/authorized_keys
PermitRootLogin no
SetEnv PATH=$APPLE_PATH TMPDIR=$(<"$hd/tmpdir")
EOF
            # shellcheck disable=SC2016
            ip netns exec "$ns" unshare --uts sh -c "$STOCK_INNER" sh "$name" "$hd" "$DIR" \
                "${KC_HIDE:-}" "${client:+$py}" "$FM/fakemacd.py" \
                "$SSHD" -f "$hd/sshd_config" -E "$hd/sshd.log" 9>&-
            continue
        fi
        cat >> "$hd/sshd_config" <<EOF
AuthorizedKeysFile $DIR/authorized_keys
PermitRootLogin prohibit-password
SetEnv PATH=$hd/bin:$ROOT_PATH
EOF
        # `ip netns exec` gives the sshd a private (slave) mount namespace: the
        # bind-mounted home and the overlays with the fake commands stay inside
        # this host; `unshare --uts` gives it its own hostname.  The fast path's
        # daemon starts from the same shell, so it has the very namespaces of the
        # sshd and its sessions; in its own session (setsid), with a clean
        # environment (each command takes its client's), nothing inherited.
        # shellcheck disable=SC2016  # the inner script gets its values as $1..$8
        ip netns exec "$ns" unshare --uts sh -c '
            hostname "$1"
            mount --bind "$2" "$3"
            if [ "$5" = 1 ]; then
                mount -t overlay kc-fakemac -o "lowerdir=$4/usr/bin:/usr/bin" /usr/bin &&
                mount -t overlay kc-fakemac -o "lowerdir=$4/usr/sbin:/usr/sbin" /usr/sbin ||
                echo "simcluster: overlay mount failed on $1 (fake commands only on PATH)" >&2
            fi
            if [ -n "$6" ]; then
                (cd / && exec setsid env -i HOME=/root \
                    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
                    "$6" -B "$7" "$8" "$8/fakemac.sock") < /dev/null >> "$8/fakemacd.log" 2>&1 &
            fi
            shift 8
            exec "$@"' sh "$name" "$hd/home" "$home_of_root" "$hd/overlay" \
            "$([[ $pers == linux ]] && echo 0 || echo "$OVERLAY")" \
            "$([[ $pers == linux ]] || echo "${client:+$py}")" "$FM/fakemacd.py" "$hd" \
            "$SSHD" -f "$hd/sshd_config" -E "$hd/sshd.log" 9>&-
    done < "$DIR/hosts.tsv"

    # every sshd has daemonized (it exists as an sshd process): another
    # cluster's `down` will now leave /run/sshd alone
    unlock

    cat >> "$DIR/ssh_config" <<EOF
Host *
    User root
    IdentityFile $DIR/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $DIR/known_hosts
    StrictHostKeyChecking yes
    BatchMode yes
    ConnectTimeout 5
EOF

    local k
    while IFS=$'\t' read -r name _ _ _ pers _; do
        hd="$DIR/hosts/$name"
        for (( k = 0; k < 250; k++ )); do
            [[ -s $hd/sshd.pid ]] && break
            sleep 0.02
        done
        [[ -s $hd/sshd.pid ]] || { cat "$hd/sshd.log" >&2; die "sshd on $name did not start"; }
    done < "$DIR/hosts.tsv"
    if [[ -n $SH_PID ]] && ! wait "$SH_PID"; then
        echo "simcluster: cc failed (see $DIR/macsh.log): a stock Mac's /bin/sh is bash without xpg_echo" >&2
        ln -s "$(readlink -f /bin/bash)" "$DIR/macsh"
    fi
    if [[ -n $client ]]; then
        if wait "$CC_PID"; then
            wait_daemons
        else
            echo "simcluster: cc failed (see $DIR/fakemac-client.log): the fake commands use the python path" >&2
            while IFS=$'\t' read -r name _ _ _ pers stock; do
                [[ $pers == linux ]] || write_wrappers "$DIR/hosts/$name" "$py" "$stock" ""
            done < "$DIR/hosts.tsv"
        fi
    fi
    UP_DONE=1
    [[ ${KC_QUIET:-0} == 1 ]] || cmd_info
}

cmd_info() {
    [[ -f $DIR/hosts.tsv ]] || die "no cluster (state folder $DIR missing)"
    echo "state:      $DIR"
    echo "ssh_config: $DIR/ssh_config   (ssh -F $DIR/ssh_config HOST ...)"
    echo "hosts:      $(host_names | paste -sd, -)"
    "$(pick_python)" - "$DIR/cluster.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
for h in c["hosts"]:
    print(f"  {h['name']:<6} {h['mgmt_ip']:<14} {h['model']:<9} rdma={'on' if h['rdma_enabled'] else 'off'}"
          + ("  stock (admin)" if h.get("stock") else "")
          + {"nopasswd": "", "password": "  (sudo needs a password)",
             "scoped": "  (sudo: ifconfig, route, networksetup)"}[h["sudo"]])
for x in c["cables"]:
    dock = " via dock" if x["via_dock"] else ""
    print(f"  {x['a']}:{x['a_if']} (TB{x['a_port']}) -- {x['b']}:{x['b_if']} (TB{x['b_port']})  "
          f"{x['speed']}{dock}  rdma {'active' if x['rdma_active'] else 'down'}")
EOF
}

cmd_status() {
    local name ns ip
    [[ -f $DIR/hosts.tsv ]] || { echo "no cluster (state folder $DIR missing)"; return 0; }
    while IFS=$'\t' read -r name _ ns ip _ _; do
        echo "$name ns=$ns mgmt=$ip sshd=$(cat "$DIR/hosts/$name/sshd.pid" 2>/dev/null) fakemacd=$(cat "$DIR/hosts/$name/fakemacd.pid" 2>/dev/null || echo -) pids=[$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')]"
        ip -n "$ns" -br link | sed 's/^/    /'
    done < "$DIR/hosts.tsv"
}

cmd_check() {
    local name out want pers rc=0
    [[ -f $DIR/hosts.tsv ]] || die "no cluster"
    while IFS=$'\t' read -r name _ _ _ pers _; do
        want=Darwin
        [[ $pers == linux ]] && want=Linux
        if out=$(ssh -F "$DIR/ssh_config" "$name" 'hostname; uname -s' 2>&1 </dev/null) \
           && [[ $out == "$name"$'\n'"$want" ]]; then
            echo "$name ok"
        else
            echo "$name FAILED: $out"; rc=1
        fi
    done < "$DIR/hosts.tsv"
    return $rc
}

cmd_snapshot() { # per host: what the fakes recorded and the IPv4 state now
    local out=${1:-} name py
    [[ -n $out ]] || die "usage: snapshot DIR"
    [[ -f $DIR/hosts.tsv ]] || die "no cluster"
    py=$(pick_python)
    mkdir -p "$out"
    while IFS=$'\t' read -r name _ _ _ pers _; do
        cp "$DIR/hosts/$name/mutations.log" "$out/$name.mutations.txt"
        cp "$DIR/hosts/$name/calls.log" "$out/$name.calls.txt"
        {
            echo "# ip -4 addr (interface address/prefix), then ip -4 route, inside $name"
            ( cmd_exec "$name" ip -4 -j addr show ) | "$py" -c '
import json, sys
for d in json.load(sys.stdin):
    for a in d.get("addr_info", []):
        if d["ifname"] != "lo":
            print(d["ifname"], a["local"] + "/" + str(a["prefixlen"]))'
            ( cmd_exec "$name" ip -4 route show )
        } > "$out/$name.ip4.txt" 2>&1
    done < "$DIR/hosts.tsv"
}

cmd_reboot() {
    local h=${1:?host} py
    [[ -f $DIR/hosts.tsv ]] || die "no cluster"
    [[ -n $(host_field "$h" 3) ]] || die "reboot: no host $h"
    [[ $(host_field "$h" 5) != linux ]] || die "reboot: $h is a Linux host (no fake to restart)"
    py=$(pick_python)
    ( cmd_exec "$h" "$py" -S "$FM/fakemac.py" --simhost "$DIR/hosts/$h" --reboot )
}

cmd_exec() {
    local h=${1:?host} ns pid hd
    shift
    ns=$(host_field "$h" 3)
    hd="$DIR/hosts/$h"
    if [[ $(host_field "$h" 6) == 1 ]]; then
        # a stock Mac: root in its own file system (where the fakes are at
        # their macOS paths only); SIMCLUSTER_EXEC=1 keeps what the
        # simulator's user runs out of fail-sudo's count
        pid=$(cat "$hd/anchor.pid" 2>/dev/null || true)
        [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || die "$h is not running (no $hd/anchor.pid)"
        exec nsenter -t "$pid" -n -u -m -- env -u TMPDIR PATH="$ROOT_PATH" HOME=/var/root \
            USER=root LOGNAME=root SIMCLUSTER_EXEC=1 "$@"
    fi
    pid=$(cat "$hd/sshd.pid" 2>/dev/null || true)
    local envs=(PATH="$hd/bin:$ROOT_PATH" HOME=/root)
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        exec nsenter -t "$pid" -n -u -m --wd=/ -- env "${envs[@]}" "$@"
    fi
    exec ip netns exec "$ns" env "${envs[@]}" "$@"
}

case ${1:-} in
    up) shift; cmd_up "$@" ;;
    down) cmd_down ;;
    status) cmd_status ;;
    check) cmd_check ;;
    info) cmd_info ;;
    hosts) host_names | paste -sd, - ;;
    exec) shift; cmd_exec "$@" ;;
    snapshot) shift; cmd_snapshot "$@" ;;
    reboot) shift; cmd_reboot "$@" ;;
    unplug | plug | speed)
        [[ -f $DIR/topology.json ]] || die "no cluster in $DIR"
        exec "$(pick_python)" "$HERE/fakemac/simcable.py" "$DIR" "$PREFIX" "$MGMT" "$@" ;;
    ssh) shift; h=${1:?host}; shift; exec ssh -F "$DIR/ssh_config" "$h" "$@" ;;
    *) sed -n '3,26p' "$0"; exit 2 ;;
esac
