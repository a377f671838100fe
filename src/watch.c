/* SPDX-License-Identifier: MIT */
/*
 * Cable snapshots and their differences, for watch. See watch.h.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "watch.h"

void
watch_snapshot_build(const struct graph *g, struct watch_snapshot *out)
{
	out->n = g->ncables;
	out->cables = xcalloc(g->ncables ? g->ncables : 1, sizeof(*out->cables));
	for (size_t k = 0; k < g->ncables; k++) {
		const struct graph_cable *c = &g->cables[k];

		out->cables[k].gbps = c->gbps;
		for (int e = 0; e < 2; e++) {
			const struct jc_host *h = &g->hosts[c->end[e].host];
			const struct jc_iface *ifc = jc_host_iface(h, c->end[e].iface);
			struct watch_end *we = &out->cables[k].end[e];

			we->host = xstrdup(h->name);
			we->iface = xstrdup(c->end[e].iface);
			we->carrier = ifc ? ifc->carrier : JC_UNKNOWN;
			we->addr = ifc && ifc->ninet > 0 ? xstrdup(ifc->inet[0]) : NULL;
			we->rdma = c->end[e].rdma_state;
		}
	}
}

void
watch_snapshot_free(struct watch_snapshot *s)
{
	for (size_t k = 0; k < s->n; k++)
		for (int e = 0; e < 2; e++) {
			free(s->cables[k].end[e].host);
			free(s->cables[k].end[e].iface);
			free(s->cables[k].end[e].addr);
		}
	free(s->cables);
	s->cables = NULL;
	s->n = 0;
}

static bool
same_port(const struct watch_end *a, const struct watch_end *b)
{
	return strcmp(a->host, b->host) == 0 && strcmp(a->iface, b->iface) == 0;
}

/* The end of c on the same port as e, or -1. */
static int
end_on(const struct watch_cable *c, const struct watch_end *e)
{
	for (int i = 0; i < 2; i++)
		if (same_port(&c->end[i], e))
			return i;
	return -1;
}

static bool
same_cable(const struct watch_cable *a, const struct watch_cable *b)
{
	int i = end_on(b, &a->end[0]);

	return i >= 0 && same_port(&a->end[1], &b->end[1 - i]);
}

static bool
same_hosts(const struct watch_cable *a, const struct watch_cable *b)
{
	return (strcmp(a->end[0].host, b->end[0].host) == 0 &&
	    strcmp(a->end[1].host, b->end[1].host) == 0) ||
	    (strcmp(a->end[0].host, b->end[1].host) == 0 &&
	    strcmp(a->end[1].host, b->end[0].host) == 0);
}

static bool
str_eq(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

struct ev_list {
	struct watch_event *v;
	size_t n, cap;
};

static void
push(struct ev_list *l, enum watch_kind k, const struct watch_cable *b,
    const struct watch_cable *a, int end)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = xreallocarray(l->v, l->cap, sizeof(*l->v));
	}
	l->v[l->n++] = (struct watch_event){ k, b, a, end };
}

/* Per-end and per-link changes of one cable seen twice. */
static void
changes(struct ev_list *l, const struct watch_cable *b, const struct watch_cable *a)
{
	if (b->gbps != a->gbps)
		push(l, WATCH_SPEED, b, a, -1);
	for (int e = 0; e < 2; e++) {
		const struct watch_end *eb = &b->end[e], *ea = &a->end[end_on(a, eb)];

		if (eb->carrier != ea->carrier)
			push(l, WATCH_CARRIER, b, a, e);
		if (eb->rdma != ea->rdma)
			push(l, WATCH_RDMA, b, a, e);
		if (!str_eq(eb->addr, ea->addr))
			push(l, WATCH_ADDRESS, b, a, e);
	}
}

