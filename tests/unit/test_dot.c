/* SPDX-License-Identifier: MIT */
/* DOT output: mlx's exact text, cgraph read-back, the extended form. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "../graph/appendix.h"
#include "../graph/golden.h"
#include "dot.h"

static char *
dot_text(const struct graph *g, unsigned flags)
{
	struct jc_err err = { 0 };
	char *s = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&s, &n);

	if (dot_write(fp, g, flags, &err) != 0)
		diag("dot_write: %s", err.msg);
	fclose(fp);
	return s;
}

static void
test_appendix(void)
{
	struct jc_host *h = appendix_a();
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	size_t nn = 0, ne = 0;
	char *t;

	graph_build(h, 3, &g, &err);
	t = dot_text(g, 0);
	is_str(t, "graph G {\n"
	    "  node [shape=rectangle];\n"
	    "  a [label=\"A\"];\n"
	    "  b [label=\"B\"];\n"
	    "  c [label=\"C\"];\n"
	    "  a -- b [label=\"en2/en2\"]\n"
	    "  a -- c [label=\"en3/en2\"]\n"
	    "  b -- c [label=\"en3/en3\"]\n"
	    "}\n", "appendix A: mlx's DOT text");
	golden_is(t, "appendix-a.dot");
	ok(dot_check(t, &nn, &ne, &err) == 0 && nn == 3 && ne == 3, "cgraph reads 3 nodes, 3 edges");
	free(t);
	graph_free(g);
	inv_free(h, 3);
}

static void
test_parallel_and_ids(void)
{
	struct jc_host *h = inv_new(28, NULL);
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	size_t nn = 0, ne = 0;
	char *t;

	inv_cable(&h[0], "en2", &h[1], "en2", 80);
	inv_cable(&h[0], "en3", &h[1], "en3", 80);
	inv_cable(&h[26], "en2", &h[27], "en2", 80);
	graph_build(h, 28, &g, &err);
	t = dot_text(g, 0);
	ok(strstr(t, "  a -- b [label=\"en2/en2\"]\n  a -- b [label=\"en3/en3\"]\n") != NULL,
	    "two cables: two parallel edges, in port order");
	ok(strstr(t, "  ab [label=\"mac27\"];\n  bb [label=\"mac28\"];\n") != NULL,
	    "hosts 27 and 28 are ab and bb");
	ok(strstr(t, "  ab -- bb [label=\"en2/en2\"]\n}\n") != NULL, "their edge");
	ok(dot_check(t, &nn, &ne, &err) == 0 && nn == 28 && ne == 3, "cgraph: 28 nodes, 3 edges");
	free(t);
	graph_free(g);
	inv_free(h, 28);
}

static void
test_extended(void)
{
	size_t n, nn = 0, ne = 0;
	struct jc_host *h = inv_rich(&n);
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	char *t;

	graph_build(h, n, &g, &err);
	t = dot_text(g, 0);
	ok(dot_check(t, &nn, &ne, &err) == 0 && nn == 4 && ne == 6, "rich: compatible text, 6 cables");
	ok(strstr(t, "style") == NULL && strstr(t, "color") == NULL, "no extra attribute by default");
	free(t);
	t = dot_text(g, DOT_EXTENDED);
	ok(dot_check(t, &nn, &ne, &err) == 0, "extended text parses");
	is_int((long long)nn, 5, "extended: 4 hosts and the unlisted peer");
	is_int((long long)ne, 9, "extended: 6 cables, 1 missing link, 2 strays");
	ok(strstr(t, "80 Gb/s") && strstr(t, "40 Gb/s"), "link rates shown");
	ok(strstr(t, "via dock") != NULL, "dock shown");
	ok(strstr(t, "dashed") != NULL, "cables RDMA cannot use are dashed");
	ok(strstr(t, "missing") && strstr(t, "red") && strstr(t, "dotted"), "missing mesh link");
	ok(strstr(t, "blue") != NULL, "second rail coloured");
	ok(strstr(t, "one-sided") != NULL && strstr(t, "not listed") != NULL, "strays shown");
	free(t);
	graph_free(g);
	inv_free(h, n);

	/*
	 * A cable without an interface at either end: mlx draws nothing (its
	 * iface_map lookup raises KeyError); one edge here, with the reason,
	 * in both forms, and no "missing" link for the pair under -v.
	 */
	h = inv_new(3, NULL);
	inv_cable(&h[0], "en2", &h[1], "en2", 80);
	inv_cable(&h[1], "en3", &h[2], "en3", 80);
	free(h[1].ports[1].receptacle);
	h[1].ports[1].receptacle = xstrdup("2");
	free(h[2].ports[0].receptacle);
	h[2].ports[0].receptacle = xstrdup("2");
	for (int e = 0; e < 2; e++) {
		free(h[1 + e].ports[e == 0 ? 1 : 0].iface);
		h[1 + e].ports[e == 0 ? 1 : 0].iface = NULL;
	}
	graph_build(h, 3, &g, &err);
	t = dot_text(g, 0);
	is_str(t, "graph G {\n  node [shape=rectangle];\n  a [label=\"mac1\"];\n"
	    "  b [label=\"mac2\"];\n  c [label=\"mac3\"];\n  a -- b [label=\"en2/en2\"]\n"
	    "  b -- c [label=\"?/?\\nno interface at mac2 Thunderbolt 2 and mac3 Thunderbolt 2\"]\n}\n",
	    "no interface: mlx's edges, then one edge for the cable with the reason");
	ok(dot_check(t, &nn, &ne, &err) == 0 && ne == 2, "cgraph: 2 edges");
	free(t);
	t = dot_text(g, DOT_EXTENDED);
	ok(dot_check(t, &nn, &ne, &err) == 0 && ne == 3, "extended: 2 cables and 1 missing link (a-c)");
	ok(strstr(t, "?/?\\nno interface at mac2 Thunderbolt 2 and mac3 Thunderbolt 2\\n80 Gb/s") &&
	    strstr(t, "b -- c") && !strstr(t, "c -- b"), "extended: the cable once, with its rate");
	ok(strstr(t, "a -- c") != NULL && strstr(t, "b -- c\t[color=red") == NULL,
	    "extended: a-c is missing, b-c is not");
	free(t);
	graph_free(g);
	inv_free(h, 3);

	ok(dot_check("graph G { a -- ", &nn, &ne, &err) < 0, "broken DOT is reported");
	ok(strncmp(err.msg, "DOT text does not parse", 23) == 0, "with a message");
}

int
main(void)
{
	(void)plan;
	(void)skip_all;
	(void)capture;
	test_appendix();
	test_parallel_and_ids();
	test_extended();
	return done_testing();
}
