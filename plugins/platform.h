/* SPDX-License-Identifier: MIT */
/*
 * Platform backends: how to discover one host of a given OS. A backend
 * names the commands of its probe (run in one remote script, one round trip
 * per host) and parses their raw outputs into a struct jc_host. Parsing is
 * pure: it reads a struct jc_raw and never runs anything, so a saved probe
 * bundle replays exactly like a live probe.
 */
#ifndef JC_PLATFORM_H
#define JC_PLATFORM_H

#include "jc.h"
#include "util.h"

/* One raw output of a probe command, as saved in a bundle. */
struct jc_raw_out {
	char *name;		/* bundle file name: "ibv_devices.txt" */
	char *data;		/* NUL-terminated (data[len] == 0) */
	size_t len;
	int status;		/* exit status, -1 when unknown (no manifest) */
};

/* Every raw output of one host. */
struct jc_raw {
	char *host;
	struct jc_raw_out *outs;
	size_t n;
};

/* Borrowed; NULL when the output was not captured. */
const struct jc_raw_out *raw_get(const struct jc_raw *raw, const char *name);
void raw_add(struct jc_raw *raw, const char *name, const char *data, size_t len, int status);

/*
 * raw_add() for a name raw does not hold yet (the caller knows): appended
 * without a search, in amortised constant time.
 */
void raw_add_new(struct jc_raw *raw, const char *name, const char *data, size_t len, int status);
void raw_clear(struct jc_raw *raw);

/* A command of the probe: the bundle file its output goes to, and sh text. */
struct jc_probe_cmd {
	const char *name;
	const char *sh;
};

/*
 * What a system can do or needs, asked by the pipeline instead of naming
 * the system (jc_platform_ops.caps).
 */
enum {
	/* RDMA is switched on by rdma_ctl in Recovery, ibv_devices lists the
	 * rdma_* devices (doctor: rdma-enabled, port-state) */
	JC_PLAT_RDMA_CTL = 1u << 0,
	/* every host of a cluster must run the same OS version and build
	 * (doctor: os-version) */
	JC_PLAT_SAME_OS = 1u << 1,
	/* a bridge0 may hold the cable interfaces: the setup takes them out
	 * and brings it down, restore puts it back */
	JC_PLAT_BRIDGE = 1u << 2,
	/* a link stays down until set up: the setup sets it up, its admin
	 * state is saved and restored, and "already set up" requires it up */
	JC_PLAT_LINK_ADMIN = 1u << 3,
	/* a sleep timer (pmset) and an application firewall (socketfilterfw)
	 * can take a host out of a job (doctor: sleep, firewall) */
	JC_PLAT_POWER_FW = 1u << 4,
};

/*
 * The changes a setup makes and restore undoes, named without a system:
 * jc_platform_ops.command turns one into the system's command.
 */
enum jc_act {
	JC_ACT_ADDR_SET,	/* iface, addr "A/L": the planned address (replaces) */
	JC_ACT_ADDR_ADD,	/* iface, addr "A/L" (or "A": /32): an address back */
	JC_ACT_ADDR_DEL,	/* iface, addr "A/L" */
	JC_ACT_LINK_UP,		/* iface (JC_PLAT_LINK_ADMIN only) */
	JC_ACT_LINK_DOWN,
	JC_ACT_ROUTE_SET,	/* peer, iface, via (NULL): the host route to peer */
	JC_ACT_ROUTE_DEL,	/* peer; iface when the system's command names it, or NULL */
	JC_ACT_BRIDGE_UP,	/* (JC_PLAT_BRIDGE only) */
	JC_ACT_BRIDGE_DOWN,
	JC_ACT_BRIDGE_ADDM,	/* iface: the member */
	JC_ACT_BRIDGE_DELM,
	/* persistent configuration (systems with a persist op) */
	JC_ACT_SVC_CREATE,	/* service, port: a network service on a hardware port */
	JC_ACT_SVC_MANUAL,	/* service, addr "A/L": its manual IPv4 configuration */
	JC_ACT_SVC_REMOVE,	/* service */
	JC_ACT_SVC_ENABLE,	/* service */
	JC_ACT_SVC_DISABLE,	/* service */
	/* persistent configuration in files (Linux: systemd-networkd, ifupdown) */
	JC_ACT_FILE_WRITE,	/* iface, manager, content: our file of iface */
	JC_ACT_FILE_REMOVE,	/* iface, manager */
	JC_ACT_NET_RELOAD,	/* manager: make it read its files again */
};

