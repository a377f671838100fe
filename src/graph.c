/* SPDX-License-Identifier: MIT */
/*
 * The cabling graph: cables from matching port ids across hosts, per-cable
 * RDMA usability, the mesh check, the ring search and the backend choice of
 * mlx.distributed_config. See graph.h for the numbering and the rules.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "graph.h"

/* Upper bound on search steps of the ring search before it gives up. */
#define RING_BUDGET 4000000UL

static const char DOT_HINT[] = "Try passing --dot to visualize the connectivity";
static const char DOT_HINT2[] = "Perhaps run with --dot to generate a plot of the connectivity.";

struct sort_port {
	const char *iface;
	size_t idx;
};

static int
sort_port_cmp(const void *a, const void *b)
{
	const struct sort_port *x = a, *y = b;

	/* Ports without an interface go last, in bus order. */
	if (x->iface == NULL || y->iface == NULL) {
		if (x->iface != y->iface)
			return x->iface == NULL ? 1 : -1;
	} else {
		int c = strcmp(x->iface, y->iface);

		if (c != 0)
			return c;
	}
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

struct id_ent {
	const char *id;
	size_t host, port;
};

static int
id_ent_cmp(const void *a, const void *b)
{
	const struct id_ent *x = a, *y = b;
	int c = strcasecmp(x->id, y->id);

	if (c != 0)
		return c;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static const struct id_ent *
id_find(const struct id_ent *ents, size_t n, const char *id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcasecmp(ents[mid].id, id);

		if (c == 0)
			return &ents[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const struct jc_rdma_dev *
rdma_dev_for(const struct jc_host *h, const char *iface)
{
	for (size_t i = 0; i < h->nrdma; i++) {
		const struct jc_rdma_dev *d = &h->rdma[i];

		if (d->netdev != NULL && strcmp(d->netdev, iface) == 0)
			return d;
	}
	for (size_t i = 0; i < h->nrdma; i++) {
		const struct jc_rdma_dev *d = &h->rdma[i];

		if (d->name != NULL && strncmp(d->name, "rdma_", 5) == 0 &&
		    strcmp(d->name + 5, iface) == 0)
			return d;
	}
	return NULL;
}

static void
end_fill(struct graph_end *e, const struct jc_host *h, size_t host, size_t port)
{
	const struct jc_rdma_dev *d;

	e->host = host;
	e->port = port;
	e->iface = h->ports[port].iface;
	d = rdma_dev_for(h, e->iface);
	if (d != NULL) {
		e->rdma = xstrdup(d->name);
		e->rdma_present = JC_YES;
		e->rdma_state = d->state;
	} else {
		e->rdma = xasprintf("rdma_%s", e->iface);
		/* An empty list means "captured, none", unless never captured. */
		if (h->nrdma > 0 || h->rdma_listed != JC_UNKNOWN)
			e->rdma_present = JC_NO;
		else
			e->rdma_present = JC_UNKNOWN;
		e->rdma_state = JC_PORT_UNKNOWN;
	}
}

/* Decide whether RDMA can use cable c (rules at the top of graph.h). */
static void
cable_rdma(struct graph_cable *c, const struct jc_host *hosts)
{
	bool all_known = c->link == GRAPH_LINK_TB5;

	c->rdma = JC_NO;
	if (c->via_dock) {
		c->why_not = xstrdup("the link goes through a dock or hub");
		return;
	}
	if (c->link == GRAPH_LINK_TB4 || c->link == GRAPH_LINK_OTHER) {
		c->why_not = xasprintf("%d Gb/s link: RDMA needs a Thunderbolt 5 (80 Gb/s) link",
		    c->gbps);
		return;
	}
	for (int s = 0; s < 2; s++) {
		const struct graph_end *e = &c->end[s];
		const struct jc_host *h = &hosts[e->host];

		if (h->rdma_enabled == JC_NO) {
			c->why_not = xasprintf("RDMA is disabled on %s (rdma_ctl status)", h->name);
			return;
		}
		if (e->rdma_present == JC_NO) {
			c->why_not = xasprintf("%s has no RDMA device %s", h->name, e->rdma);
			return;
		}
		if (e->rdma_state != JC_PORT_UNKNOWN && e->rdma_state != JC_PORT_ACTIVE) {
			c->why_not = xasprintf("%s on %s is %s", e->rdma, h->name,
			    jc_port_state_name(e->rdma_state));
			return;
		}
		if (e->rdma_present != JC_YES || e->rdma_state != JC_PORT_ACTIVE)
			all_known = false;
	}
	if (all_known) {
		c->rdma = JC_YES;
		return;
	}
	c->rdma = JC_UNKNOWN;
	c->why_not = xstrdup(c->link == GRAPH_LINK_UNKNOWN ? "link rate unknown" :
	    "RDMA device state unknown");
}

static enum graph_link
link_class(int gbps)
{
	if (gbps <= 0)
		return GRAPH_LINK_UNKNOWN;
	if (gbps >= 80)
		return GRAPH_LINK_TB5;
	if (gbps >= 40)
		return GRAPH_LINK_TB4;
	return GRAPH_LINK_OTHER;
}

static void
stray_add(struct graph *g, enum graph_stray_kind kind, size_t host, size_t port,
    size_t ph, size_t pp, const char *peer_id)
{
	struct graph_stray *s;

	g->strays = xreallocarray(g->strays, g->nstrays + 1, sizeof(*g->strays));
	s = &g->strays[g->nstrays++];
	s->kind = kind;
	s->host = host;
	s->port = port;
	s->peer_host = ph;
	s->peer_port = pp;
	s->peer_id = peer_id;
}

/* Group cable indices by pair (counting sort), keeping cable order. */
static void
pair_index(struct graph *g, bool rdma)
{
	size_t n = g->n, total = 0;
	size_t *off = xcalloc(n > 0 ? n * n : 1, sizeof(size_t));
	size_t *cab = xcalloc(g->ncables ? g->ncables : 1, sizeof(size_t));
	size_t *fill;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			off[i * n + j] = total;
			total += graph_count(g, i, j, rdma);
		}
	fill = xcalloc(n > 0 ? n * n : 1, sizeof(size_t));
	for (size_t k = 0; k < g->ncables; k++) {
		const struct graph_cable *c = &g->cables[k];
		size_t key = c->end[0].host * n + c->end[1].host;

		if (rdma && c->rdma == JC_NO)
			continue;
		cab[off[key] + fill[key]++] = k;
	}
	free(fill);
	if (rdma) {
		g->rpair_off = off;
		g->rpair_cab = cab;
	} else {
		g->pair_off = off;
		g->pair_cab = cab;
	}
}

/* What graph_build carries from one step to the next. */
struct build {
	struct graph *g;
	struct id_ent *ents;	/* every port that has an id, sorted by id */
	size_t nents;
	size_t cap_cables;
	bool **assigned;	/* [host][port]: its cable is already counted */
};

/* Host i's ports sorted by interface name as text; its ids into the index. */
static void
host_port_order(struct build *bd, size_t i)
{
	const struct jc_host *h = &bd->g->hosts[i];
	struct sort_port *sp = xcalloc(h->nports ? h->nports : 1, sizeof(*sp));

	for (size_t p = 0; p < h->nports; p++) {
		sp[p].iface = h->ports[p].iface;
		sp[p].idx = p;
		if (h->ports[p].id != NULL) {
			bd->ents[bd->nents].id = h->ports[p].id;
			bd->ents[bd->nents].host = i;
			bd->ents[bd->nents].port = p;
			bd->nents++;
		}
	}
	qsort(sp, h->nports, sizeof(*sp), sort_port_cmp);
	bd->g->order[i] = xcalloc(h->nports ? h->nports : 1, sizeof(size_t));
	for (size_t p = 0; p < h->nports; p++)
		bd->g->order[i][p] = sp[p].idx;
	bd->g->norder[i] = h->nports;
	bd->assigned[i] = xcalloc(h->nports ? h->nports : 1, sizeof(bool));
	free(sp);
}

/* Two ports of host i with the same interface name: an error. */
static int
same_iface_check(const struct graph *g, size_t i, struct jc_err *err)
{
	const struct jc_host *h = &g->hosts[i];

	for (size_t o = 1; o < g->norder[i]; o++) {
		const char *a = h->ports[g->order[i][o - 1]].iface;
		const char *b = h->ports[g->order[i][o]].iface;

		if (b != NULL && a != NULL && strcmp(b, a) == 0)
			return jc_fail(err, -EINVAL, "%s: two Thunderbolt ports report interface %s",
			    h->name, b);
	}
	return 0;
}

/* Two ports with the same id (ids sorted): an error naming the host(s). */
static int
same_id_check(const struct build *bd, struct jc_err *err)
{
	const struct jc_host *hosts = bd->g->hosts;

	for (size_t k = 1; k < bd->nents; k++) {
		const struct id_ent *x = &bd->ents[k - 1], *y = &bd->ents[k];
		const struct jc_host *a = &hosts[x->host];
		const struct jc_host *b = &hosts[y->host];

		if (strcasecmp(x->id, y->id) != 0)
			continue;
		if (a == b)
			return jc_fail(err, -EINVAL, "%s: two Thunderbolt ports report the same id %s",
			    a->name, y->id);
		return jc_fail(err, -EINVAL,
		    "%s and %s report the same Thunderbolt port id %s: is one machine listed twice?",
		    a->name, b->name, y->id);
	}
	return 0;
}

/* A new zeroed cable at the end of g's list. */
static struct graph_cable *
cable_new(struct build *bd)
{
	struct graph *g = bd->g;
	struct graph_cable *c;

	if (g->ncables == bd->cap_cables) {
		bd->cap_cables = bd->cap_cables ? 2 * bd->cap_cables : 16;
		g->cables = xreallocarray(g->cables, bd->cap_cables, sizeof(*g->cables));
	}
	c = &g->cables[g->ncables++];
	memset(c, 0, sizeof(*c));
	return c;
}

/* The cable from port p of host i to the port e names; counted per pair. */
static void
cable_add(struct build *bd, size_t i, size_t p, const struct id_ent *e)
{
	struct graph *g = bd->g;
	size_t n = g->n;
	const struct jc_port *pt = &g->hosts[i].ports[p];
	const struct jc_port *qt = &g->hosts[e->host].ports[e->port];
	struct graph_cable *c = cable_new(bd);

	end_fill(&c->end[0], &g->hosts[i], i, p);
	end_fill(&c->end[1], &g->hosts[e->host], e->host, e->port);
	if (pt->link_gbps > 0 && qt->link_gbps > 0)
		c->gbps = pt->link_gbps < qt->link_gbps ? pt->link_gbps : qt->link_gbps;
	else
		c->gbps = pt->link_gbps > 0 ? pt->link_gbps : qt->link_gbps;
	if (c->gbps < 0)
		c->gbps = 0;
	c->link = link_class(c->gbps);
	c->via_dock = pt->peer_via_dock || qt->peer_via_dock;
	c->inferred = pt->peer_inferred || qt->peer_inferred;
	cable_rdma(c, g->hosts);
	g->count[i * n + e->host]++;
	g->count[e->host * n + i]++;
	if (c->rdma != JC_NO) {
		g->rcount[i * n + e->host]++;
		g->rcount[e->host * n + i]++;
	}
}

/* Port p of host i: a cable (when first met), a stray, or nothing. */
static void
port_link(struct build *bd, size_t i, size_t p)
{
	const struct jc_host *hosts = bd->g->hosts;
	const struct jc_port *pt = &hosts[i].ports[p];
	const struct id_ent *e;
	const struct jc_port *qt;

	if (pt->peer_id == NULL)
		return;
	e = id_find(bd->ents, bd->nents, pt->peer_id);
	if (e == NULL) {
		stray_add(bd->g, GRAPH_STRAY_OUTSIDE, i, p, 0, 0, pt->peer_id);
		return;
	}
	qt = &hosts[e->host].ports[e->port];
	if (pt->id == NULL || qt->peer_id == NULL || strcasecmp(qt->peer_id, pt->id) != 0) {
		stray_add(bd->g, GRAPH_STRAY_ONE_SIDED, i, p, e->host, e->port, pt->peer_id);
		return;
	}
	if (e->host == i) {
		stray_add(bd->g, GRAPH_STRAY_SELF, i, p, e->host, e->port, pt->peer_id);
		return;
	}
	if (bd->assigned[i][p])
		return;
	bd->assigned[i][p] = true;
	bd->assigned[e->host][e->port] = true;
	if (pt->iface == NULL || qt->iface == NULL) {
		/* one cable, one entry: from its first end met */
		stray_add(bd->g, GRAPH_STRAY_NO_IFACE, i, p, e->host, e->port, pt->peer_id);
		return;
	}
	cable_add(bd, i, p, e);
}

int
graph_build(const struct jc_host *hosts, size_t n, struct graph **out, struct jc_err *err)
{
	struct graph *g = xcalloc(1, sizeof(*g));
	struct build bd = { .g = g };
	size_t nports = 0;
	int r = 0;

	*out = NULL;
	g->hosts = hosts;
	g->n = n;
	g->order = xcalloc(n ? n : 1, sizeof(*g->order));
	g->norder = xcalloc(n ? n : 1, sizeof(*g->norder));
	g->count = xcalloc(n > 0 ? n * n : 1, sizeof(*g->count));
	g->rcount = xcalloc(n > 0 ? n * n : 1, sizeof(*g->rcount));
	bd.assigned = xcalloc(n ? n : 1, sizeof(*bd.assigned));
	for (size_t i = 0; i < n; i++)
		nports += hosts[i].nports;
	bd.ents = xcalloc(nports ? nports : 1, sizeof(*bd.ents));

	for (size_t i = 0; i < n; i++) {
		host_port_order(&bd, i);
		if (r == 0)
			r = same_iface_check(g, i, err);
	}
	if (r != 0)
		goto out;
	if (bd.nents > 0)
		qsort(bd.ents, bd.nents, sizeof(*bd.ents), id_ent_cmp);
	r = same_id_check(&bd, err);
	if (r != 0)
		goto out;

	/* Walk hosts, then ports in mlx order; a cable is numbered when first met. */
	for (size_t i = 0; i < n; i++)
		for (size_t o = 0; o < g->norder[i]; o++)
			port_link(&bd, i, g->order[i][o]);
	pair_index(g, false);
	pair_index(g, true);
out:
	for (size_t i = 0; i < n; i++)
		free(bd.assigned[i]);
	free(bd.assigned);
	free(bd.ents);
	if (r != 0) {
		graph_free(g);
		return r;
	}
	*out = g;
	return 0;
}

void
graph_free(struct graph *g)
{
	if (g == NULL)
		return;
	for (size_t i = 0; i < g->n; i++)
		free(g->order[i]);
	free(g->order);
	free(g->norder);
	for (size_t k = 0; k < g->ncables; k++) {
		free(g->cables[k].end[0].rdma);
		free(g->cables[k].end[1].rdma);
		free(g->cables[k].why_not);
	}
	free(g->cables);
	free(g->strays);
	free(g->count);
	free(g->rcount);
	free(g->pair_off);
	free(g->pair_cab);
	free(g->rpair_off);
	free(g->rpair_cab);
	free(g);
}

unsigned
graph_count(const struct graph *g, size_t i, size_t j, bool rdma)
{
	if (i >= g->n || j >= g->n)
		return 0;
	return (rdma ? g->rcount : g->count)[i * g->n + j];
}

long
graph_pair_cable(const struct graph *g, size_t i, size_t j, size_t k, bool rdma, int *side_i)
{
	size_t lo = i < j ? i : j, hi = i < j ? j : i;
	const size_t *off = rdma ? g->rpair_off : g->pair_off;
	const size_t *cab = rdma ? g->rpair_cab : g->pair_cab;
	size_t c;

	if (i >= g->n || j >= g->n || i == j || k >= graph_count(g, i, j, rdma))
		return -1;
	c = cab[off[lo * g->n + hi] + k];
	if (side_i != NULL)
		*side_i = g->cables[c].end[0].host == i ? 0 : 1;
	return (long)c;
}

bool
graph_is_mesh(const struct graph *g, bool rdma, size_t *mi, size_t *mj)
{
	for (size_t i = 0; i < g->n; i++) {
		for (size_t j = 0; j < g->n; j++) {
			if (i != j && graph_count(g, i, j, rdma) == 0) {
				if (mi != NULL)
					*mi = i;
				if (mj != NULL)
					*mj = j;
				return false;
			}
		}
	}
	return true;
}

/*
 * Ring search. Bit sets of hosts, nw 64-bit words each. The depth-first
 * search visits neighbours in increasing index, exactly as mlx's
 * extract_rings does from start node 0, so the first cycle it closes
 * through every host is mlx's rings[0]. Pruning removes only branches that
 * cannot be completed into such a cycle, which leaves the first one found
 * unchanged:
 *  - host 0 and the current end of the path must each have an unvisited
 *    neighbour (one to leave from, one to come back through);
 *  - every unvisited host needs two neighbours among the unvisited hosts,
 *    the path's end and host 0 (it is entered and left once);
 *  - the unvisited hosts must all be reachable from the path's end without
 *    going through visited hosts.
 */
struct ring_ctx {
	size_t n, nw;
	uint64_t *adj;		/* n * nw */
	uint64_t *visited;	/* nw */
	uint64_t *seen, *front, *next;	/* scratch, nw each */
	size_t *path;
	unsigned long steps;
	bool gave_up;
};

#define BIT_TEST(s, i) (((s)[(i) / 64] >> ((i) % 64)) & 1)
#define BIT_SET(s, i) ((s)[(i) / 64] |= (uint64_t)1 << ((i) % 64))
#define BIT_CLR(s, i) ((s)[(i) / 64] &= ~((uint64_t)1 << ((i) % 64)))

static const uint64_t *
adj_of(const struct ring_ctx *rc, size_t u)
{
	return rc->adj + u * rc->nw;
}

static bool
ring_feasible(struct ring_ctx *rc, size_t tail)
{
	size_t nw = rc->nw, n = rc->n;
	bool any_unvisited = false, start_ok = false, tail_ok = false;
	const uint64_t *a0 = adj_of(rc, 0), *at = adj_of(rc, tail);

	for (size_t w = 0; w < nw; w++) {
		uint64_t unv = ~rc->visited[w];

		if (w == nw - 1 && n % 64 != 0)
			unv &= ((uint64_t)1 << (n % 64)) - 1;
		if (unv)
			any_unvisited = true;
		if (a0[w] & unv)
			start_ok = true;
		if (at[w] & unv)
			tail_ok = true;
	}
	if (!any_unvisited || n == 2)
		return true;	/* mlx's 2-host "ring" uses one cable both ways */
	if (!start_ok || !tail_ok)
		return false;

	/* Degree of each unvisited host within unvisited + {tail, 0}. */
	for (size_t v = 0; v < n; v++) {
		const uint64_t *av;
		unsigned deg = 0;

		if (BIT_TEST(rc->visited, v))
			continue;
		av = adj_of(rc, v);
		if (BIT_TEST(av, tail))
			deg++;
		if (tail != 0 && BIT_TEST(av, 0))
			deg++;
		for (size_t w = 0; w < nw && deg < 2; w++) {
			uint64_t unv = ~rc->visited[w] & av[w];

			deg += (unsigned)__builtin_popcountll(unv);
		}
		if (deg < 2)
			return false;
	}

	/* Unvisited hosts connected to the tail through unvisited hosts. */
	memset(rc->seen, 0, nw * sizeof(uint64_t));
	memset(rc->front, 0, nw * sizeof(uint64_t));
	BIT_SET(rc->front, tail);
	for (;;) {
		bool grew = false;

		memset(rc->next, 0, nw * sizeof(uint64_t));
		for (size_t w = 0; w < nw; w++) {
			uint64_t f = rc->front[w];

			while (f) {
				size_t u = w * 64 + (size_t)__builtin_ctzll(f);
				const uint64_t *au = adj_of(rc, u);

				f &= f - 1;
				for (size_t x = 0; x < nw; x++)
					rc->next[x] |= au[x] & ~rc->visited[x] & ~rc->seen[x];
			}
		}
		for (size_t w = 0; w < nw; w++) {
			if (rc->next[w])
				grew = true;
			rc->seen[w] |= rc->next[w];
			rc->front[w] = rc->next[w];
		}
		if (!grew)
			break;
	}
	for (size_t w = 0; w < nw; w++) {
		uint64_t unv = ~rc->visited[w];

		if (w == nw - 1 && n % 64 != 0)
			unv &= ((uint64_t)1 << (n % 64)) - 1;
		if (unv & ~rc->seen[w])
			return false;
	}
	return true;
}

static bool
ring_dfs(struct ring_ctx *rc, size_t u, size_t depth)
{
	const uint64_t *au = adj_of(rc, u);

	if (depth == rc->n)
		return BIT_TEST(au, 0);
	if (++rc->steps > RING_BUDGET) {
		rc->gave_up = true;
		return false;
	}
	for (size_t w = 0; w < rc->nw; w++) {
		uint64_t cand = au[w] & ~rc->visited[w];

		while (cand) {
			size_t v = w * 64 + (size_t)__builtin_ctzll(cand);

			cand &= cand - 1;
			BIT_SET(rc->visited, v);
			rc->path[depth] = v;
			if (ring_feasible(rc, v) && ring_dfs(rc, v, depth + 1))
				return true;
			BIT_CLR(rc->visited, v);
			if (rc->gave_up)
				return false;
		}
	}
	return false;
}

int
graph_find_ring(const struct graph *g, bool rdma, size_t *ring, unsigned *width)
{
	struct ring_ctx rc = { 0 };
	int r = GRAPH_RING_NONE;

	if (width != NULL)
		*width = 0;
	if (g->n < 2)
		return GRAPH_RING_NONE;
	rc.n = g->n;
	rc.nw = (g->n + 63) / 64;
	rc.adj = xcalloc(rc.n * rc.nw, sizeof(uint64_t));
	rc.visited = xcalloc(rc.nw, sizeof(uint64_t));
	rc.seen = xcalloc(rc.nw, sizeof(uint64_t));
	rc.front = xcalloc(rc.nw, sizeof(uint64_t));
	rc.next = xcalloc(rc.nw, sizeof(uint64_t));
	rc.path = xcalloc(rc.n, sizeof(size_t));
	for (size_t i = 0; i < rc.n; i++)
		for (size_t j = 0; j < rc.n; j++)
			if (i != j && graph_count(g, i, j, rdma) > 0)
				BIT_SET(rc.adj + i * rc.nw, j);

	BIT_SET(rc.visited, 0);
	rc.path[0] = 0;
	if (ring_feasible(&rc, 0) && ring_dfs(&rc, 0, 1)) {
		unsigned wmin = ~0U;

		for (size_t k = 0; k < rc.n; k++) {
			unsigned c = graph_count(g, rc.path[k], rc.path[(k + 1) % rc.n], rdma);

			if (c < wmin)
				wmin = c;
		}
		memcpy(ring, rc.path, rc.n * sizeof(size_t));
		if (width != NULL)
			*width = wmin;
		r = GRAPH_RING_FOUND;
	} else if (rc.gave_up) {
		r = GRAPH_RING_GAVE_UP;
	}
	free(rc.adj);
	free(rc.visited);
	free(rc.seen);
	free(rc.front);
	free(rc.next);
	free(rc.path);
	return r;
}

const char *
graph_backend_name(enum graph_backend b)
{
	switch (b) {
	case GRAPH_JACCL:
		return "jaccl";
	case GRAPH_JACCL_RING:
		return "jaccl-ring";
	case GRAPH_RING:
	default:
		return "ring";
	}
}

char *
graph_port_label(const struct jc_host *h, size_t port)
{
	const struct jc_port *p = &h->ports[port];
	char *r, *i, *label;

	/* both names come from the host: printable only */
	if (p->receptacle == NULL && p->iface == NULL)
		return xasprintf("bus %d", p->bus);
	r = p->receptacle != NULL ? jc_printable(p->receptacle, 64) : NULL;
	i = p->iface != NULL ? jc_printable(p->iface, 64) : NULL;
	if (r != NULL && i != NULL)
		label = xasprintf("Thunderbolt %s (%s)", r, i);
	else if (i != NULL)
		label = xstrdup(i);
	else
		label = xasprintf("Thunderbolt %s", r);
	free(r);
	free(i);
	return label;
}

char *
graph_no_iface_ends(const struct graph *g, const struct graph_stray *st)
{
	const struct jc_host *h[2] = { &g->hosts[st->host], &g->hosts[st->peer_host] };
	size_t port[2] = { st->port, st->peer_port };
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (int e = 0; e < 2; e++) {
		char *l;

		if (h[e]->ports[port[e]].iface != NULL)
			continue;
		l = graph_port_label(h[e], port[e]);
		buf_printf(&b, "%s%s %s", b.len ? " and " : "", graph_host_label(h[e]), l);
		free(l);
	}
	return buf_steal(&b);
}

static bool
port_has_cable(const struct graph *g, size_t host, size_t port)
{
	for (size_t k = 0; k < g->ncables; k++)
		for (int s = 0; s < 2; s++)
			if (g->cables[k].end[s].host == host && g->cables[k].end[s].port == port)
				return true;
	return false;
}

char *
graph_free_ports(const struct graph *g, size_t i)
{
	const struct jc_host *h = &g->hosts[i];
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (size_t o = 0; o < g->norder[i]; o++) {
		size_t p = g->order[i][o];
		char *l;

		if (port_has_cable(g, i, p))
			continue;
		l = graph_port_label(h, p);
		buf_printf(&b, "%s%s %s", b.len ? ", " : "", h->name, l);
		free(l);
	}
	return buf_steal(&b);
}

const char *
graph_host_label(const struct jc_host *h)
{
	return h->target != NULL ? h->target : h->name != NULL ? h->name : "";
}

char *
graph_node_id(size_t i)
{
	struct jc_buf b = { 0 };

	do {
		char c = (char)('a' + i % 26);

		buf_append(&b, &c, 1);
		i /= 26;
	} while (i != 0);
	return buf_steal(&b);
}

/* "free ports: a X, b Y" or "mac2 and mac4 have no free port". */
static void
free_ports_text(struct jc_buf *b, const struct graph *g, size_t i, size_t j)
{
	char *fi = graph_free_ports(g, i), *fj = graph_free_ports(g, j);

	if (*fi == '\0' && *fj == '\0')
		buf_printf(b, "%s and %s have no free port", g->hosts[i].name, g->hosts[j].name);
	else if (*fi == '\0')
		buf_printf(b, "free ports: %s (%s has none)", fj, g->hosts[i].name);
	else if (*fj == '\0')
		buf_printf(b, "free ports: %s (%s has none)", fi, g->hosts[j].name);
	else
		buf_printf(b, "free ports: %s, %s", fi, fj);
	free(fi);
	free(fj);
}

/* Why cables exist between i and j but RDMA can use none of them. */
static void
pair_rdma_text(struct jc_buf *b, const struct graph *g, size_t i, size_t j)
{
	for (size_t k = 0; k < graph_count(g, i, j, false); k++) {
		int s;
		long c = graph_pair_cable(g, i, j, k, false, &s);
		const struct graph_cable *cb = &g->cables[c];

		buf_printf(b, "%scable %s %s - %s %s: %s", k ? "; " : "",
		    g->hosts[i].name, cb->end[s].iface, g->hosts[j].name, cb->end[!s].iface,
		    cb->why_not ? cb->why_not : "?");
	}
}

static void
mesh_missing_text(struct jc_buf *b, const struct graph *g, bool rdma, size_t i, size_t j)
{
	if (rdma && graph_count(g, i, j, false) > 0) {
		buf_printf(b, "no cable between %s and %s can carry RDMA (", g->hosts[i].name,
		    g->hosts[j].name);
		pair_rdma_text(b, g, i, j);
		buf_puts(b, ")");
		return;
	}
	buf_printf(b, "no cable between %s and %s; ", g->hosts[i].name, g->hosts[j].name);
	free_ports_text(b, g, i, j);
}

/* Explain why no ring passes through every host. */
static void
ring_missing_text(struct jc_buf *b, const struct graph *g, bool rdma, int why)
{
	size_t n = g->n;
	bool said = false;
	size_t *comp;

	if (why == GRAPH_RING_GAVE_UP) {
		buf_puts(b, "the ring search gave up (too many possible paths)");
		return;
	}
	if (n < 2) {
		buf_puts(b, "a ring needs at least two hosts");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t deg = 0, nb = 0;
		char *fp;

		for (size_t j = 0; j < n; j++)
			if (j != i && graph_count(g, i, j, rdma) > 0) {
				deg++;
				nb = j;
			}
		if (deg >= 2 || (n == 2 && deg == 1))
			continue;
		fp = graph_free_ports(g, i);
		if (said)
			buf_puts(b, "; ");
		if (deg == 0)
			buf_printf(b, "%s has no cable%s to any other host", g->hosts[i].name,
			    rdma ? " RDMA can use" : "");
		else
			buf_printf(b, "%s is cabled%s to one host only (%s)", g->hosts[i].name,
			    rdma ? " for RDMA" : "", g->hosts[nb].name);
		if (*fp != '\0')
			buf_printf(b, ", free ports: %s", fp);
		else
			buf_printf(b, ", %s has no free port", g->hosts[i].name);
		free(fp);
		said = true;
	}
	if (said)
		return;
	/* Components by repeated relabelling (n is small). */
	comp = xcalloc(n, sizeof(*comp));
	for (size_t i = 0; i < n; i++)
		comp[i] = i;
	for (bool ch = true; ch;) {
		ch = false;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++)
				if (graph_count(g, i, j, rdma) > 0 && comp[j] < comp[i]) {
					comp[i] = comp[j];
					ch = true;
				}
	}
	for (size_t i = 1; i < n; i++) {
		if (comp[i] != comp[0]) {
			buf_printf(b, "%s and %s are not joined by any path of cables",
			    g->hosts[0].name, g->hosts[i].name);
			said = true;
			break;
		}
	}
	free(comp);
	if (!said)
		buf_puts(b, "no cycle of cables passes through every host once");
}

static void
host_rdma_reason(const struct graph *g, size_t i, struct jc_buf *b)
{
	const struct jc_host *h = &g->hosts[i];

	if (h->rdma_enabled == JC_NO)
		buf_puts(b, "rdma_ctl status: disabled");
	else if (h->rdma_listed == JC_NO)
		buf_puts(b, "ibv_devices lists no device");
}

static bool
host_rdma_off(const struct jc_host *h)
{
	return h->rdma_enabled == JC_NO || h->rdma_listed == JC_NO;
}

/*
 * Collect per-host reasons from the cables a backend would use: for a
 * mesh the first cable of each pair, for a ring the first width cables of
 * each ring edge. reasons[i] gets the first reason met for host i.
 */
static void
used_problems(const struct graph *g, const size_t *ring, unsigned width, char **reasons)
{
	size_t n = g->n;

	for (size_t i = 0; i < n; i++) {
		struct jc_buf b = { 0 };

		host_rdma_reason(g, i, &b);
		if (b.len)
			reasons[i] = buf_steal(&b);
		buf_free(&b);
	}
	for (size_t a = 0; a < n; a++) {
		for (size_t bb = 0; bb < n; bb++) {
			size_t i = a, j = bb;
			unsigned lim = 1;

			if (ring != NULL) {
				if (bb != 0 || n < 2)
					continue;
				i = ring[a];
				j = ring[(a + 1) % n];
				lim = width ? width : 1;
			} else if (i >= j) {
				continue;
			}
			for (unsigned k = 0; k < lim; k++) {
				int s;
				long c = graph_pair_cable(g, i, j, k, false, &s);
				const struct graph_cable *cb;

				if (c < 0)
					break;
				cb = &g->cables[c];
				if (cb->rdma != JC_NO)
					continue;
				for (int e = 0; e < 2; e++) {
					size_t h = cb->end[e].host;

					if (reasons[h] == NULL)
						reasons[h] = xasprintf("%s: %s", cb->end[e].iface,
						    cb->why_not);
				}
			}
		}
	}
}

static size_t
reasons_to_lines(const struct graph *g, char **reasons, struct jc_strv *out)
{
	size_t k = 0;

	for (size_t i = 0; i < g->n; i++) {
		if (reasons[i] == NULL)
			continue;
		strv_push_owned(out, xasprintf("%s does not seem to have RDMA enabled (%s)",
		    g->hosts[i].name, reasons[i]));
		free(reasons[i]);
		reasons[i] = NULL;
		k++;
	}
	return k;
}

size_t
graph_rdma_problems(const struct graph *g, const struct graph_choice *c, struct jc_strv *out)
{
	char **reasons = xcalloc(g->n ? g->n : 1, sizeof(*reasons));
	size_t k;

	if (c->backend == GRAPH_JACCL)
		used_problems(g, NULL, 1, reasons);
	else
		used_problems(g, c->order, c->width, reasons);
	k = reasons_to_lines(g, reasons, out);
	free(reasons);
	return k;
}

static const char RDMA_SUMMARY[] =
    "Some of the hosts don't have RDMA enabled or they don't support RDMA.\n\n"
    "See https://ml-explore.github.io/mlx/build/html/usage/distributed.html\n"
    "for instructions on how to enable RDMA.";

static bool
hosts_rdma_ok(const struct graph *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (host_rdma_off(&g->hosts[i]))
			return false;
	return true;
}

static int
fail_buf(struct jc_err *err, struct jc_buf *b)
{
	int r = jc_fail(err, -EINVAL, "%s", b->data ? b->data : "");

	buf_free(b);
	return r;
}

/* One line per host whose used cables (ring, or the mesh when NULL) lack RDMA. */
static void
rdma_lines(struct jc_buf *b, const struct graph *g, const size_t *ring, unsigned width)
{
	char **reasons = xcalloc(g->n ? g->n : 1, sizeof(*reasons));
	struct jc_strv lines = { 0 };

	used_problems(g, ring, width, reasons);
	reasons_to_lines(g, reasons, &lines);
	free(reasons);
	for (size_t i = 0; i < lines.n; i++)
		buf_printf(b, "%s\n", lines.v[i]);
	strv_free(&lines);
}

/* The RDMA error: per-host lines (for the cables of ring or mesh), summary. */
static int
fail_rdma(const struct graph *g, const size_t *ring, unsigned width, bool mesh,
    struct jc_err *err)
{
	struct jc_buf b = { 0 };

	rdma_lines(&b, g, mesh ? NULL : ring, width);
	if (mesh) {
		size_t mi, mj;

		if (!graph_is_mesh(g, true, &mi, &mj)) {
			mesh_missing_text(&b, g, true, mi, mj);
			buf_puts(&b, "\n");
		}
	}
	buf_printf(&b, "\n%s", RDMA_SUMMARY);
	return fail_buf(err, &b);
}

static void
choice_set(struct graph_choice *c, enum graph_backend be, const size_t *order, size_t n,
    unsigned width, bool rdma)
{
	c->backend = be;
	c->order = xcalloc(n ? n : 1, sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		c->order[i] = order != NULL ? order[i] : i;
	c->width = width;
	c->rdma = rdma;
}

/* What the cables allow: TCP ring and mesh, and the same over RDMA. */
struct cands {
	size_t *ring, *rring;	/* the ring found, and the RDMA ring found */
	unsigned width, rwidth;
	int rr, rrr;		/* GRAPH_RING_* of each search */
	bool mesh, rmesh;
	size_t mi, mj;		/* a pair without a cable when !mesh */
};

static void
cands_find(const struct graph *g, struct cands *k)
{
	size_t n = g->n;

	memset(k, 0, sizeof(*k));
	k->ring = xcalloc(n ? n : 1, sizeof(size_t));
	k->rring = xcalloc(n ? n : 1, sizeof(size_t));
	k->rr = graph_find_ring(g, false, k->ring, &k->width);
	k->mesh = graph_is_mesh(g, false, &k->mi, &k->mj);
	k->rmesh = k->mesh && graph_is_mesh(g, true, NULL, NULL) && hosts_rdma_ok(g);
	k->rrr = graph_find_ring(g, true, k->rring, &k->rwidth);
	if (!hosts_rdma_ok(g))
		k->rrr = GRAPH_RING_NONE;
}

static int
fail_no_ring(const struct graph *g, int rr, struct jc_err *err)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "Could not find a full ring.\n");
	ring_missing_text(&b, g, false, rr);
	buf_printf(&b, "\n\n%s", DOT_HINT);
	return fail_buf(err, &b);
}

static int
choose_jaccl(const struct graph *g, const struct cands *k, struct graph_choice *c,
    struct jc_err *err)
{
	size_t n = g->n;

	if (!k->mesh) {
		struct jc_buf b = { 0 };

		buf_printf(&b, "Incomplete mesh, %s is not connected to %s\n",
		    g->hosts[k->mi].name, g->hosts[k->mj].name);
		mesh_missing_text(&b, g, false, k->mi, k->mj);
		buf_printf(&b, "\n\n%s", DOT_HINT);
		return fail_buf(err, &b);
	}
	if (!k->rmesh)
		return fail_rdma(g, NULL, 1, true, err);
	if (n > GRAPH_MESH_MAX)
		return jc_fail(err, -EINVAL,
		    "JACCL's mesh supports at most %d ranks, not %zu; --backend jaccl-ring uses the same cables",
		    GRAPH_MESH_MAX, n);
	choice_set(c, GRAPH_JACCL, NULL, n, 1, true);
	return 0;
}

/* The backend the user named with --backend. */
static int
choose_forced(const struct graph *g, const char *forced, const struct cands *k,
    struct graph_choice *c, struct jc_err *err)
{
	if (strcmp(forced, "ring") == 0) {
		if (k->rr != GRAPH_RING_FOUND)
			return fail_no_ring(g, k->rr, err);
		choice_set(c, GRAPH_RING, k->ring, g->n, k->width, false);
		return 0;
	}
	if (strcmp(forced, "jaccl") == 0)
		return choose_jaccl(g, k, c, err);
	if (strcmp(forced, "jaccl-ring") == 0) {
		if (k->rr != GRAPH_RING_FOUND)
			return fail_no_ring(g, k->rr, err);
		if (k->rrr != GRAPH_RING_FOUND)
			return fail_rdma(g, k->ring, k->width, false, err);
		choice_set(c, GRAPH_JACCL_RING, k->rring, g->n, k->rwidth, true);
		return 0;
	}
	return jc_fail(err, -EINVAL, "unknown backend '%s'", forced);
}

/* Neither a ring nor a mesh: say which pair and which ring link is missing. */
static int
fail_no_topology(const struct graph *g, const struct cands *k, struct jc_err *err)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "Neither thunderbolt mesh nor ring found.\n");
	if (g->n >= 2) {
		mesh_missing_text(&b, g, false, k->mi, k->mj);
		buf_puts(&b, "; ");
		ring_missing_text(&b, g, false, k->rr);
	} else {
		buf_puts(&b, "no host to configure");
	}
	buf_printf(&b, "\n%s", DOT_HINT2);
	return fail_buf(err, &b);
}

