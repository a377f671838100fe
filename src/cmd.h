/* SPDX-License-Identifier: MIT */
/* Entry points of the subcommands; each lives in its own src/cmd_*.c. */
#ifndef JC_CMD_H
#define JC_CMD_H

#include "cli.h"

int cmd_configure(struct jc_opts *o);
int cmd_check(struct jc_opts *o);
int cmd_probe(struct jc_opts *o);
int cmd_verify(struct jc_opts *o);
int cmd_verify_rank(struct jc_opts *o);
int cmd_launch(struct jc_opts *o);
int cmd_restore(struct jc_opts *o);
int cmd_doctor(struct jc_opts *o);

#endif
