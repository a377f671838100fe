/* SPDX-License-Identifier: MIT */
/*
 * Test helper: print the DOT text of a synthetic cabling ("appendix" or
 * "rich", see inv.h), extended with -v, for the rendering test.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "appendix.h"
#include "dot.h"

int
main(int argc, char **argv)
{
	struct jc_host *h;
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	size_t n = 3;
	unsigned flags = 0;
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: dot_sample appendix|rich [-v]\n");
		return 2;
	}
	if (argc > 2 && strcmp(argv[2], "-v") == 0)
		flags |= DOT_EXTENDED;
	h = strcmp(argv[1], "rich") == 0 ? inv_rich(&n) : appendix_a();
	r = graph_build(h, n, &g, &err);
	if (r == 0)
		r = dot_write(stdout, g, flags, &err);
	if (r != 0)
		fprintf(stderr, "dot_sample: %s\n", err.msg);
	graph_free(g);
	inv_free(h, n);
	return r == 0 ? 0 : 1;
}
