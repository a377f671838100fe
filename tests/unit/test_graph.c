/* SPDX-License-Identifier: MIT */
/* Cable graph, mesh and ring checks, backend choice and their messages. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "../graph/appendix.h"
#include "graph.h"

static int
has(const char *s, const char *needle, const char *name)
{
	int c = s != NULL && strstr(s, needle) != NULL;

	ok(c, "%s", name);
	if (!c)
		diag("'%s' not in '%s'", needle, s ? s : "(null)");
	return c;
}

static void
test_appendix(void)
{
	struct jc_host *h = appendix_a();
	struct graph *g = NULL;
	struct graph_choice c;
	struct jc_err err = { 0 };
	size_t ring[3];
	unsigned w;

	ok(graph_build(h, 3, &g, &err) == 0, "appendix A: graph built");
	is_int((long long)g->ncables, 3, "appendix A: three cables");
	ok(g->cables[0].end[0].host == 0 && strcmp(g->cables[0].end[0].iface, "en2") == 0 &&
	    g->cables[0].end[1].host == 1 && strcmp(g->cables[0].end[1].iface, "en2") == 0,
	    "cable 0 is A.en2-B.en2");
	ok(g->cables[1].end[0].host == 0 && strcmp(g->cables[1].end[0].iface, "en3") == 0 &&
	    g->cables[1].end[1].host == 2 && strcmp(g->cables[1].end[1].iface, "en2") == 0,
	    "cable 1 is A.en3-C.en2");
	ok(g->cables[2].end[0].host == 1 && strcmp(g->cables[2].end[0].iface, "en3") == 0 &&
	    g->cables[2].end[1].host == 2, "cable 2 is B.en3-C.en3");
	ok(g->cables[0].rdma == JC_YES && g->cables[0].link == GRAPH_LINK_TB5,
	    "TB5 cable with active devices can carry RDMA");
	is_str(g->cables[0].end[0].rdma, "rdma_en2", "device name");
	ok(graph_is_mesh(g, false, NULL, NULL) && graph_is_mesh(g, true, NULL, NULL), "a mesh");
	ok(graph_find_ring(g, false, ring, &w) == GRAPH_RING_FOUND &&
	    ring[0] == 0 && ring[1] == 1 && ring[2] == 2 && w == 1, "ring A, B, C, width 1");
	ok(graph_choose(g, NULL, &c, &err) == 0 && c.backend == GRAPH_JACCL, "auto: jaccl");
	is_int((long long)c.warnings.n, 0, "no warning");
	graph_choice_clear(&c);
	ok(graph_choose(g, "jaccl-ring", &c, &err) == 0 && c.backend == GRAPH_JACCL_RING &&
	    c.order[0] == 0 && c.order[1] == 1 && c.order[2] == 2, "forced jaccl-ring: A, B, C");
	graph_choice_clear(&c);
	ok(graph_choose(g, "ring", &c, &err) == 0 && c.backend == GRAPH_RING && !c.rdma,
	    "forced ring");
	graph_choice_clear(&c);
	graph_free(g);
	inv_free(h, 3);
}

static void
test_node_ids(void)
{
	static const size_t idx[] = { 0, 1, 25, 26, 27, 51, 52, 675, 676 };
	static const char *const want[] = { "a", "b", "z", "ab", "bb", "zb", "ac", "zz", "aab" };

	for (size_t k = 0; k < JC_ARRAY_LEN(idx); k++) {
		char *id = graph_node_id(idx[k]);
		char name[64];

		snprintf(name, sizeof(name), "node id of %zu", idx[k]);
		is_str(id, want[k], name);
		free(id);
	}
}

/* en10 sorts before en2, as text: it is cable 0 and numbered first. */
static void
test_lexicographic(void)
{
	struct jc_host *h = inv_new(2, NULL);
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	int s0, s1;

	inv_cable(&h[0], "en2", &h[1], "en10", 80);
	inv_cable(&h[0], "en10", &h[1], "en3", 80);
	ok(graph_build(h, 2, &g, &err) == 0, "two cables built");
	is_str(g->cables[0].end[0].iface, "en10", "en10 first on mac1");
	is_str(g->cables[0].end[1].iface, "en3", "its peer end");
	is_str(g->cables[1].end[0].iface, "en2", "en2 second");
	is_int(graph_count(g, 0, 1, false), 2, "two cables between the pair");
	ok(graph_pair_cable(g, 0, 1, 0, false, &s0) == graph_pair_cable(g, 1, 0, 0, false, &s1) &&
	    s0 == 0 && s1 == 1, "cable 0 is the same from both ends");
	ok(graph_pair_cable(g, 0, 1, 1, false, NULL) == graph_pair_cable(g, 1, 0, 1, false, NULL) &&
	    graph_pair_cable(g, 0, 1, 1, false, NULL) == 1, "cable 1 is the same from both ends");
	ok(graph_pair_cable(g, 0, 1, 2, false, NULL) < 0, "no third cable");
	graph_free(g);
	inv_free(h, 2);
}

