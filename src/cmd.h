/* SPDX-License-Identifier: MIT */
/* Entry points of the subcommands; each lives in its own src/cmd_*.c. */
#ifndef JC_CMD_H
#define JC_CMD_H

#include "cli.h"

struct hostfile_diags;

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
int cmd_completion(struct jc_opts *o);	/* src/cli/completion.c */

#endif
