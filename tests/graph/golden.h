/* SPDX-License-Identifier: MIT */
/*
 * Golden files of the graph tests, under $top_srcdir/tests/graph/golden/.
 * With JC_REGEN_GOLDEN=1 in the environment a mismatching file is written
 * instead of compared (then review the diff before committing it).
 */
#ifndef JC_TEST_GOLDEN_H
#define JC_TEST_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static char *
golden_path(const char *name)
{
	const char *top = getenv("top_srcdir");

	return xasprintf("%s/tests/graph/golden/%s", top ? top : "..", name);
}

/* Compare text with the golden file name; TAP ok line. */
static int
golden_is(const char *text, const char *name)
{
	char *path = golden_path(name), *want = NULL;
	struct jc_err err = { 0 };
	size_t len = 0;
	int same;

	if (jc_read_file(path, 1 << 20, &want, &len, &err) != 0)
		want = NULL;
	same = want != NULL && strcmp(want, text) == 0;
	if (!same && getenv("JC_REGEN_GOLDEN") != NULL) {
		FILE *f = fopen(path, "w");

		if (f != NULL) {
			fputs(text, f);
			fclose(f);
		}
	}
	ok(same, "golden %s", name);
	if (!same)
		printf("# got:\n%s\n# want:\n%s\n", text, want ? want : "(missing)");
	free(want);
	free(path);
	return same;
}

/* Run fn(fp, arg) into a string. */
static char *
capture(void (*fn)(FILE *, const void *), const void *arg)
{
	char *s = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&s, &n);

	fn(fp, arg);
	fclose(fp);
	return s;
}

#endif
