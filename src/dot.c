/* SPDX-License-Identifier: MIT */
/*
 * DOT output of the cabling: mlx's exact text by default, checked by
 * reading it back with cgraph; an extended form built and written by cgraph.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dot.h"

/* Rail colours: cable k of a pair is drawn in RAIL[k % n]. */
static const char *const RAIL[] = { "black", "blue", "darkgreen", "purple", "orange" };

/* A DOT quoted string body: '"' and '\' escaped (host names never have them). */
static void
buf_quoted(struct jc_buf *b, const char *text)
{
	/* names and models come from the hosts: no control character gets through */
	char *safe = jc_printable(text, 0);

	for (const char *s = safe; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			buf_append(b, "\\", 1);
		buf_append(b, s, 1);
	}
	free(safe);
}

/* "?/en6\nno interface at mac1 Thunderbolt 2", quoted for DOT. */
static void
no_iface_label(struct jc_buf *b, const struct graph *g, const struct graph_stray *st)
{
	const char *x = g->hosts[st->host].ports[st->port].iface;
	const char *y = g->hosts[st->peer_host].ports[st->peer_port].iface;
	char *ends = graph_no_iface_ends(g, st);

	buf_quoted(b, x ? x : "?");
	buf_puts(b, "/");
	buf_quoted(b, y ? y : "?");
	buf_puts(b, "\\nno interface at ");
	buf_quoted(b, ends);
	free(ends);
}

static void
mlx_text(struct jc_buf *b, const struct graph *g)
{
	buf_puts(b, "graph G {\n  node [shape=rectangle];\n");
	for (size_t i = 0; i < g->n; i++) {
		char *id = graph_node_id(i);

		buf_printf(b, "  %s [label=\"", id);
		buf_quoted(b, graph_host_label(&g->hosts[i]));
		buf_puts(b, "\"];\n");
		free(id);
	}
	/* Cables are numbered from their lower host's sorted ports: mlx's order. */
	for (size_t k = 0; k < g->ncables; k++) {
		const struct graph_cable *c = &g->cables[k];
		char *a = graph_node_id(c->end[0].host), *z = graph_node_id(c->end[1].host);

		buf_printf(b, "  %s -- %s [label=\"", a, z);
		buf_quoted(b, c->end[0].iface);
		buf_puts(b, "/");
		buf_quoted(b, c->end[1].iface);
		buf_puts(b, "\"]\n");
		free(a);
		free(z);
	}
	/*
	 * Cables without an interface at one end or both: mlx draws none (its
	 * iface_map lookup fails), so after its edges, one edge each with "?"
	 * for the unknown name and the reason.
	 */
	for (size_t s = 0; s < g->nstrays; s++) {
		const struct graph_stray *st = &g->strays[s];
		char *a, *z;

		if (st->kind != GRAPH_STRAY_NO_IFACE)
			continue;
		a = graph_node_id(st->host);
		z = graph_node_id(st->peer_host);
		buf_printf(b, "  %s -- %s [label=\"", a, z);
		no_iface_label(b, g, st);
		buf_puts(b, "\"]\n");
		free(a);
		free(z);
	}
	buf_puts(b, "}\n");
}

static size_t
count_no_iface(const struct graph *g)
{
	size_t n = 0;

	for (size_t s = 0; s < g->nstrays; s++)
		n += g->strays[s].kind == GRAPH_STRAY_NO_IFACE;
	return n;
}

/* Hosts i and j are joined by a cable without an interface. */
static bool
joined_no_iface(const struct graph *g, size_t i, size_t j)
{
	for (size_t s = 0; s < g->nstrays; s++) {
		const struct graph_stray *st = &g->strays[s];

		if (st->kind == GRAPH_STRAY_NO_IFACE &&
		    ((st->host == i && st->peer_host == j) || (st->host == j && st->peer_host == i)))
			return true;
	}
	return false;
}

static int
quiet_errf(char *msg)
{
	(void)msg;
	return 0;
}

int
dot_check(const char *text, size_t *nnodes, size_t *nedges, struct jc_err *err)
{
	agusererrf old = agseterrf(quiet_errf);
	Agraph_t *gr;
	int r = 0;

	agreseterrors();
	gr = agmemread(text);
	agseterrf(old);
	if (gr == NULL) {
		const char *m = aglasterr();

		return jc_fail(err, -EINVAL, "DOT text does not parse: %s", m ? m : "syntax error");
	}
	if (nnodes != NULL)
		*nnodes = (size_t)agnnodes(gr);
	if (nedges != NULL)
		*nedges = (size_t)agnedges(gr);
	agclose(gr);
	return r;
}