/* On B the order of its ports differs from A's, yet both ends agree. */
static void
test_multicable_order(void)
{
	struct jc_host *h = inv_new(2, NULL);
	struct graph *g = NULL;
	struct graph_choice c;
	struct jc_err err = { 0 };

	inv_cable(&h[0], "en2", &h[1], "en5", 80);
	inv_cable(&h[0], "en3", &h[1], "en4", 80);
	inv_cable(&h[0], "en4", &h[1], "en2", 80);
	ok(graph_build(h, 2, &g, &err) == 0, "three cables built");
	for (size_t k = 0; k < 3; k++) {
		int s;
		long c0 = graph_pair_cable(g, 1, 0, k, false, &s);

		ok(c0 == (long)k && s == 1, "cable %zu from mac2 is mac1's cable %zu", k, k);
	}
	is_str(g->cables[0].end[1].iface, "en5", "mac2's end of cable 0 is en5 (not its first port)");
	ok(graph_choose(g, NULL, &c, &err) == 0 && c.backend == GRAPH_JACCL,
	    "two hosts, three cables: jaccl (a 2-host mesh)");
	graph_choice_clear(&c);
	ok(graph_choose(g, "jaccl-ring", &c, &err) == 0 && c.width == 3, "jaccl-ring width 3");
	graph_choice_clear(&c);
	graph_free(g);
	inv_free(h, 2);
}

