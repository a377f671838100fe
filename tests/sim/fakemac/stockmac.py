#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stockmac.py - the file systems of the stock simulated Macs of a cluster.

    stockmac.py STATE_DIR PYTHON [SH]

Run by `simcluster.sh up` (as root) after `simtopo.py compile`, for every Mac
host whose mac.json says "stock": true.  PYTHON is the machine's real
interpreter (the fakes run on it; Homebrew's python3 and Apple's 3.9 are
views of it), SH what the host's /bin/sh is (the POSIX-mode launcher of
bash that up compiles, or bash itself).  Writes, under STATE_DIR/hosts/H:

    root/        the skeleton of the host's / (mount points, a Mac's /bin of links
                 to the machine's commands, /lib -> usr/lib, /private/etc -> ../etc
                 ...); up bind-mounts it on itself,
                 mounts the rest on it and makes it the host's root (pivot_root)
    overlay/usr  over the machine's /usr: the fake commands at their macOS
                 paths (/usr/bin/uname, /usr/sbin/system_profiler,
                 /usr/libexec/ApplicationFirewall/socketfilterfw ...), Apple's
                 /usr/bin/python3, /usr/bin/sh, an empty /usr/local; whiteouts
                 hide the machine's /usr/sbin/ifconfig and route
    overlay/sbin over the machine's /usr/sbin as /sbin: ifconfig and route
                 (a Mac's /sbin), and none of the fakes of /usr/sbin
    etc/         over the machine's /etc: passwd, group, shadow with the admin
                 user, macOS's sudoers, hosts, an empty /etc/zsh/zshenv
    sudoers.d/   the host's /etc/sudoers.d (its "sudo" rule)
    var/ tmp/ run/   the host's /var (with /var/folders: the user's TMPDIR,
                 /var/root), /tmp and /run
    home/        /Users/admin (owned by uid 501)
    homebrew/    /opt/homebrew: bin/jaccl-config (KC_JACCL_CONFIG), bin/python3
                 (a venv of PYTHON: its own site-packages), bin/fish
    Library/     /Library (Apple's Python 3.9 of the Command Line Tools; the
                 LaunchDaemons' plists of other tools: "other_managers")
    firewall.nft the application firewall's rules (fakemac.firewall_rules)

Nothing outside STATE_DIR is written.  Python 3 standard library only.
"""

import json
import os
import shutil
import stat
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fakemac  # noqa: E402  (firewall_rules, the one place they are made)

ADMIN_UID, STAFF_GID, ADMIN_GID = 501, 20, 80
# a first admin account's groups on macOS (a subset: the ones that say what it is)
GROUPS = [("staff", 20), ("everyone", 12), ("localaccounts", 61), ("_appserverusr", 79),
          ("admin", 80), ("_appserveradm", 81), ("_lpadmin", 98),
          ("com.apple.access_ssh", 399)]
# the fake commands by their macOS folder (stock hosts: no fake sudo)
USR_BIN = ["ibv_devices", "ibv_devinfo", "rdma_ctl", "sw_vers", "uname", "pmset"]
USR_SBIN = ["system_profiler", "networksetup", "ipconfig", "sysctl", "scutil", "netstat"]
SBIN = ["ifconfig", "route"]
LIBEXEC_FW = "libexec/ApplicationFirewall"
# a Mac's /bin (the machine's are in /usr/bin; sh is the host's /bin/sh)
BIN = ["[", "bash", "cat", "chmod", "cp", "csh", "dash", "date", "dd", "df", "echo", "ed",
       "expr", "hostname", "kill", "ksh", "link", "ln", "ls", "mkdir", "mv", "pax", "ps", "pwd",
       "realpath", "rm", "rmdir", "sleep", "stty", "sync", "tcsh", "test", "unlink", "zsh"]
# Debian's python tools that a Mac's /usr/bin does not have
NO_SUCH = ["pip", "pip3.11", "pydoc3.11", "python3-config", "python3.11-config",
           "python-argcomplete-check-easy-install-script", "python-argcomplete-tcsh"]

STUB_TEXT = """xcode-select: note: No developer tools were found, requesting install.
If developer tools are located at a non-default location on disk, use `sudo xcode-select --switch path/to/Xcode.app` to specify the Xcode that you wish to use for command line developer tools, and cancel the installation dialog.
See `man xcode-select` for more details.
"""
CLT_PY = "/Library/Developer/CommandLineTools/usr/bin/python3"
APPLE_VERSION = "3.9.6"


def write(path, text, mode=0o644, uid=0, gid=0):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    if uid or gid:
        os.chown(path, uid, gid)


def mkdirs(path, mode=0o755, uid=0, gid=0):
    os.makedirs(path, exist_ok=True)
    os.chmod(path, mode)
    if uid or gid:
        os.chown(path, uid, gid)


def symlink(target, path):
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def whiteout(path):
    """An overlayfs whiteout: the name does not exist in the merged view."""
    if os.path.lexists(path):
        os.unlink(path)
    os.mknod(path, stat.S_IFCHR | 0o000, os.makedev(0, 0))


def opaque(path):
    """An overlayfs opaque folder: the lower layers' entries are hidden."""
    mkdirs(path)
    os.setxattr(path, "trusted.overlay.opaque", b"y")


def python_shim(variant, what):
    """/usr/bin/python3 (pip3, pydoc3) of a stock Mac: the xcode-select stub
    without the Command Line Tools, else Apple's 3.9 (reached through the
    Command Line Tools' python3, as on a Mac)."""
    if variant == "stub":
        return ("#!/bin/sh\n# /usr/bin/%s of a Mac without the Command Line Tools\n"
                "cat >&2 <<'EOF'\n%sEOF\nexit 1\n" % (what, STUB_TEXT))
    run = {"python3": "", "pip3": " -m pip", "pydoc3": " -m pydoc"}[what]
    vers = ('case $1 in -V | --version) echo "Python %s"; exit 0 ;; esac\n' % APPLE_VERSION
            if what == "python3" else "")
    return ("#!/bin/sh\n# /usr/bin/%s of a Mac with the Command Line Tools: Apple's Python %s\n"
            "%sexec %s%s \"$@\"\n" % (what, APPLE_VERSION, vers, CLT_PY, run))


# sys.version and sys.version_info of Apple's Python, set at start-up by a
# .pth file of the Command Line Tools' site-packages (python3 -S skips it)
APPLE_SITE = '''"""Apple's Python 3.9.6 of the Command Line Tools, as the simulator shows it."""
import collections
import sys

_V = collections.namedtuple("version_info", "major minor micro releaselevel serial")
sys.version = "3.9.6 (default, Nov 11 2024, 03:15:38) \\n[Clang 16.0.0 (clang-1600.0.26.6)]"
sys.version_info = _V(3, 9, 6, "final", 0)
sys.hexversion = 0x030906f0
'''


def venv_cfg(python):
    v = sys.version_info
    return (f"home = {os.path.dirname(python)}\ninclude-system-site-packages = false\n"
            f"version = {v.major}.{v.minor}.{v.micro}\n")


def read_db(path):
    try:
        with open(path) as f:
            return [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]
    except OSError:
        return []


def passwd_group(cfg):
    """passwd and group of the host: the machine's system accounts (so that
    sshd finds its privilege separation user), root as on a Mac (home
    /var/root), and the admin user with macOS's groups."""
    u = cfg["user"]
    names = {u["name"]} | {g for g, _ in GROUPS}
    gids = {i for _, i in GROUPS}
    pw = []
    for line in read_db("/etc/passwd"):
        f = line.split(":")
        if len(f) != 7 or f[0] in names or f[2] == str(u["uid"]):
            continue
        if f[0] == "root":
            f[4:7] = ["System Administrator", "/var/root", "/bin/sh"]
        pw.append(":".join(f))
    shell = {"zsh": "/bin/zsh", "bash": "/bin/bash", "fish": "/opt/homebrew/bin/fish"}[cfg["shell"]]
    pw.append(f"{u['name']}:x:{u['uid']}:{u['gid']}:Admin:{u['home']}:{shell}")
    gr = [f"{g}:x:{i}:{u['name'] if g != 'staff' else ''}" for g, i in GROUPS]
    for line in read_db("/etc/group"):
        f = line.split(":")
        if len(f) != 4 or f[0] in names or (f[2].isdigit() and int(f[2]) in gids):
            continue
        gr.append(line)
    # no password hash of the machine is copied: every account is locked for
    # passwords ('*'), which sshd's keys and sudo's NOPASSWD do not need
    sh = [f"{line.split(':')[0]}:*:19700:0:99999:7:::" for line in pw]
    return "\n".join(pw) + "\n", "\n".join(gr) + "\n", "\n".join(sh) + "\n", shell


SUDOERS = """#
# Sudoers file of a simulated stock Mac: macOS's default policy (a password for
# the admin group, env_reset, no secure_path), then what only the simulator
# needs: sudo's own log in the state folder, nothing sent to the machine's
# syslog, no PAM session (its modules would log there too).
#
Defaults	env_reset
Defaults	env_keep += "BLOCKSIZE"
Defaults	env_keep += "COLORFGBG COLORTERM"
Defaults	env_keep += "__CF_USER_TEXT_ENCODING"
Defaults	env_keep += "CHARSET LANG LANGUAGE LC_ALL LC_COLLATE LC_CTYPE"
Defaults	env_keep += "LC_MESSAGES LC_MONETARY LC_NUMERIC LC_TIME"
Defaults	env_keep += "LINES COLUMNS"
Defaults	env_keep += "LSCOLORS"
Defaults	env_keep += "SSH_AUTH_SOCK"
Defaults	env_keep += "TZ"
Defaults	env_keep += "DISPLAY XAUTHORIZATION XAUTHORITY"
Defaults	env_keep += "EDITOR VISUAL"
Defaults	env_keep += "HOME MAIL"

Defaults	lecture_file = "/etc/sudo_lecture"

Defaults	logfile = "{log}", loglinelen = 0, !syslog, !pam_session

root	ALL = (ALL) ALL
%admin	ALL = (ALL) ALL

## Read drop-in files from /private/etc/sudoers.d
## (the '#' here does not indicate a comment)
#includedir /private/etc/sudoers.d
"""

RULES = {
    "nopasswd": "admin ALL=(ALL) NOPASSWD: ALL\n",
    "scoped": "admin ALL=(root) NOPASSWD: /sbin/ifconfig, /sbin/route, /usr/sbin/networksetup\n",
    "password": None,
}
RULE_NAME = "rule"     # sim_sudoers H FILE installs FILE as sudoers.d/rule

# what Homebrew's installer has the user put in ~/.zprofile, spelled out
# (`eval "$(/opt/homebrew/bin/brew shellenv)"`: the simulator has no brew)
ZPROFILE = """export HOMEBREW_PREFIX="/opt/homebrew";
export HOMEBREW_CELLAR="/opt/homebrew/Cellar";
export HOMEBREW_REPOSITORY="/opt/homebrew";
export PATH="/opt/homebrew/bin:/opt/homebrew/sbin${PATH+:$PATH}";
export MANPATH="/opt/homebrew/share/man${MANPATH+:$MANPATH}:";
export INFOPATH="/opt/homebrew/share/info:${INFOPATH:-}";
"""


def daemon_plist(d):
    """A LaunchDaemon's plist as a tool installs it: its label, the program
    and how often launchd runs it."""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
            '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
            '<plist version="1.0">\n<dict>\n'
            f'\t<key>Label</key>\n\t<string>{d["label"]}</string>\n'
            '\t<key>ProgramArguments</key>\n\t<array>\n'
            f'\t\t<string>{d["program"]}</string>\n\t</array>\n'
            f'\t<key>StartInterval</key>\n\t<integer>{d["interval"]}</integer>\n'
            '\t<key>RunAtLoad</key>\n\t<true/>\n</dict>\n</plist>\n')


