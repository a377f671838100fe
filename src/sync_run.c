/* SPDX-License-Identifier: MIT */
/*
 * The sync orchestration (see sync_run.h): runs of sync-rank through the
 * launcher, the conversation with each rank on its SSH stream, the checks
 * before any byte moves, the route, and the runs after a loss.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"
#include "sync_run.h"
#include "util.h"

struct rhost {
	int orig;		/* index in the hostfile */
	char *name;
	char *dest;
	bool ready, setup_sent, hello, ended;
	json_t *hellov;		/* its hello */
	json_t *endv;		/* its end event */
	char *lasterr;		/* last line of standard error */
	uint64_t written;	/* the last progress event's */
};

struct srun {
	const struct sync_opts *o;
	const struct jc_hostfile *hf;
	struct launch *l;
	struct rhost *h;	/* per rank of this run */
	size_t n;
	int src;		/* rank of the source in this run */
	json_t *tree;		/* the source's */
	size_t nhello, nconnected;
	bool planned;
	int refused;		/* 1 when the checks refused the sync */
	json_t *refusals, *failures;
	struct sync_graph *g;	/* over the hostfile's indices */
	struct sync_route route;	/* over this run's ranks */
	bool have_route;
	pthread_mutex_t mu;
};

static char *
host_name(const char *ssh)
{
	const char *at = strrchr(ssh, '@');

	return xstrdup(at ? at + 1 : ssh);
}

char *
sync_dest_for(const char *dest, const char *host)
{
	struct jc_buf b = { 0 };

	for (const char *p = dest; *p; p++) {
		if (p[0] == '%' && p[1] == 'h') {
			buf_puts(&b, host);
			p++;
		} else {
			buf_append(&b, p, 1);
		}
	}
	buf_append(&b, "", 0);
	return b.data ? buf_steal(&b) : xstrdup("");
}

void
sync_graph_from_hostfile(const struct jc_hostfile *hf, bool ethernet, struct sync_graph *g)
{
	size_t n = hf->nhosts;

	sync_graph_init(g, n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			if (i == j)
				continue;
			if (ethernet)
				g->wires[i * n + j] = 1;
			else if (j < hf->hosts[i].nrdma && i < hf->hosts[j].nrdma) {
				size_t a = hf->hosts[i].rdma[j].n, b = hf->hosts[j].rdma[i].n;

				g->wires[i * n + j] = (int)(a < b ? a : b);
			}
		}
}

static const char *
kind_name(enum sync_route_kind k)
{
	return k == SYNC_ROUTE_SCATTER ? "scatter" : k == SYNC_ROUTE_CHAIN ? "chain" : "tree";
}

json_t *
sync_route_json(const struct sync_route *r, const struct jc_hostfile *hf,
    const double *gbps, double bytes)
{
	json_t *parts = json_array(), *o;
	size_t n = r->n;

	for (size_t p = 0; p < r->nparts; p++) {
		json_t *edges = json_array();

		/* in the order the data flows: breadth first from the source */
		int *q = xmalloc(n * sizeof(int));
		size_t qh = 0, qt = 0;

		q[qt++] = r->source;
		while (qh < qt) {
			int u = q[qh++];

			for (size_t v = 0; v < n; v++)
				if (sync_route_parent(r, p, v) == u) {
					char *a = host_name(hf->hosts[u].ssh), *b = host_name(hf->hosts[v].ssh);

					json_array_append_new(edges, json_pack("{s:s,s:s}", "from", a,
					    "to", b));
					free(a);
					free(b);
					q[qt++] = (int)v;
				}
		}
		free(q);
		json_array_append_new(parts, edges);
	}
	{
		char *s = host_name(hf->hosts[r->source].ssh);

		o = json_pack("{s:s,s:s,s:o}", "kind", kind_name(r->kind), "source", s,
		    "parts", parts);
		free(s);
	}
	if (gbps != NULL && bytes > 0) {
		double s = sync_route_seconds(r, bytes, gbps);

		if (s >= 0)
			json_object_set_new(o, "expected_seconds", json_real(s));
	}
	if (gbps != NULL) {
		double s = sync_route_seconds(r, 1e9, gbps);

		if (s >= 0)
			json_object_set_new(o, "seconds_per_GB", json_real(s));
	}
	return o;
}