static void
test_strays(void)
{
	struct jc_host *h = inv_new(3, NULL);
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	struct jc_port *p;

	inv_cable(&h[0], "en2", &h[1], "en2", 80);
	/* mac1.en3 names mac3.en2, which names nobody: one-sided. */
	p = inv_port(&h[0], "en3", NULL);
	inv_port(&h[2], "en2", NULL);
	p->peer_id = xstrdup(h[2].ports[0].id);
	/* mac2.en3 sees a Mac that is not listed. */
	p = inv_port(&h[1], "en3", NULL);
	p->peer_id = xstrdup("0000-NOT-LISTED");
	ok(graph_build(h, 3, &g, &err) == 0, "built");
	is_int((long long)g->ncables, 1, "one cable only");
	is_int((long long)g->nstrays, 2, "two strays");
	ok(g->strays[0].kind == GRAPH_STRAY_ONE_SIDED && g->strays[0].host == 0 &&
	    g->strays[0].peer_host == 2, "mac1 -> mac3 is one-sided");
	ok(g->strays[1].kind == GRAPH_STRAY_OUTSIDE && g->strays[1].host == 1,
	    "mac2's peer is outside the list");
	is_int(graph_count(g, 0, 2, false), 0, "one-sided cable is not counted");
	graph_free(g);

	/* Same machine listed twice. */
	free(h[2].ports[0].id);
	h[2].ports[0].id = xstrdup(h[0].ports[0].id);
	ok(graph_build(h, 3, &g, &err) < 0 && g == NULL, "duplicate port id fails");
	has(err.msg, "listed twice", "message suggests a duplicate host");
	inv_free(h, 3);

	h = inv_new(2, NULL);
	inv_cable(&h[0], "en2", &h[1], "en2", 80);
	inv_cable(&h[0], "en3", &h[1], "en3", 80);
	free(h[0].ports[1].iface);
	h[0].ports[1].iface = xstrdup("en2");
	ok(graph_build(h, 2, &g, &err) < 0 && g == NULL, "two ports with one interface fail");
	is_str(err.msg, "mac1: two Thunderbolt ports report interface en2", "message");
	inv_free(h, 2);

	/*
	 * A cable whose ends name each other but have no interface (no
	 * networksetup list): one entry for the cable, from its first end,
	 * whether one end lacks a name or both.
	 */
	for (int both = 0; both < 2; both++) {
		char *ends;

		h = inv_new(2, NULL);
		inv_cable(&h[0], "en2", &h[1], "en3", 80);
		free(h[0].ports[0].receptacle);
		h[0].ports[0].receptacle = xstrdup("1");
		free(h[1].ports[0].receptacle);
		h[1].ports[0].receptacle = xstrdup("2");
		free(h[1].ports[0].iface);
		h[1].ports[0].iface = NULL;
		if (both) {
			free(h[0].ports[0].iface);
			h[0].ports[0].iface = NULL;
		}
		ok(graph_build(h, 2, &g, &err) == 0 && g->ncables == 0 && g->nstrays == 1 &&
		    g->strays[0].kind == GRAPH_STRAY_NO_IFACE && g->strays[0].host == 0 &&
		    g->strays[0].peer_host == 1, "%s: one stray for the cable, from mac1",
		    both ? "no interface at either end" : "no interface at one end");
		ends = graph_no_iface_ends(g, &g->strays[0]);
		is_str(ends, both ? "mac1 Thunderbolt 1 and mac2 Thunderbolt 2" : "mac2 Thunderbolt 2",
		    "the ends without an interface");
		free(ends);
		graph_free(g);
		inv_free(h, 2);
	}
}

