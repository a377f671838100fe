/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the whole pure pipeline (graph, backend choice, plan,
 * DOT, hostfile) on inventories decoded from the input, checking its
 * promises: the same cable from both ends of a pair, rings that are real
 * cycles, plans naming only cable interfaces, DOT that cgraph reads back,
 * and every hostfile written passing the hostfile checks.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile_check.h"
#include "dot.h"
#include "graph.h"
#include "hostfile_write.h"
#include "plan.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct rd {
	const uint8_t *p;
	size_t n;
};

static unsigned
next(struct rd *r)
{
	if (r->n == 0)
		return 0;
	r->n--;
	return *r->p++;
}

static struct jc_host *
decode(struct rd *r, size_t *nout)
{
	static const int rates[] = { 80, 80, 80, 40, 0, 20, 120, 80 };
	size_t n = 1 + next(r) % 8;
	struct jc_host *h = xcalloc(n, sizeof(*h));

	for (size_t i = 0; i < n; i++) {
		unsigned f = next(r);

		h[i].name = xasprintf("h%zu", i);
		h[i].os = f & 1 ? JC_OS_LINUX : JC_OS_MACOS;
		h[i].rdma_enabled = f & 2 ? JC_NO : f & 4 ? JC_UNKNOWN : JC_YES;
		h[i].rdma_listed = f & 8 ? JC_UNKNOWN : JC_YES;
		h[i].mgmt_ip = f & 16 ? NULL : xasprintf("10.0.0.%zu", i + 1);
		h[i].nports = next(r) % 7;
		h[i].ports = xcalloc(h[i].nports ? h[i].nports : 1, sizeof(*h[i].ports));
		for (size_t k = 0; k < h[i].nports; k++) {
			struct jc_port *pt = &h[i].ports[k];

			pt->bus = (int)k;
			pt->receptacle = xasprintf("%zu", k + 1);
			pt->iface = (next(r) & 31) == 0 ? NULL : xasprintf("en%zu", k * 3 + 1);
			pt->id = xasprintf("h%zup%zu", i, k);
			pt->link_gbps = rates[next(r) % 8];
			pt->peer_via_dock = (next(r) & 15) == 0;
		}
	}
	/* Peers: pick a port of any host (maybe none, maybe outside). */
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < h[i].nports; k++) {
			unsigned a = next(r), b = next(r);
			size_t j = a % n;

			if (a >= 240)
				h[i].ports[k].peer_id = xstrdup("outside");
			else if (a >= 200 || h[j].nports == 0)
				continue;
			else
				h[i].ports[k].peer_id = xasprintf("h%zup%zu", j, (size_t)b % h[j].nports);
		}
	}
	/* RDMA devices for most interfaces. */
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < h[i].nports; k++) {
			unsigned s = next(r);
			struct jc_rdma_dev *d;

			if (h[i].ports[k].iface == NULL || s % 8 == 0)
				continue;
			h[i].rdma = xreallocarray(h[i].rdma, h[i].nrdma + 1, sizeof(*h[i].rdma));
			d = &h[i].rdma[h[i].nrdma++];
			memset(d, 0, sizeof(*d));
			d->name = xasprintf("rdma_%s", h[i].ports[k].iface);
			d->netdev = xstrdup(h[i].ports[k].iface);
			d->state = s % 8 == 1 ? JC_PORT_DOWN : s % 8 == 2 ? JC_PORT_UNKNOWN : JC_PORT_ACTIVE;
		}
	}
	*nout = n;
	return h;
}

static void
check_choice(const struct graph *g, const struct plan *p, const struct graph_choice *c)
{
	struct jc_hostfile *hf = NULL;
	struct check_report *rep;
	struct jc_err err = { 0 };
	size_t n = g->n;

	/* Ranks: a permutation; ring neighbours cabled. */
	for (size_t k = 0; k < n; k++) {
		for (size_t q = k + 1; q < n; q++)
			if (c->order[k] == c->order[q])
				abort();
		if (c->backend != GRAPH_JACCL && n >= 2 &&
		    graph_count(g, c->order[k], c->order[(k + 1) % n], c->rdma) < c->width)
			abort();
	}
	if (hostfile_write_build(g, c, p, NULL, &hf, NULL, &err) != 0)
		abort();
	rep = check_hostfile(hf, NULL, NULL, 32323);
	if (getenv("FUZZ_GRAPH_DEBUG") != NULL && !rep->valid)
		for (size_t k = 0; k < rep->nproblems; k++)
			fprintf(stderr, "%s: %s\n", rep->problems[k].code, rep->problems[k].msg);
	/* One host: mlx writes a jaccl file JACCL itself runs as a group of one. */
	if (n < 2) {
		check_report_free(rep);
		jc_hostfile_free(hf);
		return;
	}
	/* A host without a management address is warned about, and then invalid. */
	if (!rep->valid && c->backend != GRAPH_RING) {
		bool missing = false;

		for (size_t k = 0; k < hf->nhosts; k++)
			missing = missing || hf->hosts[k].nips == 0;
		if (!missing)
			abort();
	} else if (!rep->valid) {
		abort();
	}
	check_report_free(rep);
	jc_hostfile_free(hf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const forced[] = { NULL, "jaccl", "jaccl-ring", "ring" };
	struct rd r = { data, size };
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct jc_err err = { 0 };
	size_t n = 0;
	struct jc_host *h = decode(&r, &n);
	char *buf = NULL;
	size_t blen = 0;
	FILE *fp;

	if (graph_build(h, n, &g, &err) != 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			for (size_t k = 0; k < graph_count(g, i, j, false); k++) {
				int si, sj;
				long a = graph_pair_cable(g, i, j, k, false, &si);
				long b = graph_pair_cable(g, j, i, k, false, &sj);

				if (a < 0 || a != b || si == sj || g->cables[a].end[si].host != i)
					abort();
			}
	if (plan_build(g, &p, &err) != 0 || plan_check(p, g, &err) != 0)
		abort();
	fp = open_memstream(&buf, &blen);
	if (dot_write(fp, g, 0, &err) != 0 || dot_write(fp, g, DOT_EXTENDED, &err) != 0)
		abort();
	fclose(fp);
	free(buf);
	for (size_t f = 0; f < JC_ARRAY_LEN(forced); f++) {
		struct graph_choice c;

		if (graph_choose(g, forced[f], &c, &err) != 0)
			continue;
		check_choice(g, p, &c);
		graph_choice_clear(&c);
	}
out:
	plan_free(p);
	graph_free(g);
	for (size_t i = 0; i < n; i++)
		jc_host_clear(&h[i]);
	free(h);
	return 0;
}