double *
sync_gbps_from_report(const struct jc_hostfile *hf, json_t *rep)
{
	json_t *hosts = json_object_get(rep, "hosts"), *links = json_object_get(rep, "links"), *l;
	size_t n = hf->nhosts, i, found = 0;
	int *map;
	double *g;

	if (!json_is_array(hosts) || !json_is_array(links))
		return NULL;
	map = xmalloc((json_array_size(hosts) + 1) * sizeof(int));
	for (i = 0; i < json_array_size(hosts); i++) {
		const char *h = json_string_value(json_array_get(hosts, i));

		map[i] = -1;
		for (size_t k = 0; h != NULL && k < n; k++) {
			char *name = host_name(hf->hosts[k].ssh);

			if (strcmp(name, h) == 0) {
				map[i] = (int)k;
				found++;
			}
			free(name);
		}
	}
	if (found == 0) {
		free(map);
		return NULL;
	}
	g = xcalloc(n * n, sizeof(double));
	json_array_foreach(links, i, l) {
		json_int_t a = json_integer_value(json_object_get(l, "a"));
		json_int_t b = json_integer_value(json_object_get(l, "b"));
		double ab = json_number_value(json_object_get(json_object_get(l, "a_to_b"), "Gbps"));
		double ba = json_number_value(json_object_get(json_object_get(l, "b_to_a"), "Gbps"));
		int u, v;

		if (a < 0 || b < 0 || (size_t)a >= json_array_size(hosts) ||
		    (size_t)b >= json_array_size(hosts))
			continue;
		u = map[a];
		v = map[b];
		if (u < 0 || v < 0)
			continue;
		g[(size_t)u * n + (size_t)v] += ab;
		g[(size_t)v * n + (size_t)u] += ba;
	}
	free(map);
	return g;
}

/* ---- one run ---- */

static void
send_json(struct srun *S, size_t r, json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT);

	launch_write(S->l, r, s, strlen(s));
	launch_write(S->l, r, "\n", 1);
	free(s);
	json_decref(v);
}

static void
send_setup(struct srun *S, size_t r)
{
	struct rhost *h = &S->h[r];
	json_t *v = json_pack("{s:s,s:s,s:i,s:b,s:b,s:f}", "role",
	    (int)r == S->src ? "source" : "dest", "root", h->dest, "rank", (int)r,
	    "checksum", S->o->checksum, "verify_sha256", S->o->verify_sha256,
	    "timeout", S->o->timeout > 0 ? S->o->timeout : 30.0);

	if ((int)r != S->src)
		json_object_set(v, "tree", S->tree);
	h->setup_sent = true;
	send_json(S, r, v);
}

static void
abort_all(struct srun *S)
{
	for (size_t r = 0; r < S->n; r++)
		send_json(S, r, json_pack("{s:b}", "abort", 1));
}

static const char *
iface_of(const char *dev)
{
	return strncmp(dev, "rdma_", 5) == 0 ? dev + 5 : dev;
}

/* The address of rank v's end of wire w towards rank u (and u's, in bind). */
static char *
wire_addr(struct srun *S, size_t u, size_t v, int w, char **bind)
{
	const struct jc_hf_host *hu = &S->hf->hosts[S->h[u].orig], *hv = &S->hf->hosts[S->h[v].orig];
	json_t *au = json_object_get(S->h[u].hellov, "addrs"), *av = json_object_get(S->h[v].hellov,
	    "addrs");
	json_int_t port = json_integer_value(json_object_get(S->h[v].hellov, "port"));
	const char *a, *b;
	int wu = 0, wv = 0;

	*bind = NULL;
	if (S->o->over_ethernet) {
		char *name = host_name(hv->ssh);
		char *s = xasprintf("%s:%d", hv->nips > 0 ? hv->ips[0] : name, (int)port);

		free(name);
		return s;
	}
	/* the live wires, in the cell's order, skipping the lost ones first */
	wu = w + S->g->dead_wire[(size_t)S->h[u].orig * S->g->n + (size_t)S->h[v].orig];
	wv = wu;
	if ((size_t)wu >= hu->rdma[S->h[v].orig].n || (size_t)wv >= hv->rdma[S->h[u].orig].n)
		return NULL;
	a = json_string_value(json_object_get(av, iface_of(hv->rdma[S->h[u].orig].names[wv])));
	b = json_string_value(json_object_get(au, iface_of(hu->rdma[S->h[v].orig].names[wu])));
	if (a == NULL)
		return NULL;
	*bind = xstrdup(b);
	return xasprintf("%s:%d", a, (int)port);
}