static void
test_dock_tb4_rdma_off(void)
{
	struct jc_host *h = inv_new(2, NULL);
	struct graph *g = NULL;
	struct graph_choice c;
	struct jc_err err = { 0 };

	inv_cable(&h[0], "en2", &h[1], "en2", 80);
	h[0].ports[0].peer_via_dock = true;
	ok(graph_build(h, 2, &g, &err) == 0, "dock: built");
	ok(g->ncables == 1 && g->cables[0].via_dock && g->cables[0].rdma == JC_NO,
	    "cable through a dock: no RDMA");
	is_int(graph_count(g, 0, 1, false), 1, "dock cable carries TCP");
	is_int(graph_count(g, 0, 1, true), 0, "but not RDMA");
	ok(graph_choose(g, NULL, &c, &err) == 0 && c.backend == GRAPH_RING, "auto: ring");
	ok(c.warnings.n == 3, "a warning per host and the summary");
	if (c.warnings.n > 0)
		has(c.warnings.v[0], "dock", "warning names the dock");
	graph_choice_clear(&c);
	ok(graph_choose(g, "jaccl", &c, &err) < 0, "forced jaccl fails");
	has(err.msg, "does not seem to have RDMA enabled", "mlx's wording");
	has(err.msg, "dock", "and the dock");
	graph_free(g);
	h[0].ports[0].peer_via_dock = false;

	h[0].ports[0].link_gbps = h[1].ports[0].link_gbps = 40;
	ok(graph_build(h, 2, &g, &err) == 0, "TB4: built");
	ok(g->cables[0].link == GRAPH_LINK_TB4 && g->cables[0].rdma == JC_NO, "TB4: no RDMA");
	has(g->cables[0].why_not, "40 Gb/s", "reason names the rate");
	ok(graph_choose(g, NULL, &c, &err) == 0 && c.backend == GRAPH_RING, "TB4: auto ring");
	graph_choice_clear(&c);
	graph_free(g);
	h[0].ports[0].link_gbps = h[1].ports[0].link_gbps = 80;

	/* A 4-host mesh with one TB4 pair: jaccl-ring around it, and why. */
	{
		struct jc_host *m = inv_new(4, NULL);

		inv_mesh(m, 4, 80);
		m[0].ports[2].link_gbps = m[3].ports[0].link_gbps = 40;	/* mac1-mac4 */
		ok(graph_build(m, 4, &g, &err) == 0, "mesh with a TB4 pair");
		ok(graph_choose(g, NULL, &c, &err) == 0 && c.backend == GRAPH_JACCL_RING &&
		    c.order[1] == 1 && c.order[2] == 3 && c.order[3] == 2,
		    "auto: jaccl-ring mac1, mac2, mac4, mac3 avoiding the TB4 cable");
		ok(c.warnings.n == 1, "one warning");
		if (c.warnings.n == 1)
			has(c.warnings.v[0], "not a JACCL mesh: no cable between mac1 and mac4 can carry RDMA (cable mac1 en5 - mac4 en2: 40 Gb/s link",
			    "names the pair and the cable");
		graph_choice_clear(&c);
		graph_free(g);
		inv_free(m, 4);
	}
	h[0].ports[0].link_gbps = h[1].ports[0].link_gbps = 40;
	ok(graph_build(h, 2, &g, &err) == 0, "TB4 again");
	graph_free(g);
	h[0].ports[0].link_gbps = h[1].ports[0].link_gbps = 0;
	ok(graph_build(h, 2, &g, &err) == 0 && g->cables[0].rdma == JC_UNKNOWN,
	    "unknown rate: RDMA not ruled out");
	ok(graph_choose(g, NULL, &c, &err) == 0 && c.backend == GRAPH_JACCL, "unknown rate: jaccl");
	graph_choice_clear(&c);
	graph_free(g);
	h[0].ports[0].link_gbps = h[1].ports[0].link_gbps = 80;

	h[1].rdma_enabled = JC_NO;
	ok(graph_build(h, 2, &g, &err) == 0 && g->cables[0].rdma == JC_NO, "RDMA off on mac2");
	ok(graph_choose(g, NULL, &c, &err) == 0 && c.backend == GRAPH_RING, "auto: ring");
	graph_choice_clear(&c);
	ok(graph_choose(g, "jaccl-ring", &c, &err) < 0, "forced jaccl-ring fails");
	has(err.msg, "mac2 does not seem to have RDMA enabled", "names mac2");
	has(err.msg, "Some of the hosts don't have RDMA enabled", "mlx's summary");
	graph_free(g);
	h[1].rdma_enabled = JC_YES;

	inv_rdma(&h[1], "en2", JC_PORT_DOWN);
	ok(graph_build(h, 2, &g, &err) == 0 && g->cables[0].rdma == JC_NO, "PORT_DOWN: no RDMA");
	has(g->cables[0].why_not, "rdma_en2 on mac2 is PORT_DOWN", "reason");
	graph_free(g);
	inv_free(h, 2);
}

