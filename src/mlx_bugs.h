/* SPDX-License-Identifier: MIT */
/*
 * The known MLX bugs that a cluster's setup can run into, as data
 * (data/mlx-bugs.json, installed in the package's data folder and built
 * into the binary): each entry is a range of MLX versions, the backend it
 * hits, what goes wrong, the issue and the release that has the fix. A new
 * bug is a new entry of the file (and a test); no code changes.
 *
 * The file: {"version": 1, "bugs": [{"issue", "backend", "first", "last",
 * "fixed_in", "symptom"}]}, every member a non-empty string; "first" and
 * "last" bound the affected versions (both included), "fixed_in" is the
 * release to install.
 */
#ifndef JC_MLX_BUGS_H
#define JC_MLX_BUGS_H

#include <stddef.h>

#include "jc.h"

struct mlx_bug {
	char *issue;		/* "ml-explore/mlx#4443" */
	char *backend;		/* "jaccl-ring", "jaccl", "ring" */
	char *first, *last;	/* the affected versions, both included */
	char *fixed_in;		/* the release to install */
	char *symptom;
};

struct mlx_bugs {
	struct mlx_bug *v;
	size_t n;
};

/* The text of data/mlx-bugs.json as built into the binary. */
extern const char mlx_bugs_text[];

/*
 * Parse len bytes of text, named name in errors, into *out (zeroed first;
 * release with mlx_bugs_free()). Every entry is checked: each member
 * present, a string, and the versions numbers with first <= last <
 * fixed_in. Returns 0, or -EINVAL with err naming the entry and member.
 */
int mlx_bugs_parse(const char *text, size_t len, const char *name, struct mlx_bugs *out,
    struct jc_err *err);

/* The built-in table, parsed once (NULL with err set if it does not parse). */
const struct mlx_bugs *mlx_bugs_builtin(struct jc_err *err);

void mlx_bugs_free(struct mlx_bugs *b);

/*
 * Compare two MLX versions as pip orders them, for the forms MLX releases
 * and builds carry: numbers separated by dots ("0.32.1"), then optionally
 * a pre-release or dev part ("rc1", ".dev20260822", before the release
 * itself), a ".postN" (after it) and a local part ("+846d176", ignored).
 * Returns <0, 0 or >0; *ok (when not NULL) is false if either is not such
 * a version (they are then compared as strings).
 */
int mlx_version_cmp(const char *a, const char *b, bool *ok);

/* True when version lies in bug's range (an unreadable version never does). */
bool mlx_bug_affects(const struct mlx_bug *bug, const char *version);

#endif