static bool
bits_any(const char *hex)
{
	for (const char *p = hex; *p; p++)
		if (*p != '0')
			return true;
	return false;
}

/* OR of two bitmaps in hex of the same length (new string). */
static char *
bits_or(const char *a, const char *b)
{
	size_t n = strlen(a);
	char *s = xstrdup(a);

	if (strlen(b) != n)
		return xstrdup("all");
	for (size_t i = 0; i < n; i++) {
		unsigned x = (unsigned)(a[i] >= 'a' ? a[i] - 'a' + 10 : a[i] - '0');
		unsigned y = (unsigned)(b[i] >= 'a' ? b[i] - 'a' + 10 : b[i] - '0');

		s[i] = "0123456789abcdef"[(x | y) & 15];
	}
	return s;
}

/* Every hello is in: check, route, and send each rank its plan. */
static void
plan(struct srun *S)
{
	size_t n = S->n;
	json_t *send = json_object();
	struct sync_graph g;

	S->planned = true;
	/* free space and permission, before any byte moves */
	for (size_t r = 0; r < n; r++) {
		json_t *hv = S->h[r].hellov;
		json_int_t need = json_integer_value(json_object_get(hv, "bytes_needed"));
		json_int_t fr = json_integer_value(json_object_get(hv, "free"));

		if ((int)r == S->src)
			continue;
		if (!json_is_true(json_object_get(hv, "writable"))) {
			json_array_append_new(S->refusals, json_pack("{s:s,s:s}", "host", S->h[r].name,
			    "why", "no write permission")), S->refused = 1;
			json_array_append_new(S->failures, json_sprintf("%s: cannot write in %s "
			    "(or the nearest folder above it)", S->h[r].name, S->h[r].dest));
		} else if (need > fr) {
			char *a = sync_fmt_bytes((double)need), *b = sync_fmt_bytes((double)fr);

			json_array_append_new(S->refusals, json_pack("{s:s,s:s,s:I,s:I}", "host",
			    S->h[r].name, "why", "free space", "needed", need, "free", fr));
			json_array_append_new(S->failures, json_sprintf("%s: needs %s in %s, "
			    "%s free", S->h[r].name, a, S->h[r].dest, b));
			free(a);
			free(b);
			S->refused = 1;
		}
	}
	if (S->refused) {
		json_decref(send);
		abort_all(S);
		return;
	}
	/* what to send: every chunk some host lacks */
	for (size_t r = 0; r < n; r++) {
		const char *k;
		json_t *v;

		if ((int)r == S->src)
			continue;
		json_object_foreach(json_object_get(S->h[r].hellov, "need"), k, v) {
			const char *have = json_string_value(json_object_get(send, k));
			const char *mine = json_string_value(v);

			if (have == NULL) {
				json_object_set_new(send, k, json_string(mine));
			} else if (strcmp(have, "all") != 0 && strcmp(mine, "all") != 0) {
				char *o = bits_or(have, mine);

				json_object_set_new(send, k, json_string(o));
				free(o);
			} else {
				json_object_set_new(send, k, json_string("all"));
			}
		}
	}
	if (json_object_size(send) == 0) {
		/* everything is there: nothing moves */
		json_decref(send);
		for (size_t r = 0; r < n; r++)
			send_json(S, r, json_pack("{s:i,s:[[]],s:[],s:i}", "parts", 1, "children",
			    "out", "nin", 0));
		return;
	}
	{
		const char *k;
		json_t *v;

		json_object_foreach(send, k, v)
			if (strcmp(json_string_value(v), "all") != 0 && !bits_any(json_string_value(v)))
				json_object_set_new(send, k, json_string("all"));
	}
	/* the route over this run's ranks */
	sync_graph_init(&g, n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			g.wires[i * n + j] = sync_graph_wires(S->g, (size_t)S->h[i].orig,
			    (size_t)S->h[j].orig);
	sync_route_plan(&g, S->src, &S->route);
	S->have_route = true;
	if (S->o->event != NULL) {
		/* the route of this run, each part's edges by host name */
		json_t *parts = json_array(), *rj;

		for (size_t p = 0; p < S->route.nparts; p++) {
			json_t *edges = json_array();

			for (size_t v = 0; v < n; v++) {
				int u = sync_route_parent(&S->route, p, v);

				if (u >= 0)
					json_array_append_new(edges, json_pack("{s:s,s:s}", "from",
					    S->h[u].name, "to", S->h[v].name));
			}
			json_array_append_new(parts, edges);
		}
		rj = json_pack("{s:s,s:s,s:o}", "ev", "route", "kind", kind_name(S->route.kind),
		    "parts", parts);
		S->o->event(S->o->arg, NULL, rj);
		json_decref(rj);
	}
	{
		int *kids = xmalloc(n * sizeof(int));
		json_t **outs = xcalloc(n, sizeof(json_t *)), **children = xcalloc(n, sizeof(json_t *));
		int *nin = xcalloc(n, sizeof(int));
		/* per sender, the index in its out list of each child's first wire */
		int *first = xmalloc(n * n * sizeof(int));

		for (size_t i = 0; i < n * n; i++)
			first[i] = -1;
		for (size_t r = 0; r < n; r++) {
			outs[r] = json_array();
			children[r] = json_array();
		}
		for (size_t p = 0; p < S->route.nparts; p++)
			for (size_t u = 0; u < n; u++) {
				size_t nk = sync_route_children(&S->route, p, u, kids);
				json_t *cl = json_array();

				for (size_t k = 0; k < nk; k++) {
					size_t v = (size_t)kids[k];
					int w = sync_graph_wires(&g, u, v);

					if (first[u * n + v] < 0) {
						first[u * n + v] = (int)json_array_size(outs[u]);
						for (int x = 0; x < w; x++) {
							char *bind = NULL, *a = wire_addr(S, u, v, x, &bind);
							json_t *o = json_pack("{s:i,s:s?}", "rank", (int)v,
							    "addr", a);

							if (bind != NULL)
								json_object_set_new(o, "bind", json_string(bind));
							json_array_append_new(outs[u], o);
							free(a);
							free(bind);
							nin[v]++;
						}
					}
					json_array_append_new(cl, json_pack("{s:i,s:i}", "out",
					    first[u * n + v], "wires", w));
				}
				json_array_append_new(children[u], cl);
			}
		for (size_t r = 0; r < n; r++) {
			json_t *pl = json_pack("{s:I,s:o,s:o,s:i}", "parts",
			    (json_int_t)S->route.nparts, "children", children[r], "out", outs[r],
			    "nin", nin[r]);

			json_t *pa = json_array(), *iw = json_array();

			for (size_t p = 0; p < S->route.nparts; p++) {
				int u = sync_route_parent(&S->route, p, r);

				json_array_append_new(pa, json_integer(u));
				json_array_append_new(iw, json_integer(u >= 0 ?
				    sync_graph_wires(&g, (size_t)u, r) : 0));
			}
			json_object_set_new(pl, "parents", pa);
			json_object_set_new(pl, "in_wires", iw);
			if ((int)r == S->src)
				json_object_set(pl, "send", send);
			if (!S->route.reached[r] && (int)r != S->src)
				json_array_append_new(S->failures, json_sprintf("%s: no live cable "
				    "leads there", S->h[r].name));
			send_json(S, r, pl);
		}
		free(kids);
		free(outs);
		free(children);
		free(nin);
		free(first);
	}
	sync_graph_free(&g);
	json_decref(send);
}

static void
on_event(struct srun *S, size_t r, json_t *ev)
{
	const char *kind = json_string_value(json_object_get(ev, "ev"));
	struct rhost *h = &S->h[r];

	if (kind == NULL)
		return;
	if (strcmp(kind, "ready") == 0) {
		h->ready = true;
		if ((int)r == S->src || S->tree != NULL)
			send_setup(S, r);
	} else if (strcmp(kind, "refused") == 0 && (int)r == S->src) {
		json_array_append_new(S->failures, json_sprintf("%s: %s", h->name,
		    json_string_value(json_object_get(ev, "why"))));
		S->refused = 1;
		abort_all(S);
	} else if (strcmp(kind, "hello") == 0) {
		h->hello = true;
		h->hellov = json_incref(ev);
		S->nhello++;
		if ((int)r == S->src) {
			S->tree = json_incref(json_object_get(ev, "tree"));
			for (size_t k = 0; k < S->n; k++)
				if ((int)k != S->src && S->h[k].ready && !S->h[k].setup_sent)
					send_setup(S, k);
		}
		if (S->nhello == S->n && !S->planned)
			plan(S);
	} else if (strcmp(kind, "connected") == 0) {
		if (++S->nconnected == S->n)
			send_json(S, (size_t)S->src, json_pack("{s:b}", "go", 1));
	} else if (strcmp(kind, "progress") == 0) {
		h->written = (uint64_t)json_integer_value(json_object_get(ev, "written"));
	} else if (strcmp(kind, "end") == 0) {
		h->ended = true;
		json_decref(h->endv);
		h->endv = json_incref(ev);
	}
	if (S->o->event != NULL && strcmp(kind, "ready") != 0)
		S->o->event(S->o->arg, h->name, ev);
}

static void
line_cb(void *arg, size_t rank, int fd, const char *data, size_t len)
{
	struct srun *S = arg;
	json_error_t je;
	json_t *v;

	if (fd == 2) {
		pthread_mutex_lock(&S->mu);
		free(S->h[rank].lasterr);
		while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
			len--;
		S->h[rank].lasterr = xstrndup(data, len);
		pthread_mutex_unlock(&S->mu);
		return;
	}
	if (len == 0 || data[0] != '{')
		return;
	v = json_loadb(data, len, 0, &je);
	if (json_is_object(v)) {
		pthread_mutex_lock(&S->mu);
		on_event(S, rank, v);
		pthread_mutex_unlock(&S->mu);
	}
	json_decref(v);
}

/* A hostfile of the hosts alive[] (shallow: free with sub_free()). */
static struct jc_hostfile *
sub_hostfile(const struct jc_hostfile *hf, const int *alive, size_t n)
{
	struct jc_hostfile *s = xcalloc(1, sizeof(*s));

	*s = *hf;
	s->arena = NULL;
	s->nhosts = n;
	s->hosts = xcalloc(n, sizeof(*s->hosts));
	for (size_t i = 0; i < n; i++) {
		s->hosts[i] = hf->hosts[alive[i]];
		if (s->hosts[i].nips == 0) {
			/* the ring backend's variables want an address; sync-rank ignores them */
			static char *none[] = { "127.0.0.1" };

			s->hosts[i].ips = none;
			s->hosts[i].nips = 1;
		}
		s->hosts[i].nrdma = 0;
		s->hosts[i].rdma = NULL;
		if (hf->hosts[alive[i]].nrdma == hf->nhosts) {
			s->hosts[i].rdma = xcalloc(n, sizeof(*s->hosts[i].rdma));
			s->hosts[i].nrdma = n;
			for (size_t j = 0; j < n; j++)
				s->hosts[i].rdma[j] = hf->hosts[alive[i]].rdma[alive[j]];
		}
	}
	return s;
}

static void
sub_free(struct jc_hostfile *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nhosts; i++)
		free(s->hosts[i].rdma);
	free(s->hosts);
	free(s);
}

