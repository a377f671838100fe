/* SPDX-License-Identifier: MIT */
/*
 * Discovery: probe every host at once (one thread per host, at most
 * PROBE_MAX_THREADS at a time), each in one round trip: connect over SSH and
 * run one /bin/sh script that runs `uname -sn` (the system, framed as
 * uname.txt, and the host name, for a backend's "uname -n" command) and then
 * every other command of that system's platform backend at once (one after
 * the other when the host has no writable temporary folder; else one cat
 * prints all their outputs: no other program runs), each output framed by
 * markers carrying a random per-run token (sent on the script's standard
 * input, so it never appears in a command line) and its exit status. The outputs become a
 * struct jc_raw, the raw a struct jc_host. A saved bundle replays instead.
 * Per-host failures are recorded in the host and never stop the others.
 * The script reaches /bin/sh as `exec /bin/sh -c '...'` through the remote
 * login shell, which must therefore quote as sh does (sh, bash, zsh, ksh).
 */
#ifndef JC_PROBE_H
#define JC_PROBE_H

#include "platform.h"
#include "transport.h"
#include "util.h"

#define PROBE_MAX_THREADS 64

/* Where a host's probe stands (for progress display). */
enum probe_state {
	PROBE_WAITING,
	PROBE_CONNECTING,
	PROBE_RUNNING,		/* the script runs */
	PROBE_DONE,
	PROBE_FAILED,		/* reached, but its outputs are unusable */
	PROBE_UNREACHABLE,	/* connect, host key or authentication failed */
};

/* Name of a state for display: "connecting", "probing", ... */
const char *probe_state_name(enum probe_state st);

struct probe_opts {
	struct tr_opts tr;
	double command_timeout;	/* per remote command, seconds (<= 0: 60) */
	size_t cap;		/* bound on a host's output (0: TR_DEFAULT_CAP) */
	const char *from;	/* replay this bundle instead of SSH */
	/* add the backends' doctor_cmds to the script (the doctor only) */
	bool doctor;
	/*
	 * leave out the passwordless sudo check (sudo -n true) for a caller
	 * that neither sets up nor reports sudo: each host's sudo is unknown
	 */
	bool no_sudo_check;
	/*
	 * only what the cable graph needs (a plain --dot: each backend's
	 * cabling_cmds); the facts of the others stay unknown
	 */
	bool cabling_only;
	/*
	 * also ask what other tools manage the network (a persistent setup
	 * refuses beside them); the doctor always does
	 */
	bool managers;
	/*
	 * the doctor: the Python the jobs run (--python; a jc_plain_word),
	 * asked instead of JC_PYTHON_DEFAULT's; NULL: those
	 */
	const char *python;
	/* how hosts are reached; NULL: transport_default(&tr, from) */
	struct jc_transport *transport;
	/*
	 * Optional callbacks, called from the probing threads but never two at
	 * a time (the probe serialises them). progress: a host changed state
	 * (i indexes hosts). log: one remote command of a host finished, with
	 * its exit status and how long it took (seconds measured from the
	 * arrival of its first to its last marker).
	 */
	void (*progress)(void *arg, size_t i, enum probe_state st);
	void (*log)(void *arg, size_t i, const char *command, int status, double seconds);
	void *arg;
	/*
	 * Optional, n entries: the session of each host whose script ran is
	 * kept in keep[i] instead of being closed (for a setup that follows:
	 * apply_opts.conns). The caller closes them (tp_close) before it frees
	 * the transport, which it must then give (transport).
	 */
	struct jc_conn **keep;
};

/*
 * Probe hosts[0..n) (name, target, user, port set, as hosts_from_list()
 * makes them). Fills each host's inventory fields, reachable and error
 * (NULL when the host was probed and parsed). raws, when not NULL, is an
 * array of n zeroed struct jc_raw that receives every host's raw outputs
 * (raws[i].host set; empty when the host was not reached), to be freed with
 * raw_clear(). Returns the number of hosts with an error (0: all fine).
 */
size_t probe_hosts(struct jc_host *hosts, size_t n, const struct probe_opts *o,
    struct jc_raw *raws);

/*
 * Parse one host's raw outputs into h (whose name is set): picks the
 * platform backend and runs its parser. Returns 0, or negative with err
 * filled ("unsupported system ...", or the backend's parse error).
 */
int probe_parse_raw(struct jc_host *h, const struct jc_raw *raw, struct jc_err *err);

/*
 * The remote script: reads the token from its standard input, prints the
 * framed outputs of uname -sn and of the commands of every known platform
 * (chosen by uname -s at run time), preceded by a "TOKEN D NAME" line as
 * each command ends when they run at once. command_timeout bounds the
 * commands (each still running after that many seconds is killed with its
 * children by SIGTERM: status 143). Returns a new string.
 */
char *probe_script(double command_timeout);

/* The same, with each backend's doctor_cmds after its cmds when doctor. */
char *probe_script_for(double command_timeout, bool doctor);

/* What a probe script leaves out (probe_script_opts). */
enum {
	/* the passwordless sudo check (sudo -n true, the output
	 * sudo-n-true.txt): the host's sudo is then left unknown */
	PROBE_NO_SUDO = 1u << 0,
	/* the commands the cable graph does without (jc_platform_ops.cabling_cmds) */
	PROBE_CABLING_ONLY = 1u << 1,
	/* the commands whose answers do not change while the host runs
	 * (those not in jc_platform_ops.watch_cmds: model, version, ...) */
	PROBE_CHANGING_ONLY = 1u << 2,
	/* uname -sn itself: its exit status and its answer come on the
	 * second and third lines of the standard input, after the token */
	PROBE_UNAME_GIVEN = 1u << 3,
	/* the other network managers (MGR_FILE: a Mac's LaunchDaemons of
	 * known tools, its network location), which only the doctor and a
	 * persistent setup need */
	PROBE_NO_MANAGERS = 1u << 4,
};

/* The same, without what leave_out (PROBE_* flags) names. */
char *probe_script_opts(double command_timeout, bool doctor, unsigned leave_out);

/*
 * The same, the doctor's Python command asking python (a jc_plain_word;
 * else, or NULL, the default candidates: SW_PYTHON_SH).
 */
char *probe_script_python(double command_timeout, bool doctor, unsigned leave_out,
    const char *python);

/*
 * Split a script's standard output (framed with token) into raw, one
 * output per frame with its exit status; bytes outside frames (a login
 * shell's chatter) are skipped. ends, when not NULL, receives for the
 * first nends frames the offset just past each frame's end marker (for
 * timing). Returns the number of frames, or negative with err filled when
 * the framing is broken (a frame without its end, a bad name or status).
 */
int probe_split(const char *token, const char *out, size_t len, struct jc_raw *raw,
    size_t *ends, size_t nends, struct jc_err *err);

/*
 * Hosts of a bundle as struct jc_host (name and target set), for --from
 * without --hosts. Returns 0 with *out and *n set (free with hosts_free()), or
 * negative with err filled.
 */
int probe_bundle_hosts(const char *dir, struct jc_host **out, size_t *n, struct jc_err *err);

#endif
