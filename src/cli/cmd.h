/* SPDX-License-Identifier: MIT */
/* Entry points of the subcommands; each lives in its own src/cli/cmd_*.c. */
#ifndef JC_CMD_H
#define JC_CMD_H

#include <jansson.h>
#include <signal.h>
#include <stdio.h>

#include "cli.h"
#include "transport.h"

struct hostfile_diags;
struct jc_hostfile;
struct jc_host;

int cmd_configure(struct jc_opts *o);
int cmd_check(struct jc_opts *o);
int cmd_probe(struct jc_opts *o);
int cmd_verify(struct jc_opts *o);
int cmd_verify_rank(struct jc_opts *o);

/*
 * The verification of an already loaded hostfile (d: its reader's
 * diagnostics, or NULL for one built in memory; label names it in
 * messages). Prints the report; returns the exit status. Used by verify
 * and by configure --verify.
 */
int cmd_verify_hostfile(struct jc_opts *o, const struct jc_hostfile *hf,
    const struct hostfile_diags *d, const char *label);
int cmd_launch(struct jc_opts *o);
int cmd_restore(struct jc_opts *o);
int cmd_doctor(struct jc_opts *o);
int cmd_watch(struct jc_opts *o);
int cmd_sudoers(struct jc_opts *o);	/* cmd_configure.c */
int cmd_sync(struct jc_opts *o);		/* cmd_sync.c */
int cmd_sync_rank(struct jc_opts *o);
int cmd_completion(struct jc_opts *o);	/* completion.c */

/* The reports of verify-rank's rank 0 and of verify, for people (verify_report.c). */
void rt_verify_print(FILE *fp, json_t *report);
void verify_print(FILE *fp, json_t *report);

/*
 * When report's ranks could not reach rank 0's coordinator port (a rank
 * that ran says the coordinator "did not accept within" its bound),
 * the hint that names what the application firewall of rank 0's host must
 * let through: the jaccl-config there, at bin when bin is an absolute
 * path, else as that host's shell finds it (socketfilterfw --add and
 * --unblockapp). *host gets rank 0's host (borrowed from report). Returns
 * a new string, or NULL when the report shows no such failure.
 */
char *verify_firewall_hint(json_t *report, const char *bin, const char **host);

/* ---- shared by several commands (cmd_common.c) ---- */

/* The hosts a command works on. */
struct cli_hosts {
	struct jc_hostfile *hf;	/* --hostfile as read, or NULL */
	struct jc_host *v;
	size_t n;
};

enum {
	CLI_HOSTS_ONLY_GIVEN = 1 << 0,	/* no --hosts: no host (not 127.0.0.1) */
};

/*
 * Fill h from --hostfile (mlx's reading and messages), else from the
 * bundle of --from unless --hosts is given, else from --hosts. Returns 0,
 * or the exit status after printing the error (a usage error for a bad
 * --hostfile or --hosts, as mlx.distributed_config). Release with
 * cli_hosts_clear() in every case.
 */
int cli_hosts_load(struct jc_opts *o, unsigned flags, struct cli_hosts *h);
void cli_hosts_clear(struct cli_hosts *h);

/* Leave out the hosts that were not reached, with a warning each. */
void cli_hosts_drop_unreachable(struct cli_hosts *h);

/*
 * After discovery, as mlx.distributed_config: hosts that could not be
 * reached fail the command with their list and mlx's hint, unless
 * --ignore-unreachable leaves them out; then none_left is the error when
 * no host remains. Returns 0 or JC_EXIT_FAIL.
 */
int cli_hosts_check(struct jc_opts *o, struct cli_hosts *h, const char *none_left);

/* The error of each host that was reached but not probed; JC_EXIT_FAIL if any. */
int cli_hosts_errors(const struct cli_hosts *h);

/*
 * --save DIR: the raw outputs of the hosts that answered (raws[i].n > 0)
 * as a bundle, said on standard error. 0, or JC_EXIT_FAIL after the error.
 */
int cli_save_bundle(const char *dir, const struct jc_raw *raws, size_t n);

/* The transport options of the command line. */
struct tr_opts cli_tr_opts(const struct jc_opts *o);

/*
 * jaccl-config on the hosts as the user named it: --remote-bin, else
 * JACCL_CONFIG_REMOTE when set and not empty, else NULL (the places of
 * launch_bin_candidates()). Borrowed.
 */
const char *cli_remote_bin(const struct jc_opts *o);

/*
 * The --env entries of o after the variables this process passes through
 * to every rank: JACCL_PROGRESS_TIMEOUT_S and MLX_JACCL_PROGRESS_TIMEOUT_S
 * (JACCL's bound, in seconds, on waiting for a peer's progress; 0 is off)
 * when set here to a whole number (else warned about and left out), so
 * that --env still wins. Fills out (release with strv_free()).
 */
void cli_rank_envs(const struct jc_opts *o, struct jc_strv *out);

/* The options of the setup and of restore, with event as its printer. */
struct apply_opts;
struct apply_event;
struct apply_opts cli_apply_opts(const struct jc_opts *o,
    void (*event)(void *arg, const struct apply_event *ev));

/* tr_global_init(), with the message on failure: 0 or JC_EXIT_FAIL. */
int cli_tr_init(void);

/* 0 when --ssh-config is not given, or readable, or unused (--from); else JC_EXIT_FAIL. */
int cli_ssh_config_ok(const struct jc_opts *o);

/*
 * 0 when --python is not given or is a word a remote shell takes as it is
 * (jc_plain_word: an absolute path or a command name); else the usage
 * error's exit status, the message said.
 */
int cli_python_ok(struct jc_opts *o);

/* SIGINT, SIGTERM and SIGHUP set cli_interrupted (the signal) instead of killing. */
extern volatile sig_atomic_t cli_interrupted;
void cli_catch_interrupts(void);

#endif
