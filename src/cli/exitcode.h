/* SPDX-License-Identifier: MIT */
/*
 * The exit statuses of the program (the JC_EXIT_* of jc.h) with their
 * stable --json codes and what each means: one table, read by the JSON
 * error documents of output.c and by --help's exit statuses in cli.c.
 */
#ifndef JC_EXITCODE_H
#define JC_EXITCODE_H

#include <stddef.h>

/* One exit status: its number, its stable --json code, what it means. */
struct jc_exit {
	int status;
	const char *code;
	const char *help;
};
extern const struct jc_exit jc_exits[];
extern const size_t jc_nexits;

/* The --json code of an exit status ("failed" for one not in the table). */
const char *cli_exit_code(int status);

#endif