static void
set(void *obj, const char *name, const char *value)
{
	/* labels hold names and models from the hosts: no control character */
	char *safe = jc_printable(value, 0);

	agsafeset(obj, (char *)name, safe, (char *)"");
	free(safe);
}

static void
node_label(struct jc_buf *b, const struct jc_host *h)
{
	buf_puts(b, graph_host_label(h));
	if (h->model != NULL)
		buf_printf(b, "\\n%s", h->model);
	if (h->rdma_enabled == JC_NO || h->rdma_listed == JC_NO)
		buf_puts(b, "\\nRDMA off");
	else if (h->rdma_enabled == JC_YES || h->rdma_listed == JC_YES)
		buf_puts(b, "\\nRDMA on");
}

/* One node per host, labelled with its name (extended: model, RDMA). */
static Agnode_t **
dot_nodes(Agraph_t *gr, const struct graph *g, bool extended, struct jc_buf *b)
{
	Agnode_t **nodes = xcalloc(g->n ? g->n : 1, sizeof(*nodes));

	for (size_t i = 0; i < g->n; i++) {
		char *id = graph_node_id(i);

		nodes[i] = agnode(gr, id, 1);
		b->len = 0;
		buf_puts(b, "");
		if (extended)
			node_label(b, &g->hosts[i]);
		else
			buf_puts(b, graph_host_label(&g->hosts[i]));
		set(nodes[i], "label", b->data);
		free(id);
	}
	return nodes;
}

/* Extended: what cable k says beyond its interfaces, and its colour by rail. */
static void
cable_extras(Agedge_t *e, const struct graph *g, size_t k, struct jc_buf *b)
{
	const struct graph_cable *c = &g->cables[k];
	size_t rail = 0;

	for (size_t q = 0; q < k; q++)
		if (g->cables[q].end[0].host == c->end[0].host &&
		    g->cables[q].end[1].host == c->end[1].host)
			rail++;
	if (c->gbps > 0)
		buf_printf(b, "\\n%d Gb/s", c->gbps);
	if (c->via_dock)
		buf_puts(b, "\\nvia dock");
	if (c->inferred)
		buf_puts(b, "\\ninferred (no domain UUID)");
	if (c->rdma == JC_NO)
		buf_puts(b, "\\nno RDMA");
	set(e, "color", RAIL[rail % JC_ARRAY_LEN(RAIL)]);
	if (c->rdma == JC_NO)
		set(e, "style", "dashed");
	if (c->link == GRAPH_LINK_TB5)
		set(e, "penwidth", "2");
}

/* One edge per cable, labelled with its two interfaces. */
static void
dot_cables(Agraph_t *gr, Agnode_t **nodes, const struct graph *g, bool extended,
    struct jc_buf *b)
{
	for (size_t k = 0; k < g->ncables; k++) {
		const struct graph_cable *c = &g->cables[k];
		Agedge_t *e = agedge(gr, nodes[c->end[0].host], nodes[c->end[1].host], NULL, 1);

		b->len = 0;
		buf_printf(b, "%s/%s", c->end[0].iface, c->end[1].iface);
		if (extended)
			cable_extras(e, g, k, b);
		set(e, "label", b->data);
	}
}

/* Missing mesh links. */
static void
dot_missing(Agraph_t *gr, Agnode_t **nodes, const struct graph *g)
{
	for (size_t i = 0; i < g->n; i++) {
		for (size_t j = i + 1; j < g->n; j++) {
			Agedge_t *e;

			if (graph_count(g, i, j, false) > 0 || joined_no_iface(g, i, j))
				continue;
			e = agedge(gr, nodes[i], nodes[j], NULL, 1);
			set(e, "color", "red");
			set(e, "style", "dotted");
			set(e, "label", "missing");
		}
	}
}

