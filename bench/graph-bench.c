/* SPDX-License-Identifier: MIT */
/*
 * Timing of the graph analysis (not a test): graph_build + graph_choose on
 * synthetic meshes and rings of 4 to 64 hosts, each time printed with its
 * ratio to the 4-host case of the same run; then mlx's full cycle
 * enumeration (every cycle from every start node, as extract_rings does)
 * against graph_find_ring on complete meshes of up to 9 hosts.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/graph/inv.h"
#include "graph.h"
#include "util.h"

#define MAXE 9

/* Seconds per call of one analysis of hosts h (at least ~0.2 s measured). */
static double
time_analysis(const struct jc_host *h, size_t n, const char **backend)
{
	double t0 = jc_now(), t;
	unsigned long reps = 0;

	do {
		struct graph *g = NULL;
		struct graph_choice c;
		struct jc_err err = { 0 };

		if (graph_build(h, n, &g, &err) != 0 || graph_choose(g, NULL, &c, &err) != 0) {
			fprintf(stderr, "graph-bench: %s\n", err.msg);
			exit(1);
		}
		*backend = graph_backend_name(c.backend);
		graph_choice_clear(&c);
		graph_free(g);
		reps++;
		t = jc_now() - t0;
	} while (t < 0.2);
	return t / (double)reps;
}

/* mlx's extract_rings: enumerate, then keep unique node sets. */
struct menum {
	size_t n;
	unsigned long found;
	unsigned char seen[1 << MAXE];
	size_t path[MAXE];
};

static void
menum_dfs(struct menum *m, size_t start, size_t node, size_t plen, unsigned visited)
{
	m->path[plen++] = node;
	visited |= 1U << node;
	for (size_t j = 0; j < m->n; j++) {
		if (j == node)
			continue;	/* complete graph: every other node is a neighbour */
		if (j == start) {
			unsigned set = 0;

			for (size_t k = 0; k < plen; k++)
				set |= 1U << m->path[k];
			m->seen[set] = 1;
			m->found++;
		} else if (!(visited & (1U << j))) {
			menum_dfs(m, start, j, plen, visited);
		}
	}
}

int
main(void)
{
	static const size_t sizes[] = { 4, 8, 16, 32, 64 };
	double base[2] = { 0, 0 };

	printf("graph analysis (graph_build + graph_choose), seconds per call\n");
	printf("%-6s %5s %-11s %12s %10s\n", "shape", "hosts", "backend", "seconds", "vs 4 hosts");
	for (int shape = 0; shape < 2; shape++) {
		for (size_t k = 0; k < JC_ARRAY_LEN(sizes); k++) {
			size_t n = sizes[k];
			struct jc_host *h = inv_new(n, NULL);
			const char *be = "";
			double t;

			if (shape == 0)
				inv_mesh(h, n, 80);
			else
				inv_ring(h, n, NULL, 80);
			t = time_analysis(h, n, &be);
			if (k == 0)
				base[shape] = t;
			printf("%-6s %5zu %-11s %12.3g %10.1f\n", shape ? "ring" : "mesh", n, be, t,
			    t / base[shape]);
			inv_free(h, n);
		}
	}

	printf("\nring on a complete mesh: mlx's full enumeration vs graph_find_ring\n");
	printf("%5s %12s %12s %12s %10s\n", "hosts", "cycles", "enumerate s", "find s", "speedup");
	for (size_t n = 3; n <= MAXE; n++) {
		struct menum *m = xcalloc(1, sizeof(*m));
		struct jc_host *h = inv_new(n, NULL);
		struct graph *g = NULL;
		struct jc_err err = { 0 };
		size_t ring[MAXE];
		unsigned w;
		double t0, te, tf;
		unsigned long reps = 0;

		m->n = n;
		t0 = jc_now();
		do {
			m->found = 0;
			for (size_t s = 0; s < n; s++)
				menum_dfs(m, s, s, 0, 0);
			reps++;
		} while (jc_now() - t0 < 0.2);
		te = (jc_now() - t0) / (double)reps;
		inv_mesh(h, n, 80);
		graph_build(h, n, &g, &err);
		reps = 0;
		t0 = jc_now();
		do {
			graph_find_ring(g, false, ring, &w);
			reps++;
		} while (jc_now() - t0 < 0.2);
		tf = (jc_now() - t0) / (double)reps;
		printf("%5zu %12lu %12.3g %12.3g %10.0f\n", n, m->found, te, tf, te / tf);
		graph_free(g);
		inv_free(h, n);
		free(m);
	}
	return 0;
}
