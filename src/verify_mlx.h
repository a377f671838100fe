/* SPDX-License-Identifier: MIT */
/*
 * verify --mlx: MLX's own collectives on every host, beside the runtime's.
 * The program data/mlx/verify-mlx.py (built into the binary as
 * verify_mlx_program) is sent with the command line through the launcher,
 * run by the first Python of each host that imports mlx: first "check" on
 * every host (which Python, which mlx, or why none), then, when every host
 * has mlx, "run" with the hostfile's backend: all_sum and all_gather on
 * data every rank checks, timed. A program named by the caller (a build of
 * the same collectives on MLX's JACCL, for machines without Python's mlx)
 * can run instead; it takes the same arguments and prints the same lines.
 * The result is the report's "mlx" section: every host's Python and mlx,
 * each operation's result on every rank, its bus bandwidth and the
 * runtime's at the same size.
 */
#ifndef JC_VERIFY_MLX_H
#define JC_VERIFY_MLX_H

#include <jansson.h>

#include "jc.h"
#include "verify_launcher.h"

/* data/mlx/verify-mlx.py */
extern const char verify_mlx_program[];

/* What every line of the program starts with. */
#define VERIFY_MLX_TAG "jaccl-verify-mlx"

/* The interpreters tried, in order, when no Python is named. */
#define VERIFY_MLX_PYTHONS "/opt/homebrew/bin/python3 /usr/local/bin/python3 python3"

struct verify_mlx_opts {
	const char *program;	/* run instead of the Python program; NULL: Python */
	const char *python;	/* the interpreter; NULL: VERIFY_MLX_PYTHONS */
	size_t sum_bytes;	/* all_sum size (a multiple of 4) */
	size_t gather_bytes;	/* all_gather block per rank (a multiple of 4) */
	long iters;		/* timed calls of each */
};

/*
 * The command line a host runs for "check" or "run ARGS" (args, nargs):
 * the program itself, or /bin/sh -c with the script that finds the Python
 * and runs verify_mlx_program in it.
 */
void verify_mlx_argv(const struct verify_mlx_opts *m, const char *const *args, size_t nargs,
    struct jc_strv *argv);

/*
 * The sizes and iterations of m from the runtime's report: its largest
 * float all-reduce row and largest all-gather block (1 MiB and 256 KiB
 * without them), about a quarter second of calls at the runtime's pace
 * (1 to 20).
 */
void verify_mlx_sizes(const json_t *rep, struct verify_mlx_opts *m);

/*
 * One line of the program's standard output: when it starts with
 * VERIFY_MLX_TAG, *out gets an object of its words ("kind" for a word
 * without '=', each KEY=VALUE as a string, "why" the rest of the line) and
 * 0 is returned; else -EINVAL and *out NULL. Pure.
 */
int verify_mlx_parse(const char *line, size_t len, json_t **out);

/*
 * Run MLX's collectives on the hosts of hf (launcher options as in o)
 * after the runtime's report rep: rep gets the "mlx" section, its failures
 * in "failures" (each starting "mlx: ") and "ok" false with any. Returns
 * 0, or a negative value with err filled when nothing could be started.
 */
int verify_mlx_run(const struct jc_hostfile *hf, const struct verify_opts *o,
    const struct verify_mlx_opts *m, json_t *rep, struct jc_err *err);

#endif