def state_mount_point(hd, state_dir):
    """Where the state folder is mounted inside the host, as a path of the
    state folder: under the host's tmp/, var/ or run/ when it lives there,
    else in the root skeleton."""
    rel = os.path.relpath(state_dir, "/")
    top = rel.split(os.sep)[0]
    if top in ("usr", "etc", "sbin", "bin", "lib", "lib64", "lib32", "dev", "proc", "sys",
               "opt", "Users", "Library", "private"):
        sys.exit(f"stockmac: the state folder {state_dir} cannot be under /{top} "
                 "(it is a folder of the simulated Mac there): set KC_DIR elsewhere")
    if top in ("tmp", "var", "run"):
        return os.path.join(hd, top, os.path.relpath(state_dir, "/" + top))
    return os.path.join(hd, "root", rel)


def prepare(state_dir, python, sh):
    with open(os.path.join(state_dir, "cluster.json")) as f:
        cluster = json.load(f)
    jc = os.environ.get("KC_JACCL_CONFIG", "")
    usr_sbin = set(os.listdir("/usr/sbin"))
    usr_bin = set(os.listdir("/usr/bin"))
    tops = [n for n in sorted(os.listdir("/")) if os.path.islink("/" + n)
            and os.readlink("/" + n).startswith("usr/") and n != "sbin"]
    for h in cluster["hosts"]:
        if not h.get("stock"):
            continue
        hd = os.path.join(state_dir, "hosts", h["name"])
        with open(os.path.join(hd, "mac.json")) as f:
            cfg = json.load(f)
        u = cfg["user"]
        fakes = os.path.join(hd, "bin")

        # the root skeleton
        root = os.path.join(hd, "root")
        for d in ("usr", "etc", "sbin", "var", "tmp", "run", "dev", "proc", "sys", "opt/homebrew",
                  "Users/admin", "Library", "private", ".old"):
            mkdirs(os.path.join(root, d))
        for n in tops:
            if n != "bin":
                symlink(os.readlink("/" + n), os.path.join(root, n))
        mkdirs(os.path.join(root, "bin"))
        for c in BIN:
            if c in usr_bin:
                symlink("/usr/bin/" + c, os.path.join(root, "bin", c))
        symlink("/usr/bin/sh", os.path.join(root, "bin", "sh"))
        for n in ("etc", "tmp", "var"):
            symlink("../" + n, os.path.join(root, "private", n))

        # /usr and /sbin
        ov = os.path.join(hd, "overlay")
        for d in ("usr/bin", "usr/sbin", "usr/" + LIBEXEC_FW, "sbin"):
            mkdirs(os.path.join(ov, d))
        opaque(os.path.join(ov, "usr/local"))
        # each fake in its macOS folder, and the machine's command of that name
        # hidden in the other folders of Apple's PATH (/bin is the skeleton's)
        for folder, names in (("usr/bin", USR_BIN), ("usr/sbin", USR_SBIN), ("sbin", SBIN)):
            for c in names:
                symlink(os.path.join(fakes, c), os.path.join(ov, folder, c))
                for other, machine in (("usr/bin", usr_bin), ("usr/sbin", usr_sbin),
                                       ("sbin", usr_sbin)):
                    if other != folder and c in machine:
                        whiteout(os.path.join(ov, other, c))
        symlink(os.path.join(fakes, "socketfilterfw"),
                os.path.join(ov, "usr", LIBEXEC_FW, "socketfilterfw"))
        symlink(os.path.join(fakes, "launchctl"), os.path.join(root, "bin", "launchctl"))
        symlink(sh, os.path.join(ov, "usr/bin/sh"))
        for c in ("python3", "pip3", "pydoc3"):
            write(os.path.join(ov, "usr/bin", c), python_shim(cfg["python"], c), 0o755)
        for c in NO_SUCH:
            if c in usr_bin:
                whiteout(os.path.join(ov, "usr/bin", c))

        # /etc
        etc = os.path.join(hd, "etc")
        mkdirs(os.path.join(etc, "zsh"))
        mkdirs(os.path.join(etc, "sudoers.d"))
        pw, gr, sd, shell = passwd_group(cfg)
        write(os.path.join(etc, "passwd"), pw)
        write(os.path.join(etc, "group"), gr)
        write(os.path.join(etc, "shadow"), sd, 0o640)
        write(os.path.join(etc, "hosts"),
              f"127.0.0.1\tlocalhost\n255.255.255.255\tbroadcasthost\n::1\tlocalhost\n"
              f"{cfg['mgmt']['ip']}\t{h['name']}\n")
        write(os.path.join(etc, "hostname"), h["name"] + "\n")
        shells = read_db("/etc/shells")
        write(os.path.join(etc, "shells"), "\n".join(shells + [
            "/opt/homebrew/bin/fish"] if cfg["shell"] == "fish" else shells) + "\n")
        write(os.path.join(etc, "zsh/zshenv"),
              "# a Mac has no system-wide zshenv: PATH stays what sshd set\n")
        write(os.path.join(etc, "sudoers"), SUDOERS.replace("{log}", os.path.join(hd, "sudo.log")),
              0o440)
        sdir = os.path.join(hd, "sudoers.d")
        mkdirs(sdir)
        if RULES[cfg["sudo"]]:
            write(os.path.join(sdir, RULE_NAME), RULES[cfg["sudo"]], 0o440)
        write(os.path.join(hd, "sudo.log"), "", 0o600)

        # /var, /tmp, /run
        var = os.path.join(hd, "var")
        for d, mode in (("root", 0o750), ("tmp", 0o1777), ("log", 0o755), ("db", 0o755),
                        ("empty", 0o755), ("lib", 0o755), ("folders", 0o755)):
            mkdirs(os.path.join(var, d), mode)
        symlink("../run", os.path.join(var, "run"))
        write(os.path.join(hd, "tmpdir"), u["tmpdir"] + "\n")   # for sshd_config
        tmpdir = u["tmpdir"].rstrip("/")            # /var/folders/XX/YYYY/T
        user_dir = os.path.dirname(tmpdir)
        mkdirs(os.path.join(hd, os.path.dirname(user_dir).lstrip("/")), 0o755)
        mkdirs(os.path.join(hd, user_dir.lstrip("/")), 0o755, ADMIN_UID, STAFF_GID)
        for d in ("T", "C", "0"):
            mkdirs(os.path.join(hd, user_dir.lstrip("/"), d), 0o700, ADMIN_UID, STAFF_GID)
        mkdirs(os.path.join(hd, "tmp"), 0o1777)
        mkdirs(os.path.join(hd, "run", "sshd"), 0o755)

        # the admin's home
        home = os.path.join(hd, "home")
        mkdirs(os.path.join(home, ".ssh"), 0o700, ADMIN_UID, STAFF_GID)
        shutil.copyfile(os.path.join(state_dir, "authorized_keys"),
                        os.path.join(home, ".ssh", "authorized_keys"))
        os.chown(os.path.join(home, ".ssh", "authorized_keys"), ADMIN_UID, STAFF_GID)
        os.chmod(os.path.join(home, ".ssh", "authorized_keys"), 0o600)
        write(os.path.join(home, ".zprofile"), ZPROFILE, 0o644, ADMIN_UID, STAFF_GID)
        os.chown(home, ADMIN_UID, STAFF_GID)
        os.chmod(home, 0o750)

        # /opt/homebrew: the tool, Homebrew's python3 (its own site-packages), fish
        brew = os.path.join(hd, "homebrew")
        pyv = f"python{sys.version_info.major}.{sys.version_info.minor}"
        for d in ("bin", "sbin", "lib", f"lib/{pyv}", f"lib/{pyv}/site-packages", "share",
                  "Cellar"):
            mkdirs(os.path.join(brew, d), 0o755, ADMIN_UID, ADMIN_GID)
        os.chown(brew, ADMIN_UID, ADMIN_GID)
        write(os.path.join(brew, "pyvenv.cfg"), venv_cfg(python), 0o644, ADMIN_UID, ADMIN_GID)
        for n in ("python3", pyv):
            symlink(python, os.path.join(brew, "bin", n))
        if cfg["shell"] == "fish":
            symlink(shutil.which("fish", path="/usr/bin:/bin") or "/usr/bin/fish",
                    os.path.join(brew, "bin", "fish"))
        if jc:
            dst = os.path.join(brew, "bin", "jaccl-config")
            shutil.copyfile(jc, dst)
            os.chmod(dst, 0o755)
            os.chown(dst, ADMIN_UID, ADMIN_GID)

        # /Library: the Command Line Tools' Python (Apple's 3.9) on "apple" hosts
        lib = os.path.join(hd, "Library")
        mkdirs(lib)
        if cfg["python"] == "apple":
            clt = os.path.join(lib, "Developer/CommandLineTools/usr")
            site = os.path.join(clt, "lib", pyv, "site-packages")
            mkdirs(os.path.join(clt, "bin"))
            mkdirs(site)
            write(os.path.join(clt, "pyvenv.cfg"), venv_cfg(python))
            symlink(python, os.path.join(clt, "bin", "python3"))
            write(os.path.join(site, "_apple_python.py"), APPLE_SITE)
            write(os.path.join(site, "_apple_python.pth"), "import _apple_python\n")

        # the LaunchDaemons of other tools (the fake launchctl knows them)
        daemons = os.path.join(lib, "LaunchDaemons")
        mkdirs(daemons)
        for d in cfg.get("other_managers", {}).get("daemons", []):
            write(os.path.join(daemons, d["label"] + ".plist"), daemon_plist(d))

        # the application firewall's rules (socketfilterfw changes them later)
        rules = fakemac.firewall_rules(cfg, {})
        fw = os.path.join(hd, "firewall.nft")
        if rules:
            write(fw, rules)
        elif os.path.exists(fw):
            os.unlink(fw)

        # the state folder, visible in the host at its own path
        mkdirs(state_mount_point(hd, state_dir))

        # the fakes run as the user who runs them: their logs and state are
        # written by uid 501 too (group admin may write them)
        for n in ("calls.log", "mutations.log", "state.lock"):
            p = os.path.join(hd, n)
            if not os.path.exists(p):
                open(p, "a").close()
            os.chown(p, 0, ADMIN_GID)
            os.chmod(p, 0o664)
        os.chown(hd, 0, ADMIN_GID)
        os.chmod(hd, 0o775)


def main(argv):
    if len(argv) not in (3, 4):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    prepare(argv[1], argv[2], argv[3] if len(argv) == 4 else "bash")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