/*
 * The shell text of a JC_ACT_FILE_WRITE: sh -c TEXT sh CONTENT PATH
 * writes CONTENT to PATH (both passed as arguments, never parsed).
 */
#define JC_WRITE_SCRIPT "printf %s \"$1\" > \"$2\""

/* Prefix of the network services a persistent setup creates (ours). */
#define JC_SVC_PREFIX "jaccl-config "

/* True when name is one of ours: JC_SVC_PREFIX then a valid service name. */
bool platform_svc_ours(const char *name);

struct jc_act_arg {
	const char *iface;
	const char *addr;
	const char *peer;
	const char *via;
	const char *service;	/* SVC_*: the network service's name */
	const char *port;	/* SVC_CREATE: the hardware port */
	const char *manager;	/* FILE_*, NET_RELOAD: jc_netmgr_name() */
	const char *content;	/* FILE_WRITE */
};

/* What a fact's queries printed (see struct plan_fact). */
struct jc_fact_out {
	int kind;		/* enum plan_fact_kind */
	const char *iface;
	const char *peer;	/* ROUTE: the peer address */
	int status;		/* exit status of the first query */
	const char *out;	/* its stdout then stderr (not NULL) */
	int lstatus;		/* the second query's, when the system has one */
	const char *lout;	/* or NULL */
};

struct jc_fact_state;
struct plan_host;

/*
 * A platform backend: everything the pipeline needs to know of one system,
 * for the whole life of a host. Discovery (cmds, parse), the setup of a
 * planned host (setup, through command), the read-only queries that
 * capture the state a setup changes and their parser (queries, fact_parse),
 * and the commands that put it back (command). A persistent configuration
 * (networksetup services, systemd-networkd, ...) is meant to be one more
 * operation of the same kind as setup: commands for a planned host, built
 * from its addresses, with the facts it changes declared for restore.
 */
struct jc_platform_ops {
	const char *name;		/* "macos", "linux" (saved states, JSON) */
	const char *display;		/* "macOS", "Linux" (for people) */
	const char *uname;		/* what uname -s prints: "Darwin", "Linux" */
	unsigned caps;			/* JC_PLAT_* */
	const struct jc_probe_cmd *cmds;	/* terminated by { NULL, NULL } */
	/*
	 * Commands only the doctor adds to the same script (software versions,
	 * login environment, sleep, firewall, default route; parse_sw.h reads
	 * them), so that discovery for a setup stays as short as it is.
	 * Terminated by { NULL, NULL }; NULL when there is none.
	 */
	const struct jc_probe_cmd *doctor_cmds;
	/*
	 * The names of the cmds the cable graph needs (its ports, their peers
	 * and interfaces), NULL-terminated: a plain --dot runs only these, and
	 * the facts of the others stay unknown. NULL: it needs them all.
	 */
	const char *const *cabling_cmds;
	/*
	 * The names of the cmds whose answers change while the host runs
	 * (cables and their peers, carriers, addresses, RDMA port states),
	 * NULL-terminated: after its first look watch asks only these and
	 * keeps the first look's answers to the others (the model, the
	 * system's version, the port map). NULL: all of them.
	 */
	const char *const *watch_cmds;
	/*
	 * Fill h (whose name/target are already set) from raw. A missing output
	 * leaves what depends on it unknown and adds a note; never fails for
	 * that. Returns a negative value with err filled only when an output
	 * that is present cannot be understood at all (garbage).
	 */
	int (*parse)(struct jc_host *h, const struct jc_raw *raw, struct jc_err *err);
	/*
	 * Append to ph->cmds the setup of ph (addresses set) on host h (its
	 * inventory), in mlx's order: see plan.h for the exact commands.
	 */
	void (*setup)(struct plan_host *ph, const struct jc_host *h);
	/*
	 * Append to ph->cmds the persistent configuration of ph's addresses
	 * (after setup's commands, which set them at once), so that they
	 * survive a reboot; NULL when the system has none. Returns 0, or a
	 * negative value with err filled when h lacks what it needs (e.g. the
	 * hardware port of a cable interface). The facts it changes are a
	 * PLAN_FACT_SERVICES fact, which restore compares: the services it
	 * created go, the ones it changed come back.
	 */
	int (*persist)(struct plan_host *ph, const struct jc_host *h, struct jc_err *err);
	/*
	 * Whether w is a word of the persistent configuration that persist()
	 * wrote into ph->cmds as files: the path of our file for one of ph's
	 * cable interfaces, or exactly the content planned for it. NULL for a
	 * system whose persistent configuration has no files (macOS).
	 */
	bool (*persist_word)(const struct plan_host *ph, const char *w);
	/*
	 * The command (argv words, "sudo" first, pushed to argv) for act.
	 * Returns 0, or -ENOTSUP when the system has no such change.
	 */
	int (*command)(enum jc_act act, const struct jc_act_arg *a, struct jc_strv *argv);
	/*
	 * The read-only queries of a fact (kind: enum plan_fact_kind), as
	 * command lines of plain words: *q1 always, *q2 NULL or a second one
	 * (Linux: the link flags of an interface). New strings.
	 */
	void (*queries)(int kind, const char *iface, const char *peer, char **q1, char **q2);
	/* What the outputs of a fact's queries say, into st (cleared first). */
	void (*fact_parse)(const struct jc_fact_out *fo, struct jc_fact_state *st);
	/*
	 * The absolute path of a program command() runs under sudo (its
	 * argv[1]: "ifconfig" -> "/sbin/ifconfig"), the path a sudoers rule
	 * names; NULL for another name.
	 */
	const char *(*priv_path)(const char *name);
	/*
	 * Optional: a fact's prior state from the probe's own outputs (raw),
	 * as its queries would have printed it (*out, new string, and
	 * *status; *lout and *lstatus for a second query, left alone when the
	 * system has none), so that a setup need not ask again. False when
	 * raw does not tell (the fact is queried then).
	 */
	bool (*prior)(const struct jc_raw *raw, int kind, const char *iface, const char *peer,
	    int *status, char **out, int *lstatus, char **lout);
};