static void
test_missing(void)
{
	struct jc_host *h = inv_new(4, NULL);
	struct graph *g = NULL;
	struct graph_choice c;
	struct jc_err err = { 0 };

	inv_cable(&h[0], "en2", &h[1], "en2", 80);
	inv_cable(&h[0], "en3", &h[2], "en2", 80);
	inv_cable(&h[0], "en4", &h[3], "en2", 80);
	inv_cable(&h[1], "en3", &h[2], "en3", 80);
	inv_cable(&h[2], "en4", &h[3], "en3", 80);
	inv_port(&h[1], "en4", "3");	/* free: Thunderbolt 3 (en4) */
	inv_port(&h[3], "en4", "1");
	ok(graph_build(h, 4, &g, &err) == 0, "4 hosts, mac2-mac4 missing");
	ok(graph_choose(g, "jaccl", &c, &err) < 0, "forced jaccl fails");
	has(err.msg, "Incomplete mesh, mac2 is not connected to mac4", "mlx's message");
	has(err.msg, "no cable between mac2 and mac4; free ports: mac2 Thunderbolt 3 (en4), mac4 Thunderbolt 1 (en4)",
	    "names the free ports");
	has(err.msg, "Try passing --dot to visualize the connectivity", "--dot hint");
	ok(graph_choose(g, NULL, &c, &err) == 0 && c.backend == GRAPH_JACCL_RING, "auto: jaccl-ring");
	ok(c.order[0] == 0 && c.order[1] == 1 && c.order[2] == 2 && c.order[3] == 3,
	    "ring 1-2-3-4");
	graph_choice_clear(&c);
	graph_free(g);
	inv_free(h, 4);

	/* A chain: no ring, no mesh. */
	h = inv_new(3, NULL);
	inv_cable(&h[0], "en2", &h[1], "en2", 80);
	inv_cable(&h[1], "en3", &h[2], "en2", 80);
	inv_port(&h[2], "en3", "2");
	ok(graph_build(h, 3, &g, &err) == 0, "chain built");
	ok(graph_choose(g, NULL, &c, &err) < 0, "auto fails");
	has(err.msg, "Neither thunderbolt mesh nor ring found.", "mlx's message");
	has(err.msg, "Perhaps run with --dot to generate a plot of the connectivity.", "its hint");
	has(err.msg, "mac1 is cabled to one host only (mac2)", "says why");
	ok(graph_choose(g, "ring", &c, &err) < 0, "forced ring fails");
	has(err.msg, "Could not find a full ring.", "mlx's message");
	has(err.msg, "mac3 is cabled to one host only (mac2), free ports: mac3 Thunderbolt 2 (en3)",
	    "names the free port");
	graph_free(g);
	inv_free(h, 3);
}

static void
test_sizes(void)
{
	for (size_t n = 2; n <= 8; n++) {
		struct jc_host *h = inv_new(n, NULL);
		struct graph *g = NULL;
		struct graph_choice c;
		struct jc_err err = { 0 };
		bool ident = true;

		inv_mesh(h, n, 80);
		graph_build(h, n, &g, &err);
		ok(graph_choose(g, NULL, &c, &err) == 0 && c.backend == GRAPH_JACCL,
		    "%zu-host mesh: jaccl", n);
		is_int((long long)g->ncables, (long long)(n * (n - 1) / 2), "cable count");
		graph_choice_clear(&c);
		graph_free(g);
		inv_free(h, n);

		h = inv_new(n, NULL);
		inv_ring(h, n, NULL, 80);
		graph_build(h, n, &g, &err);
		ok(graph_choose(g, NULL, &c, &err) == 0 &&
		    c.backend == (n <= 3 ? GRAPH_JACCL : GRAPH_JACCL_RING) && c.width == 1,
		    "%zu-host ring: %s", n, n <= 3 ? "jaccl (also a mesh)" : "jaccl-ring");
		for (size_t k = 0; k < n && c.order; k++)
			ident = ident && c.order[k] == k;
		ok(ident, "%zu-host ring in host order", n);
		graph_choice_clear(&c);
		graph_free(g);
		inv_free(h, n);
	}
}