/* The host whose addresses hold ip, as a rank of this run, or -1. */
static int
rank_of_ip(struct srun *S, const char *ip)
{
	for (size_t r = 0; r < S->n; r++) {
		const char *k;
		json_t *v;

		json_object_foreach(json_object_get(S->h[r].hellov, "addrs"), k, v)
			if (strcmp(json_string_value(v), ip) == 0 && strncmp(k, "lo", 2) != 0)
				return (int)r;
	}
	return -1;
}

struct host_result;
static void blame(struct srun *S, struct sync_graph *G, const int *alive,
    struct host_result *res, bool *blamed, int u, int v, const char *why);

struct host_result {
	char *state;		/* complete, incomplete, lost, refused */
	json_t *o;		/* the host's object of the result */
	bool dead;
	uint64_t written;
};

/*
 * The cable from rank u to rank v of this run failed while both hosts
 * were there: one of that pair's cables is left out of the next runs
 * (once per pair and run), and named.
 */
static void
blame(struct srun *S, struct sync_graph *G, const int *alive, struct host_result *res,
    bool *blamed, int u, int v, const char *why)
{
	size_t a = (size_t)(u < v ? u : v), b = (size_t)(u < v ? v : u);

	if (!S->h[u].ended || !S->h[v].ended || res[alive[u]].dead || res[alive[v]].dead ||
	    blamed[a * S->n + b])
		return;
	blamed[a * S->n + b] = true;
	G->dead_wire[(size_t)alive[u] * G->n + (size_t)alive[v]]++;
	G->dead_wire[(size_t)alive[v] * G->n + (size_t)alive[u]]++;
	json_array_append_new(S->failures, json_sprintf("%s: the cable from %s: %s",
	    S->h[v].name, S->h[u].name, why ? why : "lost"));
}