/* The cgraph label of a cable one of whose ends has no interface name. */
static void
no_iface_edge_label(struct jc_buf *b, const struct graph *g, const struct graph_stray *st)
{
	const struct jc_port *pt = &g->hosts[st->host].ports[st->port];
	const struct jc_port *qt = &g->hosts[st->peer_host].ports[st->peer_port];
	char *ends = graph_no_iface_ends(g, st);

	buf_printf(b, "%s/%s\\nno interface at %s", pt->iface ? pt->iface : "?",
	    qt->iface ? qt->iface : "?", ends);
	free(ends);
	if (pt->peer_inferred || qt->peer_inferred)
		buf_puts(b, "\\ninferred (no domain UUID)");
	if (pt->link_gbps > 0 || qt->link_gbps > 0)
		buf_printf(b, "\\n%d Gb/s", pt->link_gbps > 0 &&
		    (qt->link_gbps <= 0 || pt->link_gbps < qt->link_gbps) ?
		    pt->link_gbps : qt->link_gbps);
}

/* The dashed node standing for a peer port no listed host has. */
static Agnode_t *
outside_node(Agraph_t *gr, size_t s, const char *peer_id, struct jc_buf *b)
{
	char *pid = xasprintf("peer_%zu", s);
	Agnode_t *other = agnode(gr, pid, 1);

	b->len = 0;
	buf_printf(b, "not listed\\n%.13s", peer_id);
	set(other, "label", b->data);
	set(other, "style", "dashed");
	set(other, "color", "gray");
	free(pid);
	return other;
}

/* Ports whose peer is elsewhere or does not see them back. */
static void
dot_strays(Agraph_t *gr, Agnode_t **nodes, const struct graph *g, struct jc_buf *b)
{
	for (size_t s = 0; s < g->nstrays; s++) {
		const struct graph_stray *st = &g->strays[s];
		const struct jc_port *pt = &g->hosts[st->host].ports[st->port];
		Agnode_t *other;
		Agedge_t *e;

		if (st->kind == GRAPH_STRAY_SELF)
			continue;
		if (st->kind == GRAPH_STRAY_OUTSIDE)
			other = outside_node(gr, s, st->peer_id, b);
		else
			other = nodes[st->peer_host];
		e = agedge(gr, nodes[st->host], other, NULL, 1);
		b->len = 0;
		if (st->kind == GRAPH_STRAY_NO_IFACE)
			/* one edge for the cable, whatever end lacks a name */
			no_iface_edge_label(b, g, st);
		else
			buf_printf(b, "%s%s", pt->iface ? pt->iface : "?",
			    st->kind == GRAPH_STRAY_ONE_SIDED ? "\\none-sided" : "");
		set(e, "label", b->data);
		set(e, "color", "gray");
		set(e, "style", "dashed");
	}
}

Agraph_t *
dot_build(const struct graph *g, bool extended, struct jc_err *err)
{
	Agraph_t *gr = agopen((char *)"G", Agundirected, NULL);
	Agnode_t **nodes;
	struct jc_buf b = { 0 };

	if (gr == NULL) {
		jc_fail(err, -ENOMEM, "cgraph: cannot create a graph");
		return NULL;
	}
	agattr(gr, AGNODE, (char *)"shape", (char *)"rectangle");
	nodes = dot_nodes(gr, g, extended, &b);
	dot_cables(gr, nodes, g, extended, &b);
	if (extended) {
		dot_missing(gr, nodes, g);
		dot_strays(gr, nodes, g, &b);
	}
	buf_free(&b);
	free(nodes);
	return gr;
}

int
dot_write(FILE *fp, const struct graph *g, unsigned flags, struct jc_err *err)
{
	struct jc_buf b = { 0 };
	size_t nn = 0, ne = 0;
	int r;

	if (flags & DOT_EXTENDED) {
		Agraph_t *gr = dot_build(g, true, err);

		if (gr == NULL)
			return err != NULL ? err->code : -ENOMEM;
		r = agwrite(gr, fp);
		agclose(gr);
		if (r != 0 || ferror(fp))
			return jc_fail(err, -EIO, "cannot write the DOT graph");
		return 0;
	}
	mlx_text(&b, g);
	if ((r = dot_check(b.data, &nn, &ne, err)) != 0)
		goto out;
	if (nn != g->n || ne != g->ncables + count_no_iface(g)) {
		r = jc_fail(err, -EINVAL, "DOT text reads back as %zu nodes and %zu edges, not %zu and %zu",
		    nn, ne, g->n, g->ncables + count_no_iface(g));
		goto out;
	}
	if (fwrite(b.data, 1, b.len, fp) != b.len || ferror(fp))
		r = jc_fail(err, -EIO, "cannot write the DOT graph");
out:
	buf_free(&b);
	return r;
}