/* A ring cabled in a shuffled order: ranks follow the cables. */
static void
test_big(void)
{
	size_t n = 64, perm[64], ring[64];
	struct jc_host *h;
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	unsigned w;
	bool okr = true;

	h = inv_new(n, NULL);
	inv_mesh(h, n, 80);
	ok(graph_build(h, n, &g, &err) == 0, "64-host mesh built");
	ok(graph_is_mesh(g, true, NULL, NULL), "64-host mesh is a mesh");
	ok(graph_find_ring(g, false, ring, &w) == GRAPH_RING_FOUND, "ring found in 64-host mesh");
	for (size_t k = 0; k < n; k++)
		okr = okr && ring[k] == k;
	ok(okr && w == 1, "it is 0, 1, ..., 63");
	graph_free(g);
	inv_free(h, n);

	srand(7);
	for (size_t k = 0; k < n; k++)
		perm[k] = k;
	for (size_t k = n - 1; k > 1; k--) {
		size_t j = 1 + (size_t)rand() % k, t = perm[k];

		perm[k] = perm[j];
		perm[j] = t;
	}
	h = inv_new(n, NULL);
	inv_ring(h, n, perm, 80);
	ok(graph_build(h, n, &g, &err) == 0, "64-host shuffled ring built");
	ok(!graph_is_mesh(g, false, NULL, NULL), "not a mesh");
	ok(graph_find_ring(g, false, ring, &w) == GRAPH_RING_FOUND, "ring found");
	/* From host 0 the DFS goes to the lower of its two neighbours first. */
	okr = ring[0] == 0;
	{
		bool fwd = perm[1] < perm[n - 1];

		for (size_t k = 1; k < n; k++)
			okr = okr && ring[k] == (fwd ? perm[k] : perm[n - k]);
	}
	ok(okr, "ring follows the cables, lower neighbour first");
	graph_free(g);

	/* Cut one cable: no ring any more, quickly. */
	free(h[perm[10]].ports[0].peer_id);
	h[perm[10]].ports[0].peer_id = NULL;
	ok(graph_build(h, n, &g, &err) == 0, "cut ring built");
	ok(graph_find_ring(g, false, ring, &w) == GRAPH_RING_NONE, "no ring in a cut ring");
	graph_free(g);
	inv_free(h, n);

	/* Two disjoint 32-host meshes joined by one cable: no ring. */
	h = inv_new(n, NULL);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if ((i < 32) == (j < 32)) {
				char *a = xasprintf("en%zu", j + 2), *b = xasprintf("en%zu", i + 2);

				inv_cable(&h[i], a, &h[j], b, 80);
				free(a);
				free(b);
			}
	inv_cable(&h[0], "en100", &h[32], "en100", 80);
	ok(graph_build(h, n, &g, &err) == 0, "two meshes and a bridge built");
	ok(graph_find_ring(g, false, ring, &w) == GRAPH_RING_NONE, "no ring across one bridge cable");
	graph_free(g);
	inv_free(h, n);
}

/* The JACCL runtime's limits: 8 mesh ranks, 4 cables per ring neighbour. */
static void
test_limits(void)
{
	struct jc_host *h = inv_new(9, NULL);
	struct graph *g = NULL;
	struct graph_choice c;
	struct jc_err err = { 0 };

	inv_mesh(h, 9, 80);
	graph_build(h, 9, &g, &err);
	ok(graph_choose(g, NULL, &c, &err) == 0 && c.backend == GRAPH_JACCL_RING,
	    "9-host mesh: jaccl-ring");
	ok(c.warnings.n == 1 && strstr(c.warnings.v[0], "at most 8 ranks") != NULL, "with a warning");
	graph_choice_clear(&c);
	ok(graph_choose(g, "jaccl", &c, &err) < 0, "forced jaccl on 9 hosts fails");
	has(err.msg, "JACCL's mesh supports at most 8 ranks, not 9", "message");
	graph_free(g);
	inv_free(h, 9);

	h = inv_new(2, NULL);
	for (int k = 0; k < 6; k++) {
		char *a = xasprintf("en%d", k + 2);

		inv_cable(&h[0], a, &h[1], a, 80);
		free(a);
	}
	graph_build(h, 2, &g, &err);
	ok(graph_choose(g, "jaccl-ring", &c, &err) == 0 && c.width == 4, "6 cables: jaccl-ring uses 4");
	ok(c.warnings.n == 1 && strstr(c.warnings.v[0], "using 4 of the 6 cables") != NULL,
	    "with a warning");
	graph_choice_clear(&c);
	ok(graph_choose(g, "ring", &c, &err) == 0 && c.width == 6, "the TCP ring uses all 6");
	graph_choice_clear(&c);
	graph_free(g);
	inv_free(h, 2);
}

int
main(void)
{
	(void)plan;
	(void)skip_all;
	test_appendix();
	test_node_ids();
	test_lexicographic();
	test_multicable_order();
	test_strays();
	test_dock_tb4_rdma_off();
	test_missing();
	test_sizes();
	test_big();
	test_limits();
	return done_testing();
}