/*
 * One run over the hosts alive[]: returns 0 when it ran (the hosts' states
 * updated), -1 with err when the launch failed altogether.
 */
static int
one_run(const struct jc_hostfile *hf, const struct sync_opts *o, struct sync_graph *G,
    const int *alive, size_t n, int src, bool first, struct host_result *res, json_t *runs,
    int *refused, json_t *failures, json_t *refusals, struct jc_err *err)
{
	struct jc_hostfile *sub = sub_hostfile(hf, alive, n);
	struct srun S;
	struct launch_opts lo;
	static const char *const hooks[] = { "JACCL_SYNC_CORRUPT", "JACCL_SYNC_STOP_AFTER",
	    "JACCL_SYNC_HOLD" };
	struct jc_strv argv = { 0 }, warn = { 0 }, envs = { 0 };
	struct jc_strv bins = { 0 };
	json_t *run = json_object(), *rhosts = json_array();
	bool *blamed = xcalloc(n * n, sizeof(bool));
	int rc;

	memset(&S, 0, sizeof(S));
	S.o = o;
	S.hf = hf;
	S.n = n;
	S.src = src;
	S.g = G;
	S.refusals = refusals;
	S.failures = failures;
	pthread_mutex_init(&S.mu, NULL);
	S.h = xcalloc(n, sizeof(*S.h));
	for (size_t r = 0; r < n; r++) {
		S.h[r].orig = alive[r];
		S.h[r].name = host_name(hf->hosts[alive[r]].ssh);
		S.h[r].dest = (int)r == src ? xstrdup(o->src) : sync_dest_for(o->dest, S.h[r].name);
	}
	/* each host's own jaccl-config, of this version, found as verify finds it */
	launch_bin_candidates(o->remote_bin, &bins);
	strv_push(&argv, JC_PROG);
	strv_push(&argv, "sync-rank");
	/* the test hooks of sync-rank (sync_rank.h) reach the hosts, in the first run only */
	for (size_t k = 0; first && k < JC_ARRAY_LEN(hooks); k++) {
		const char *v = getenv(hooks[k]);

		if (v != NULL && *v != '\0')
			strv_push_owned(&envs, xasprintf("%s=%s", hooks[k], v));
	}
	memset(&lo, 0, sizeof(lo));
	lo.tr = o->tr;
	/* sync-rank reads none of mlx.launch's variables: the plainest backend */
	lo.env.backend = "ring";
	lo.env.starting_port = 32323;
	lo.env.envs = envs.v;
	lo.env.nenvs = envs.n;
	lo.env.connections_per_ip = 1;
	lo.argv = argv.v;
	lo.argc = argv.n;
	lo.bin = bins.v;
	lo.nbin = bins.n;
	lo.bin_version = JC_PROG " " PACKAGE_VERSION;
	lo.timeout = 0;
	lo.interrupted = o->interrupted;
	lo.keep_stdin = true;
	lo.line = line_cb;
	lo.arg = &S;
	rc = launch_prepare(sub, &lo, &S.l, &warn, err);
	strv_free(&warn);
	if (rc < 0)
		goto out;
	rc = launch_run(S.l, err);
	(void)rc;
	rc = 0;
	/* first the hosts lost, then what the others say about their cables */
	for (size_t r = 0; r < n; r++) {
		const struct launch_result *lr = launch_result(S.l, r);
		struct rhost *h = &S.h[r];
		struct host_result *hr = &res[alive[r]];

		if (lr->state == LAUNCH_UNREACHABLE || (!h->ended && lr->state != LAUNCH_EXITED &&
		    lr->state != LAUNCH_STOPPED && lr->state != LAUNCH_PENDING)) {
			char *t = launch_result_text(lr);

			hr->dead = true;
			free(hr->state);
			hr->state = xstrdup("lost");
			json_object_set_new(hr->o, "why", json_string(lr->error ? lr->error : t));
			json_array_append_new(failures, json_sprintf("%s: lost (%s)", h->name,
			    lr->error ? lr->error : t));
			free(t);
			G->dead_host[alive[r]] = true;
		} else if (!h->ended && lr->state == LAUNCH_EXITED && lr->status != 0) {
			/* sync-rank did not run there (not installed, refused...) */
			char *t = launch_result_text(lr);

			hr->dead = true;
			free(hr->state);
			hr->state = xstrdup("failed");
			json_object_set_new(hr->o, "why", json_string(h->lasterr ? h->lasterr : t));
			json_array_append_new(failures, json_sprintf("%s: sync-rank %s%s%s", h->name,
			    t, h->lasterr ? ": " : "", h->lasterr ? h->lasterr : ""));
			free(t);
			G->dead_host[alive[r]] = true;
		}
	}
	for (size_t r = 0; r < n; r++) {
		struct rhost *h = &S.h[r];
		struct host_result *hr = &res[alive[r]];
		json_t *e = h->endv;

		if (hr->dead)
			;
		else if (e != NULL) {
			bool complete = json_is_true(json_object_get(e, "complete"));
			json_t *ul = json_object_get(e, "upstream_lost"), *x;
			size_t k;

			free(hr->state);
			hr->state = xstrdup(complete ? "complete" : "incomplete");
			h->written = (uint64_t)json_integer_value(json_object_get(e, "written"));
			json_object_set(hr->o, "missing", json_object_get(e, "missing"));
			json_object_set(hr->o, "failed", json_object_get(e, "failed"));
			/* a connection lost from a host still there: its cable */
			json_array_foreach(json_object_get(e, "children_lost"), k, x) {
				int v = (int)json_integer_value(json_object_get(x, "rank"));

				if (v >= 0 && (size_t)v < n)
					blame(&S, G, alive, res, blamed, (int)r, v,
					    json_string_value(json_object_get(x, "why")));
			}
			json_array_foreach(ul, k, x) {
				const char *w = json_string_value(x);
				char ip[64];
				int u;

				if (w == NULL || sscanf(w, "from %63[0-9.]:", ip) != 1)
					continue;
				u = rank_of_ip(&S, ip);
				if (u >= 0)
					blame(&S, G, alive, res, blamed, u, (int)r, strchr(w, ':') ?
					    strchr(w, ':') + 2 : w);
			}
		} else if ((int)r != src && S.planned && !S.refused &&
		    strcmp(hr->state, "complete") != 0) {
			/* stopped before its end (another host failed): what it has stays */
			free(hr->state);
			hr->state = xstrdup("incomplete");
		}
		hr->written += h->written;
		if ((int)r == src && !hr->dead) {
			free(hr->state);
			hr->state = xstrdup("source");
		}
		json_array_append_new(rhosts, json_pack("{s:s,s:s,s:O?}", "host", h->name, "state",
		    hr->state, "end", e));
	}
	if (S.refused)
		*refused = 1;
	json_object_set_new(run, "hosts", rhosts);
	if (S.have_route)
		json_object_set_new(run, "route", sync_route_json(&S.route, sub, NULL, 0));
	json_array_append_new(runs, run);
	run = NULL;
out:
	json_decref(run);
	if (S.have_route)
		sync_route_free(&S.route);
	for (size_t r = 0; r < n; r++) {
		free(S.h[r].name);
		free(S.h[r].dest);
		free(S.h[r].lasterr);
		json_decref(S.h[r].hellov);
		json_decref(S.h[r].endv);
	}
	free(S.h);
	free(blamed);
	json_decref(S.tree);
	launch_free(S.l);
	strv_free(&argv);
	strv_free(&envs);
	strv_free(&bins);
	sub_free(sub);
	pthread_mutex_destroy(&S.mu);
	return rc;
}