/* A mesh without RDMA and no ring at all. */
static int
fail_no_rdma_no_ring(const struct graph *g, int rr, struct jc_err *err)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "RDMA is not available and ring is not found.\n");
	rdma_lines(&b, g, NULL, 1);
	ring_missing_text(&b, g, false, rr);
	buf_printf(&b, "\n%s", DOT_HINT2);
	return fail_buf(err, &b);
}

/* mlx.distributed_config's own order: JACCL mesh, JACCL ring, TCP ring. */
static int
choose_auto(const struct graph *g, const struct cands *k, struct graph_choice *c,
    struct jc_err *err)
{
	size_t n = g->n, mi, mj;

	if (k->rr != GRAPH_RING_FOUND && !k->mesh)
		return fail_no_topology(g, k, err);
	if (k->rmesh && n > GRAPH_MESH_MAX && k->rrr == GRAPH_RING_FOUND)
		strv_push_owned(&c->warnings, xasprintf(
		    "%zu hosts are a full mesh, but JACCL's mesh supports at most %d ranks: using jaccl-ring",
		    n, GRAPH_MESH_MAX));
	if (k->rmesh && n <= GRAPH_MESH_MAX) {
		choice_set(c, GRAPH_JACCL, NULL, n, 1, true);
	} else if (k->rrr == GRAPH_RING_FOUND) {
		choice_set(c, GRAPH_JACCL_RING, k->rring, n, k->rwidth, true);
		/* Cabled as a mesh, but RDMA cannot use some pair: say which. */
		if (k->mesh && !k->rmesh && !graph_is_mesh(g, true, &mi, &mj)) {
			struct jc_buf b = { 0 };

			buf_puts(&b, "not a JACCL mesh: ");
			mesh_missing_text(&b, g, true, mi, mj);
			strv_push_owned(&c->warnings, buf_steal(&b));
		}
	} else if (k->rr == GRAPH_RING_FOUND) {
		choice_set(c, GRAPH_RING, k->ring, n, k->width, false);
	} else {
		return fail_no_rdma_no_ring(g, k->rr, err);
	}
	/* A TCP ring chosen although cables exist: say why RDMA was not used. */
	if (c->backend == GRAPH_RING && graph_rdma_problems(g, c, &c->warnings) > 0)
		strv_push(&c->warnings, RDMA_SUMMARY);
	return 0;
}

int
graph_choose(const struct graph *g, const char *forced, struct graph_choice *c,
    struct jc_err *err)
{
	struct cands k;
	int r;

	memset(c, 0, sizeof(*c));
	cands_find(g, &k);
	if (forced != NULL)
		r = choose_forced(g, forced, &k, c, err);
	else
		r = choose_auto(g, &k, c, err);
	/* JACCL's ring drives at most 4 cables per direction. */
	if (r == 0 && c->backend == GRAPH_JACCL_RING && c->width > GRAPH_RING_WIDTH_MAX) {
		strv_push_owned(&c->warnings, xasprintf(
		    "using %d of the %u cables between ring neighbours: JACCL's ring uses at most %d",
		    GRAPH_RING_WIDTH_MAX, c->width, GRAPH_RING_WIDTH_MAX));
		c->width = GRAPH_RING_WIDTH_MAX;
	}
	free(k.ring);
	free(k.rring);
	if (r != 0)
		graph_choice_clear(c);
	return r;
}

void
graph_choice_clear(struct graph_choice *c)
{
	if (c == NULL)
		return;
	free(c->order);
	strv_free(&c->warnings);
	memset(c, 0, sizeof(*c));
}
