/* SPDX-License-Identifier: MIT */
/*
 * Parsers of the outputs only the doctor asks for (the platform backends'
 * doctor_cmds, run in the same one round trip as the probe): the sleep
 * timer of `pmset -g`, the application firewall's `socketfilterfw
 * --getglobalstate`, the MLX_* / JACCL_* variables a command started over
 * SSH sees, the Python and MLX versions, and the interface of the default
 * route (macOS `route -n get default`, Linux `ip route show default`).
 * Pure: text in, values out. struct jc_sw gathers them for one host;
 * everything not captured or not understood stays unknown.
 */
#ifndef JC_PARSE_SW_H
#define JC_PARSE_SW_H

#include "jc.h"
#include "parse_state.h"
#include "platform.h"
#include "util.h"

/* Bundle file names of the doctor's outputs. */
#define SW_PMSET "pmset-g.txt"
#define SW_FIREWALL "socketfilterfw-getglobalstate.txt"
#define SW_ENV "env-mlx.txt"
#define SW_PYTHON "python-mlx.txt"
#define SW_ROUTE_MACOS "route-n-get-default.txt"
#define SW_ROUTE_LINUX "ip-route-show-default.txt"
#define SW_NETSVC "networksetup-services.txt"
#define SW_INSTALL "jaccl-config-install.txt"

/*
 * Where jaccl-config is on the host, looked for as verify and launch look
 * (launch_bin_candidates(), but for the client's own path): on the PATH of
 * an SSH command, in /opt/homebrew/bin, in /usr/local/bin. Prints its path
 * and the first line of its --version, or "-".
 */
#define SW_INSTALL_SH \
	"jc_if=-; for jc_ic in jaccl-config /opt/homebrew/bin/jaccl-config " \
	"/usr/local/bin/jaccl-config; do case $jc_ic in */*) ;; *) " \
	"jc_ic=$(command -v \"$jc_ic\" 2>/dev/null) || continue ;; esac; " \
	"if [ -f \"$jc_ic\" ] && [ -x \"$jc_ic\" ]; then jc_if=$jc_ic; break; fi; done; " \
	"printf '%s\\n' \"$jc_if\"; [ \"$jc_if\" = - ] || \"$jc_if\" --version </dev/null " \
	"2>/dev/null | { IFS= read -r jc_il; printf '%s\\n' \"$jc_il\"; }"

/*
 * macOS: the network service order, then for each service of ours
 * (JC_SVC_PREFIX, enabled or not) a line "### NAME" and its -getinfo: what
 * --persist wrote, and what a hand may have changed since.
 */
#define SW_NETSVC_SH \
	"networksetup -listnetworkserviceorder; " \
	"networksetup -listallnetworkservices | while IFS= read -r s; do " \
	"case $s in '" JC_SVC_PREFIX "'*|'*" JC_SVC_PREFIX "'*) n=${s#\\*}; " \
	"echo \"### $n\"; networksetup -getinfo \"$n\";; esac; done"

/*
 * macOS: the application firewall's state (socketfilterfw lives outside
 * PATH, hence its folder added at the end); when it is on (State = 1),
 * also the jaccl-config its rules must allow ("jaccl-config at PATH": the
 * first on PATH, in /opt/homebrew/bin, in /usr/local/bin) and the programs
 * they list (--listapps). The exit status is --getglobalstate's.
 */
#define SW_FIREWALL_SH \
	"PATH=$PATH:/usr/libexec/ApplicationFirewall; " \
	"jc_g=$(socketfilterfw --getglobalstate); jc_s=$?; printf '%s\\n' \"$jc_g\"; " \
	"case $jc_g in *'(State = 1)'*) " \
	"for jc_c in jaccl-config /opt/homebrew/bin/jaccl-config /usr/local/bin/jaccl-config; do " \
	"jc_w=$(command -v \"$jc_c\" 2>/dev/null) && { echo \"jaccl-config at $jc_w\"; break; }; " \
	"done; socketfilterfw --listapps;; esac; exit $jc_s"

/* What `networksetup -getinfo` says of one service of ours. */
struct jc_svcinfo {
	char *name;		/* jc_service_name_ok */
	bool manual;		/* "Manual Configuration" */
	char *ip;		/* "IP address:", or NULL */
	char *mask;		/* "Subnet mask:", or NULL */
};

/*
 * The Python part of the doctor's commands: the Python the jobs run (the
 * one named by --python, in the script's variable jc_want, else the first
 * of JC_PYTHON_DEFAULT that is not macOS's stub: JC_PYTHON_FIND_SH), one
 * line "tried WORD:RESULT" per candidate (missing, stub, ok), then that
 * Python's version and the version of its installed "mlx" distribution as
 * its metadata says (what pip reports), "-" when there is none, "?" when
 * importlib.metadata is missing. DARWIN as for JC_PYTHON_FIND_SH.
 */
#define SW_PYTHON_SH(DARWIN) \
	JC_PYTHON_FIND_SH("${jc_want:-" JC_PYTHON_DEFAULT "}", DARWIN) \
	"for jc_t in $jc_why; do echo \"tried $jc_t\"; done; " \
	"[ -n \"$jc_py\" ] || exit 1; echo \"tried ${jc_py}:ok\"; " \
	"\"$jc_py\" -c 'import sys\n" \
	"print(\"python\", sys.version.split()[0])\n" \
	"try:\n" \
	"    import importlib.metadata as m\n" \
	"except ImportError:\n" \
	"    print(\"mlx ?\"); sys.exit(0)\n" \
	"try:\n" \
	"    print(\"mlx\", m.version(\"mlx\"))\n" \
	"except m.PackageNotFoundError:\n" \
	"    print(\"mlx -\")\n' </dev/null"