int
sync_run(const struct jc_hostfile *hf, const struct sync_opts *o, json_t **result,
    struct jc_err *err)
{
	size_t n = hf->nhosts;
	struct host_result *res = xcalloc(n, sizeof(*res));
	struct sync_graph G;
	json_t *runs = json_array(), *failures = json_array(), *refusals = json_array(), *hosts;
	int *alive = xmalloc(n * sizeof(int)), refused = 0, rc = 0, max = o->max_runs > 0 ?
	    o->max_runs : 4, nrun = 0;
	bool all = false;

	*result = NULL;
	sync_graph_from_hostfile(hf, o->over_ethernet, &G);
	for (size_t i = 0; i < n; i++) {
		res[i].state = xstrdup("not-started");
		res[i].o = json_object();
	}
	while (nrun < max) {
		size_t na = 0;
		int src = -1;
		uint64_t before = 0, after = 0;

		for (size_t i = 0; i < n; i++) {
			before += res[i].written;
			if (G.dead_host[i])
				continue;
			if ((int)i == o->source)
				src = (int)na;
			/* complete hosts too: they forward to the others */
			alive[na++] = (int)i;
		}
		if (src < 0 || na < 2)
			break;
		nrun++;
		rc = one_run(hf, o, &G, alive, na, src, nrun == 1, res, runs, &refused, failures, refusals, err);
		if (rc < 0)
			break;
		if (refused || (o->interrupted && *o->interrupted))
			break;
		all = true;
		for (size_t i = 0; i < n; i++) {
			after += res[i].written;
			if ((int)i != o->source && strcmp(res[i].state, "complete") != 0)
				all = false;
		}
		if (all)
			break;
		/* nothing moved and nothing was lost: another run would do the same */
		if (after == before && nrun > 1)
			break;
	}
	if (rc < 0 && nrun <= 1) {
		rc = -1;
		json_decref(runs);
		json_decref(failures);
		json_decref(refusals);
		goto out;
	}
	hosts = json_array();
	all = !refused;
	for (size_t i = 0; i < n; i++) {
		char *name = host_name(hf->hosts[i].ssh);
		json_t *h = res[i].o;

		if ((int)i == o->source) {
			free(res[i].state);
			res[i].state = xstrdup("source");
		} else if (strcmp(res[i].state, "complete") != 0) {
			all = false;
		}
		if (refused && strcmp(res[i].state, "source") != 0)
			json_object_set_new(h, "state", json_string("refused"));
		else
			json_object_set_new(h, "state", json_string(res[i].state));
		json_object_set_new(h, "host", json_string(name));
		json_object_set_new(h, "dest", json_string((int)i == o->source ? o->src : ""));
		if ((int)i != o->source) {
			char *d = sync_dest_for(o->dest, name);

			json_object_set_new(h, "dest", json_string(d));
			free(d);
		}
		json_object_set_new(h, "written", json_integer((json_int_t)res[i].written));
		json_array_append(hosts, h);
		free(name);
	}
	{
		char *s = host_name(hf->hosts[o->source].ssh);

		*result = json_pack("{s:b,s:s,s:i,s:o,s:o,s:o,s:o}", "ok", all, "source", s,
		    "runs", nrun, "hosts", hosts, "refusals", refusals, "failures", failures,
		    "run_details", runs);
		free(s);
	}
	rc = refused ? 2 : all ? 0 : 1;
out:
	for (size_t i = 0; i < n; i++) {
		free(res[i].state);
		json_decref(res[i].o);
	}
	free(res);
	free(alive);
	sync_graph_free(&G);
	return rc;
}
