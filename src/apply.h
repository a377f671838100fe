/* SPDX-License-Identifier: MIT */
/*
 * Applying a plan to the hosts over SSH, with rollback, and restoring the
 * state saved before the last setup. Every host is handled by its own
 * thread. A setup first captures, on every host, the state of everything
 * the plan will change (the plan's facts, through their read-only query
 * commands) and saves it in the state directory (one JSON file per host and
 * "last-setup.json", each written atomically); only then does any host run
 * its setup commands, in order, with `sudo -n` (never a prompt). When the
 * transport has a dialog op (ssh), each host's capture and setup are one
 * remote script (setup_script.h) on one channel: the queries, then, once
 * every host's state is saved, one `sudo -n /bin/sh -c` running the
 * commands, each on a "go" from here, its status and stderr framed by a
 * per-run token; otherwise each query and command is its own exec. When a
 * command that may not fail fails on any host, every host stops before its
 * next command and every host that ran something is put back to the saved
 * state. Restoring compares the current state with the saved one and runs
 * only the commands that undo the difference, then checks again (one exec
 * per command).
 * Nothing here prints: progress goes to a callback.
 */
#ifndef JC_APPLY_H
#define JC_APPLY_H

#include "plan.h"
#include "transport.h"

enum apply_ev_kind {
	APPLY_EV_RUN,		/* a setup command is about to run */
	APPLY_EV_IGNORED,	/* a may_fail command failed (status, stderr) */
	APPLY_EV_FAILED,	/* a command failed: the setup stops */
	APPLY_EV_UNDO,		/* a restore command is about to run */
};

struct apply_event {
	enum apply_ev_kind kind;
	const char *host;	/* name of the host */
	const char *command;	/* the command line as run */
	int status;		/* IGNORED / FAILED: exit status */
	const char *stderr_text;	/* IGNORED / FAILED: its standard error */
};

struct apply_opts {
	struct tr_opts tr;
	struct jc_transport *transport;	/* NULL: ssh with tr */
	double command_timeout;	/* per command, seconds (<= 0: 60) */
	const char *state_dir;	/* NULL: $HOME/.cache/jaccl-config */
	/* Called from the host threads, never two at a time. May be NULL. */
	void (*event)(void *arg, const struct apply_event *ev);
	void *arg;
	/*
	 * Optional: sessions already open (the probe's, probe_opts.keep), to
	 * use instead of connecting again: a host takes the one whose name is
	 * its own, sets the entry to NULL and closes it when done. NULL
	 * entries are skipped.
	 */
	struct jc_conn **conns;
	size_t nconns;
	/*
	 * Optional: the probe's raw outputs of the hosts (by host name), from
	 * which a setup takes the prior state its system can read there
	 * (jc_platform_ops.prior) instead of asking each host again.
	 */
	const struct jc_raw *raws;
	size_t nraws;
};

enum apply_host_status {
	APPLY_HOST_PENDING = 0,	/* did not run anything */
	APPLY_HOST_UNCHANGED,	/* plan already applied: nothing to do */
	APPLY_HOST_DONE,	/* every command ran */
	APPLY_HOST_FAILED,	/* a command failed on this host */
	APPLY_HOST_ROLLED_BACK,	/* ran commands, then was put back */
	APPLY_HOST_ROLLBACK_FAILED,	/* could not be put back (see error) */
	APPLY_HOST_ERROR,	/* unreachable, or its state could not be read/saved */
};

struct apply_host_result {
	const char *name;	/* borrowed from the inventory */
	enum apply_host_status status;
	size_t ran;		/* setup commands run */
	bool undone;		/* ran commands, then was put back */
	char *error;		/* what went wrong, or NULL */
};

struct apply_result {
	struct apply_host_result *hosts;	/* one per plan host, host order */
	size_t n;
	bool changed;		/* some host ran a command (and kept it) */
};

/*
 * Apply p (built from g, whose hosts are the inventory) to every host.
 * Hosts whose plan is applied run nothing (APPLY_HOST_UNCHANGED). Returns
 * 0 when every host ended set up; otherwise a negative value with err
 * filled ("HOST: COMMAND failed (exit N): STDERR" for a failed command,
 * with whether every host was put back). res is filled in every case
 * (release with apply_result_clear()).
 */
int apply_run(const struct plan *p, const struct graph *g, const struct apply_opts *o,
    struct apply_result *res, struct jc_err *err);

void apply_result_clear(struct apply_result *res);

/* The state directory of o (o->state_dir or the default). New string. */
char *apply_state_dir(const struct apply_opts *o);

/* One host's outcome of apply_restore(). */
struct apply_restored {
	char *name;
	size_t ran;		/* commands run to restore it */
	char *error;		/* NULL when it is back in its saved state */
};

/*
 * Undo the last setup saved in the state directory: for every saved host
 * (or only those named in only[0..nonly), which must all have been saved),
 * compare its state with the saved one and run what restores it, all hosts
 * in parallel. Returns 0 with *out / *n set (one entry per host handled;
 * *n == 0 with *why set to a static text when there is nothing to restore),
 * or a negative value with err filled when the state cannot be read or a
 * named host has none. Release with apply_restored_free().
 */
int apply_restore(const struct apply_opts *o, const char *const *only, size_t nonly,
    struct apply_restored **out, size_t *n, const char **why, struct jc_err *err);

void apply_restored_free(struct apply_restored *r, size_t n);

/*
 * The restore commands, without a host: parse saved (the text of a host's
 * file in the state directory) and cur (the same format, standing for the
 * host's state now: only its facts' outputs are used) and append to *cmds
 * the commands that take cur back to saved, as restore would run them.
 * Every name is validated as for restore. Returns the number of
 * differences, or a negative value with err filled when either text is not
 * a valid saved state. For the tests and the fuzzer.
 */
int apply_state_diff(const char *saved, size_t slen, const char *cur, size_t clen,
    struct jc_strv *cmds, struct jc_err *err);

#endif