/* What the doctor's outputs say about one host; unknowns as noted. */
struct jc_sw {
	bool gathered;		/* any of the doctor's outputs is there */
	long sleep;		/* pmset's system sleep timer, minutes; -1 unknown */
	int fw_state;		/* socketfilterfw global state 0, 1, 2; -1 unknown */
	char *jc_path;		/* jaccl-config on the host (SW_FIREWALL_SH), or NULL */
	struct jc_strv fw_allowed;	/* programs the firewall lets accept connections */
	bool fw_listed;		/* fw_allowed and jc_path were asked (State = 1) */
	char *python;		/* "3.12.4", or NULL when unknown */
	char *python_path;	/* the Python that ran ("tried P:ok"), or NULL */
	struct jc_strv python_tried;	/* "WORD:missing" / "PATH:stub" passed over */
	int mlx;		/* enum jc_tri: installed (mlx_version), not, unknown */
	char *mlx_version;
	bool env_known;		/* env holds every MLX_* / JACCL_* variable set */
	struct jc_strv env;	/* "NAME=VALUE", sorted by name */
	int route_known;	/* enum jc_tri: JC_YES when default_if is meaningful */
	char *default_if;	/* the default route's interface; NULL: no default route */
	int svc_known;		/* enum jc_tri: JC_YES when svcs and info are meaningful */
	struct jc_netsvc *svcs;	/* the service order (SW_NETSVC) */
	size_t nsvcs;
	struct jc_svcinfo *info;	/* what -getinfo says of each of ours */
	size_t ninfo;
	int install;		/* enum jc_tri: jaccl-config found (SW_INSTALL), not, unknown */
	char *install_path;	/* where, when found */
	char *install_version;	/* the first line of its --version ("" when none) */
	struct jc_strv why;	/* one "FILE: reason" per output not understood */
};

/*
 * Fill sw (zeroed) from one host's raw outputs: the files above that are
 * there. Never fails.
 */
void sw_from_raw(const struct jc_raw *raw, struct jc_sw *sw);

void sw_clear(struct jc_sw *sw);

/* `pmset -g`: the "sleep" line's minutes (0: never), or -1 when there is none. */
long parse_pmset_sleep(const char *s, size_t len);

/* `socketfilterfw --getglobalstate`: the N of "(State = N)", 0 to 2, or -1. */
int parse_fw_state(const char *s, size_t len);

/*
 * The rest of SW_FIREWALL_SH's output: *jc_path the "jaccl-config at
 * PATH" (new string) or NULL, and each program --listapps lists with
 * "(Allow incoming connections)" appended to allowed. Paths that are not
 * jc_plain_word are left out. Returns true when the listing is there
 * ("Total number of apps"): the output of a doctor that asks for them.
 */
bool parse_fw_apps(const char *s, size_t len, char **jc_path, struct jc_strv *allowed);

/*
 * Lines "NAME=VALUE" of `env` whose NAME starts with MLX_ or JACCL_ (and
 * is made of letters, digits and '_'), appended to out sorted by name;
 * values are kept printable (hostfile_printable) and at most 200 bytes.
 */
void parse_env_mlx(const char *s, size_t len, struct jc_strv *out);

/*
 * The doctor's Python line script: "python X.Y.Z" and "mlx VERSION" (or
 * "mlx -" when the package is not installed). *python and *mlx_version
 * get new strings or NULL; returns the enum jc_tri of "mlx is installed".
 */
int parse_python_mlx(const char *s, size_t len, char **python, char **mlx_version);

/*
 * The "tried WORD:RESULT" lines of the same output: each candidate passed
 * over ("python3:missing", "/usr/bin/python3:stub") appended to tried, and
 * *path the one that ran ("ok"; new string) or NULL. Words that are not
 * jc_plain_word and unknown results are left out.
 */
void parse_python_tried(const char *s, size_t len, struct jc_strv *tried, char **path);

/*
 * macOS `route -n get default` with its exit status: *iface gets the
 * "interface:" of the route (new string) or NULL when the table has no
 * default route ("not in table"). Returns JC_YES when understood, else
 * JC_UNKNOWN.
 */
int parse_route_default_macos(const char *s, int status, char **iface);

/* Linux `ip route show default`: the same from its first "default ... dev IF" line. */
int parse_route_default_linux(const char *s, int status, char **iface);

/*
 * The output of SW_NETSVC_SH (len bytes): the service order into *svcs /
 * *nsvcs (parse_netsvc_order), then one entry per "### NAME" block into
 * *info / *ninfo; names that fail jc_service_name_ok and addresses that
 * fail jc_ipv4_ok are left out. Returns the number left out.
 */
size_t parse_netsvc_info(const char *s, size_t len, struct jc_netsvc **svcs, size_t *nsvcs,
    struct jc_svcinfo **info, size_t *ninfo);

void svcinfo_free(struct jc_svcinfo *info, size_t n);

/*
 * The output of SW_INSTALL_SH: JC_YES with *path (an absolute path) and
 * *version (its next line, "" when none) as new printable strings, JC_NO
 * for "-", JC_UNKNOWN otherwise (both NULL).
 */
int parse_install(const char *s, size_t len, char **path, char **version);

/* The entry called name in info[0..n), or NULL. */
const struct jc_svcinfo *svcinfo_find(const struct jc_svcinfo *info, size_t n, const char *name);

#endif
