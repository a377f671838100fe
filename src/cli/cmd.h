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
int cmd_sync(struct jc_opts *o);		/* cmd_sync.c */
int cmd_sync_rank(struct jc_opts *o);
int cmd_completion(struct jc_opts *o);	/* completion.c */

/* The reports of verify-rank's rank 0 and of verify, for people (verify_report.c). */
void rt_verify_print(FILE *fp, json_t *report);
void verify_print(FILE *fp, json_t *report);

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

/* The options of the setup and of restore, with event as its printer. */
struct apply_opts;
struct apply_event;
struct apply_opts cli_apply_opts(const struct jc_opts *o,
    void (*event)(void *arg, const struct apply_event *ev));

/* tr_global_init(), with the message on failure: 0 or JC_EXIT_FAIL. */
int cli_tr_init(void);

/* 0 when --ssh-config is not given, or readable, or unused (--from); else JC_EXIT_FAIL. */
int cli_ssh_config_ok(const struct jc_opts *o);

/* SIGINT, SIGTERM and SIGHUP set cli_interrupted (the signal) instead of killing. */
extern volatile sig_atomic_t cli_interrupted;
void cli_catch_interrupts(void);

#endif