/* For a cable gone from before, the unclaimed new cable it moved to, or -1. */
static long
moved_to(const struct watch_cable *gone, const struct watch_snapshot *after,
    const long *match_after)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t j = 0; j < after->n; j++) {
			const struct watch_cable *n = &after->cables[j];

			if (match_after[j] >= 0)
				continue;
			if (pass == 0 && (end_on(n, &gone->end[0]) >= 0 ||
			    end_on(n, &gone->end[1]) >= 0))
				return (long)j;
			if (pass == 1 && same_hosts(gone, n))
				return (long)j;
		}
	return -1;
}

void
watch_diff(const struct watch_snapshot *before, const struct watch_snapshot *after,
    struct watch_event **ev, size_t *nev)
{
	long *mb = xcalloc(before->n + 1, sizeof(*mb)), *ma = xcalloc(after->n + 1, sizeof(*ma));
	struct ev_list l = { 0 };

	for (size_t j = 0; j < after->n; j++)
		ma[j] = -1;
	for (size_t i = 0; i < before->n; i++) {
		mb[i] = -1;
		for (size_t j = 0; j < after->n && mb[i] < 0; j++)
			if (ma[j] < 0 && same_cable(&before->cables[i], &after->cables[j])) {
				mb[i] = (long)j;
				ma[j] = (long)i;
			}
	}
	for (size_t i = 0; i < before->n; i++) {
		long j;

		if (mb[i] >= 0)
			continue;
		if ((j = moved_to(&before->cables[i], after, ma)) >= 0) {
			ma[j] = (long)after->n + 1;	/* claimed by a move */
			push(&l, WATCH_MOVED, &before->cables[i], &after->cables[j], -1);
		} else {
			push(&l, WATCH_UNPLUGGED, &before->cables[i], NULL, -1);
		}
	}
	for (size_t j = 0; j < after->n; j++)
		if (ma[j] < 0)
			push(&l, WATCH_PLUGGED, NULL, &after->cables[j], -1);
	for (size_t j = 0; j < after->n; j++)
		if (ma[j] >= 0 && (size_t)ma[j] < before->n)
			changes(&l, &before->cables[ma[j]], &after->cables[j]);
	free(mb);
	free(ma);
	*ev = l.v;
	*nev = l.n;
}