extern const struct jc_platform_ops jc_platform_macos;
extern const struct jc_platform_ops jc_platform_linux;

/*
 * The backend for a host's outputs: by "uname.txt" when it names a system
 * (NULL for one no backend knows), else by which files exist
 * (system_profiler, networksetup, sw_vers, rdma_ctl, then ibv_* or ifconfig
 * mean macOS; ip-* or os-release mean Linux). NULL if nothing tells.
 */
const struct jc_platform_ops *platform_for_raw(const struct jc_raw *raw);

/* The backend named "macos" / "linux", or NULL. */
const struct jc_platform_ops *platform_by_name(const char *name);

/* The backend of a probed host (by h->os), or NULL when its system is unknown. */
const struct jc_platform_ops *platform_of(const struct jc_host *h);

/*
 * The backend a setup uses for h: platform_of(h), or macOS when the system
 * is unknown (as mlx, which only configures Macs).
 */
const struct jc_platform_ops *platform_for_setup(const struct jc_host *h);

/* The backend named name, or the one platform_for_setup() falls back to. */
const struct jc_platform_ops *platform_by_name_or_default(const char *name);

/* platform_of(h)->caps, 0 for an unknown system. */
unsigned platform_caps(const struct jc_host *h);

/* A display name for os: "macOS", "Linux", "unknown OS". Static string. */
const char *platform_os_display(enum jc_os os);

/* Append a note (printf-style) to h->notes; used by the backends. */
void platform_note(struct jc_host *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * The probe's sudo file: what sudo allows without a password. The
 * command is SUDO_PROBE_CMD (parse_sudo.h); bundles made before it hold
 * the answer of `sudo -n true` under the same name, read as before.
 */
#define PLATFORM_SUDO_FILE "sudo-n-true.txt"

/* h->sudo, sudo_mode and sudo_list from raw's sudo file (a note when missing). */
void platform_sudo(struct jc_host *h, const struct jc_raw *raw);

/* Note each of notes on h as "FILE: note", then free notes. */
void platform_notes_from(struct jc_host *h, const char *file, struct jc_strv *notes);

/* Append the words that follow to argv, up to a NULL. */
void platform_argv(struct jc_strv *argv, ...) __attribute__((sentinel));

/* Largest raw output a backend accepts (bytes); a larger one is an error. */
#define PLATFORM_MAX_OUTPUT (8u * 1024 * 1024)

#endif
