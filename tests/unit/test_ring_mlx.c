/* SPDX-License-Identifier: MIT */
/*
 * The ring search against a plain reimplementation of mlx's extract_rings
 * (enumerate every cycle from every start node, de-duplicate by node set,
 * stable-sort by decreasing length, take rings[0]) on many random small
 * cablings: same ring, same order, same width, and the same verdict when
 * there is no full ring.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "../graph/inv.h"
#include "graph.h"
#include "util.h"

#define MAXN 7

struct mring {
	size_t nodes[MAXN];
	size_t len;
	unsigned count;
	unsigned set;		/* bit set of nodes, for de-duplication */
};

struct menum {
	unsigned c[MAXN][MAXN];
	size_t n;
	struct mring *rings;
	size_t nrings, cap;
};

static void
record(struct menum *m, const size_t *path, size_t len)
{
	struct mring r = { .len = len, .count = ~0U };

	for (size_t k = 0; k < len; k++) {
		unsigned c = m->c[path[k]][path[(k + 1) % len]];

		r.nodes[k] = path[k];
		r.set |= 1U << path[k];
		if (c < r.count)
			r.count = c;
	}
	if (m->nrings == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->rings = xreallocarray(m->rings, m->cap, sizeof(*m->rings));
	}
	m->rings[m->nrings++] = r;
}

static void
dfs(struct menum *m, size_t start, size_t node, size_t *path, size_t plen, bool *visited)
{
	path[plen++] = node;
	visited[node] = true;
	for (size_t j = 0; j < m->n; j++) {
		if (m->c[node][j] == 0)
			continue;
		if (j == start)
			record(m, path, plen);
		else if (!visited[j])
			dfs(m, start, j, path, plen, visited);
	}
	visited[node] = false;
}

/* mlx's rings[0]: returns false when there is no ring of length n. */
static bool
mlx_ring(struct menum *m, size_t *ring, unsigned *count)
{
	size_t path[MAXN];
	bool visited[MAXN] = { false };
	struct mring *uniq;
	size_t nu = 0;
	bool found = false;

	m->nrings = 0;
	for (size_t s = 0; s < m->n; s++)
		dfs(m, s, s, path, 0, visited);
	/* De-duplicate by node set, first kept. */
	uniq = xcalloc(m->nrings ? m->nrings : 1, sizeof(*uniq));
	for (size_t k = 0; k < m->nrings; k++) {
		bool dup = false;

		for (size_t u = 0; u < nu && !dup; u++)
			dup = uniq[u].set == m->rings[k].set;
		if (!dup)
			uniq[nu++] = m->rings[k];
	}
	/* Stable sort by decreasing length: the first of the longest wins. */
	{
		size_t best = 0;

		for (size_t u = 1; u < nu; u++)
			if (uniq[u].len > uniq[best].len)
				best = u;
		if (nu > 0 && uniq[best].len == m->n) {
			memcpy(ring, uniq[best].nodes, m->n * sizeof(size_t));
			*count = uniq[best].count;
			found = true;
		}
	}
	free(uniq);
	return found;
}

int
main(void)
{
	struct menum m = { 0 };
	size_t tries = 0, agree = 0, rings = 0, none = 0, wide = 0;
	int ports[MAXN];

	(void)plan;
	(void)skip_all;
	(void)is_str;
	srand(12345);
	for (size_t t = 0; t < 2000; t++) {
		size_t n = 2 + (size_t)rand() % (MAXN - 1);
		int pct = 25 + rand() % 70;
		struct jc_host *h = inv_new(n, NULL);
		struct graph *g = NULL;
		struct jc_err err = { 0 };
		size_t want[MAXN], got[MAXN];
		unsigned wc = 0, gc = 0;
		bool wf, gf;

		memset(ports, 0, sizeof(ports));
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++) {
				int mult = rand() % 100 < pct ? 1 + (rand() % 4 == 0) + (rand() % 8 == 0) : 0;

				for (int k = 0; k < mult; k++) {
					char *a = xasprintf("en%d", 2 + ports[i]++);
					char *b = xasprintf("en%d", 2 + ports[j]++);

					inv_cable(&h[i], a, &h[j], b, 80);
					free(a);
					free(b);
				}
			}
		if (graph_build(h, n, &g, &err) != 0) {
			ok(0, "graph %zu builds: %s", t, err.msg);
			inv_free(h, n);
			continue;
		}
		m.n = n;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++)
				m.c[i][j] = graph_count(g, i, j, false);
		wf = mlx_ring(&m, want, &wc);
		gf = graph_find_ring(g, false, got, &gc) == GRAPH_RING_FOUND;
		tries++;
		if (wf == gf && (!wf || (memcmp(want, got, n * sizeof(size_t)) == 0 && wc == gc))) {
			agree++;
		} else {
			diag("graph %zu (n=%zu): mlx %s, ours %s", t, n, wf ? "ring" : "none",
			    gf ? "ring" : "none");
		}
		rings += wf;
		none += !wf;
		wide += wf && wc > 1;
		graph_free(g);
		inv_free(h, n);
	}
	free(m.rings);
	is_int((long long)agree, (long long)tries, "same ring, order and width as mlx's rings[0]");
	ok(rings > 300 && none > 300, "both outcomes exercised (%zu rings, %zu without)", rings, none);
	ok(wide > 10, "rings with several cables per edge exercised (%zu)", wide);
	return done_testing();
}