const char *
watch_kind_name(enum watch_kind k)
{
	static const char *const names[] = {
		[WATCH_PLUGGED] = "plugged", [WATCH_UNPLUGGED] = "unplugged",
		[WATCH_MOVED] = "moved", [WATCH_SPEED] = "speed",
		[WATCH_CARRIER] = "carrier", [WATCH_RDMA] = "rdma",
		[WATCH_ADDRESS] = "address",
	};

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

static char *
cable_text(const struct watch_cable *c)
{
	return xasprintf("%s %s <-> %s %s", c->end[0].host, c->end[0].iface, c->end[1].host,
	    c->end[1].iface);
}

static const char *
tri_text(int t)
{
	return t == JC_YES ? "up" : t == JC_NO ? "down" : "unknown";
}

static char *
end_change_text(const struct watch_event *e, const char *cable)
{
	const struct watch_end *b = &e->before->end[e->end];
	const struct watch_end *a = &e->after->end[end_on(e->after, b)];

	switch (e->kind) {
	case WATCH_CARRIER:
		return xasprintf("link %s: %s %s (cable %s)", tri_text(a->carrier), a->host,
		    a->iface, cable);
	case WATCH_RDMA:
		return xasprintf("rdma: %s %s %s -> %s (cable %s)", a->host, a->iface,
		    jc_port_state_name(b->rdma), jc_port_state_name(a->rdma), cable);
	default:
		if (a->addr == NULL)
			return xasprintf("address lost: %s %s had %s (cable %s)", a->host, a->iface,
			    b->addr, cable);
		if (b->addr == NULL)
			return xasprintf("address added: %s %s %s (cable %s)", a->host, a->iface,
			    a->addr, cable);
		return xasprintf("address changed: %s %s %s -> %s (cable %s)", a->host, a->iface,
		    b->addr, a->addr, cable);
	}
}

char *
watch_event_text(const struct watch_event *e)
{
	char *c = cable_text(e->before ? e->before : e->after), *n, *t;

	switch (e->kind) {
	case WATCH_PLUGGED:
		t = e->after->gbps ? xasprintf("plugged: %s (%d Gb/s)", c, e->after->gbps)
		    : xasprintf("plugged: %s", c);
		break;
	case WATCH_UNPLUGGED:
		t = xasprintf("unplugged: %s", c);
		break;
	case WATCH_MOVED:
		n = cable_text(e->after);
		t = xasprintf("moved: %s is now %s", c, n);
		free(n);
		break;
	case WATCH_SPEED:
		t = xasprintf("speed: %s %d -> %d Gb/s", c, e->before->gbps, e->after->gbps);
		break;
	default:
		t = end_change_text(e, c);
		break;
	}
	free(c);
	return t;
}

static json_t *
tri_json(int t)
{
	return t == JC_UNKNOWN ? json_null() : json_boolean(t == JC_YES);
}

static json_t *
cable_json(const struct watch_cable *c)
{
	json_t *ends;

	if (c == NULL)
		return json_null();
	ends = json_array();
	for (int e = 0; e < 2; e++) {
		const struct watch_end *w = &c->end[e];

		json_array_append_new(ends, json_pack("{s:s, s:s, s:o, s:o, s:o}", "host", w->host,
		    "iface", w->iface, "carrier", tri_json(w->carrier),
		    "address", w->addr ? json_string(w->addr) : json_null(),
		    "rdma", w->rdma == JC_PORT_UNKNOWN ? json_null()
		    : json_string(jc_port_state_name(w->rdma))));
	}
	return json_pack("{s:o, s:o}", "ends", ends, "gbps",
	    c->gbps ? json_integer(c->gbps) : json_null());
}

json_t *
watch_event_json(const struct watch_event *e)
{
	json_t *o = json_pack("{s:s, s:o, s:o}", "event", watch_kind_name(e->kind),
	    "before", cable_json(e->before), "after", cable_json(e->after));
	char *t = watch_event_text(e);

	if (e->end >= 0) {
		const struct watch_end *b = &e->before->end[e->end];

		json_object_set_new(o, "host", json_string(b->host));
		json_object_set_new(o, "iface", json_string(b->iface));
	}
	json_object_set_new(o, "text", json_string(t));
	free(t);
	return o;
}

json_t *
watch_snapshot_json(const struct watch_snapshot *s)
{
	json_t *a = json_array();

	for (size_t k = 0; k < s->n; k++)
		json_array_append_new(a, cable_json(&s->cables[k]));
	return a;
}

static const char *
rdma_text(enum jc_port_state st)
{
	return st == JC_PORT_UNKNOWN ? "-" : jc_port_state_name(st);
}

char *
watch_snapshot_text(const struct watch_snapshot *s)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (size_t k = 0; k < s->n; k++) {
		const struct watch_cable *c = &s->cables[k];
		char *name = cable_text(c);

		if (c->gbps > 0)
			buf_printf(&b, "%-40s %3d Gb/s", name, c->gbps);
		else
			buf_printf(&b, "%-40s   ? Gb/s", name);
		for (int e = 0; e < 2; e++)
			buf_printf(&b, "  %s:%s %s %s", c->end[e].iface, tri_text(c->end[e].carrier),
			    rdma_text(c->end[e].rdma), c->end[e].addr ? c->end[e].addr : "-");
		buf_puts(&b, "\n");
		free(name);
	}
	return buf_steal(&b);
}

char *
watch_unsettled_key(const struct graph *g)
{
	struct jc_buf b = { 0 };

	for (size_t k = 0; k < g->nstrays; k++) {
		const struct graph_stray *st = &g->strays[k];
		const struct jc_port *p = &g->hosts[st->host].ports[st->port];

		if (st->kind != GRAPH_STRAY_ONE_SIDED)
			continue;
		buf_printf(&b, "%s%s:%s>%s", b.len ? " " : "", g->hosts[st->host].name,
		    p->iface ? p->iface : "?", st->peer_id ? st->peer_id : "?");
	}
	return b.len ? buf_steal(&b) : NULL;
}
