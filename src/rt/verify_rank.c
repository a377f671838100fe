/* SPDX-License-Identifier: MIT */
/*
 * The verification itself. Cables are tested one at a time (a side
 * channel barrier between them keeps the others quiet): a ping-pong of 8
 * bytes for latency, then a stream of 4 MiB messages each way, bounded in
 * bytes and seconds (the last message carries a flag so the receiver
 * knows). Then every cable at once, then an all-reduce sweep whose result
 * is checked element by element, with nccl-tests' algbw and busbw =
 * algbw * 2(n - 1) / n. Each rank contributes (rank + 1) * h(i) at element
 * i, h a scramble of i in 1..1021, so a chunk that lands at the wrong
 * place or comes from the wrong rank changes the sum; the first wrong
 * element is reported, and so is a rank whose own contribution was not
 * what it should have been (JACCL_VERIFY_CORRUPT makes one such). Each
 * phase's results travel through the side channel in fixed-size records,
 * so a dead link degrades the report instead of hanging it.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verify_rank.h"
#include "util.h"

#define ERRLEN 240
#define RT_SWEEP_BUDGET 0.25	/* seconds of timed all-reduces per size */

struct cable {
	int a, la, b, lb;
	char *dev_a, *dev_b;
};

struct cres {			/* one rank's view of one cable */
	double bw;		/* bytes/s this end sent */
	double lat_med, lat_p99;	/* microseconds, end a */
	int32_t status;		/* 0, or -errno */
	int32_t pad;
	char err[ERRLEN];
};

struct phase {			/* one rank's result of a phase */
	double bytes, secs;
	int32_t status;
	int32_t reached;	/* all-reduce rows completed */
	char err[ERRLEN];
};

struct row {
	double usec;
	int64_t wrong;
	int64_t first;		/* first wrong element of this rank's result, or -1 */
	double got, want;	/* ... its value and the right one */
	int64_t bad_in;		/* first element this rank contributed wrong, or -1 */
	double in_got, in_want;
	int32_t status;		/* 0 ok, 1 not run, <0 failed */
	int32_t pad;
};

void
rt_verify_defaults(struct rt_verify_opts *o)
{
	const char *e;
	long v;

	memset(o, 0, sizeof(*o));
	o->link_bytes = 256u << 20;
	o->link_seconds = 2;
	o->msg_bytes = 4u << 20;
	o->lat_iters = 200;
	o->ar_min = 1024;
	o->ar_max = 64u << 20;
	o->trace_fd = -1;
	o->corrupt_rank = -1;
	if ((e = getenv("JACCL_VERIFY_CORRUPT")) != NULL) {
		char *colon = strchr(e, ':'), *r = xstrdup(e);
		long el;

		r[colon ? colon - e : 0] = '\0';
		if (colon && jc_parse_int(r, 0, 1 << 20, &v) &&
		    jc_parse_int(colon + 1, 0, 1L << 30, &el)) {
			o->corrupt_rank = (int)v;
			o->corrupt_elem = (size_t)el;
		}
		free(r);
	}
	if ((e = getenv("JACCL_VERIFY_MB")) != NULL && jc_parse_int(e, 1, 1 << 20, &v)) {
		o->link_bytes = (size_t)v << 20;
		o->link_seconds = 30;
		if (o->link_bytes < o->msg_bytes)
			o->msg_bytes = o->link_bytes;
	}
	if ((e = getenv("JACCL_VERIFY_SECONDS")) != NULL && jc_parse_int(e, 1, 3600, &v))
		o->link_seconds = (double)v;
	if ((e = getenv("JACCL_VERIFY_MAX_MB")) != NULL && jc_parse_int(e, 1, 1 << 14, &v))
		o->ar_max = (size_t)v << 20;
}

void
rt_verify_event(const struct rt_verify_opts *o, int rank, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n, m;

	if (o->trace_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "rank %d: ", rank);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m < (int)sizeof(line) - n - 1 ? m : (int)sizeof(line) - n - 2;
	line[n++] = '\n';
	/* one write of a short line: lines of several ranks do not mix */
	if (write(o->trace_fd, line, (size_t)n) < 0)
		(void)0;
}

double
rt_verify_value(int rank, size_t i)
{
	return (double)(rank + 1) * (double)((i % 1021) * 7919 % 1021 + 1);
}

int
rt_parse_rate(const char *s, double *bps)
{
	static const struct { const char *unit; double mult; } units[] = {
		{ "Tb/s", 1e12 / 8 }, { "Gb/s", 1e9 / 8 }, { "Gbit/s", 1e9 / 8 },
		{ "Gbps", 1e9 / 8 }, { "Mb/s", 1e6 / 8 }, { "Mbit/s", 1e6 / 8 },
		{ "TB/s", 1e12 }, { "GB/s", 1e9 }, { "GBps", 1e9 }, { "MB/s", 1e6 },
	};
	char *end;
	double v;

	if (s == NULL)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || !(v >= 0) || isinf(v) || !(*s >= '0' && *s <= '9'))
		return -EINVAL;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < JC_ARRAY_LEN(units); i++)
		if (strcmp(end, units[i].unit) == 0) {
			*bps = v * units[i].mult;
			return 0;
		}
	return -EINVAL;
}

static size_t
list_cables(const struct rt_config *c, struct rt_group *g, struct cable **out)
{
	struct cable *cs = NULL;
	size_t n = 0;

	for (int a = 0; a < c->size; a++) {
		struct rt_config tmp = *c;
		struct rt_group *ga;

		tmp.rank = a;
		rt_group_new(&ga, &tmp, g->kind, g->wires, 0);
		for (size_t i = 0; i < ga->nlinks; i++) {
			struct rt_link *l = &ga->links[i];

			if (!l->active)
				continue;
			cs = xreallocarray(cs, n + 1, sizeof(*cs));
			cs[n++] = (struct cable){ .a = a, .la = l->index, .b = l->peer,
			    .lb = l->peer_index, .dev_a = xstrdup(l->device),
			    .dev_b = xstrdup(l->peer_device) };
		}
		rt_group_close(ga);
	}
	*out = cs;
	return n;
}

static int
cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static int
latency(struct rt_group *g, struct rt_link *l, bool first, int iters, double *med,
    double *p99, struct jc_err *err)
{
	double *lat = xcalloc((size_t)iters + 1, sizeof(double));
	char msg[8] = { 0 };
	int warm = 10, rc = 0;

	for (int i = 0; i < warm + iters && rc == 0; i++) {
		double t = jc_now();

		if (first) {
			if ((rc = rt_group_send(g, l, msg, sizeof(msg), err)) == 0)
				rc = rt_group_recv(g, l, msg, sizeof(msg), err);
		} else {
			if ((rc = rt_group_recv(g, l, msg, sizeof(msg), err)) == 0)
				rc = rt_group_send(g, l, msg, sizeof(msg), err);
		}
		if (i >= warm)
			lat[i - warm] = (jc_now() - t) / 2 * 1e6;
	}
	if (rc == 0 && first) {
		qsort(lat, (size_t)iters, sizeof(double), cmp_double);
		*med = lat[iters / 2];
		*p99 = lat[(size_t)((iters - 1) * 0.99)];
	}
	free(lat);
	return rc;
}

static int
stream_send(struct rt_group *g, struct rt_link *l, char *buf,
    const struct rt_verify_opts *o, double *bps, struct jc_err *err)
{
	double t0 = jc_now();
	size_t sent = 0;
	bool last;
	int rc;

	do {
		last = sent + 2 * o->msg_bytes > o->link_bytes ||
		    jc_now() - t0 >= o->link_seconds;
		buf[0] = last;
		if ((rc = rt_group_send(g, l, buf, o->msg_bytes, err)) < 0)
			return rc;
		sent += o->msg_bytes;
	} while (!last);
	if ((rc = rt_group_recv(g, l, buf, 1, err)) < 0)
		return rc;
	*bps = (double)sent / (jc_now() - t0);
	return 0;
}

static int
stream_recv(struct rt_group *g, struct rt_link *l, char *buf,
    const struct rt_verify_opts *o, struct jc_err *err)
{
	int rc;

	do {
		if ((rc = rt_group_recv(g, l, buf, o->msg_bytes, err)) < 0)
			return rc;
	} while (buf[0] == 0);
	buf[0] = 1;
	return rt_group_send(g, l, buf, 1, err);
}

/* This rank's part of the test of cable k. */
static void
test_cable(struct rt_group *g, const struct cable *cb, size_t k,
    const struct rt_verify_opts *o, char *buf, struct cres *res)
{
	bool am_a = g->rank == cb->a;
	struct rt_link *l = &g->links[am_a ? cb->la : cb->lb];
	struct jc_err err = { 0 };
	int rc;

	rt_verify_event(o, g->rank, "link %zu %d-%d start", k, cb->a, cb->b);
	rc = latency(g, l, am_a, o->lat_iters, &res->lat_med, &res->lat_p99, &err);
	if (rc == 0) {
		rt_verify_event(o, g->rank, "link %zu %d-%d stream", k, cb->a, cb->b);
		rc = am_a ? stream_send(g, l, buf, o, &res->bw, &err) :
		    stream_recv(g, l, buf, o, &err);
	}
	if (rc == 0)
		rc = am_a ? stream_recv(g, l, buf, o, &err) :
		    stream_send(g, l, buf, o, &res->bw, &err);
	if (rc < 0) {
		l->dead = true;
		res->status = rc;
		snprintf(res->err, sizeof(res->err), "rank %d: %.200s", g->rank, err.msg);
	}
	rt_verify_event(o, g->rank, "link %zu %d-%d %s", k, cb->a, cb->b,
	    rc < 0 ? "failed" : "done");
}

static int
all_at_once(struct rt_group *g, const struct rt_verify_opts *o, struct phase *ph)
{
	size_t rounds = o->link_bytes / o->msg_bytes / 2, k;
	struct rt_xfer *x = xcalloc(2 * g->nlinks, sizeof(*x));
	char *sbuf = xcalloc(1, o->msg_bytes), *rbuf = xcalloc(g->nlinks, o->msg_bytes);
	struct jc_err err = { 0 };
	double t0 = jc_now();
	int rc = 0;

	if (rounds < 1)
		rounds = 1;
	for (size_t r = 0; r < rounds && rc == 0; r++) {
		k = 0;
		for (size_t i = 0; i < g->nlinks; i++) {
			x[k++] = (struct rt_xfer){ .link = &g->links[i], .send = true,
			    .buf = sbuf, .len = o->msg_bytes };
			x[k++] = (struct rt_xfer){ .link = &g->links[i], .send = false,
			    .buf = rbuf + i * o->msg_bytes, .len = o->msg_bytes };
		}
		rc = rt_group_run(g, x, k, &err);
	}
	ph->secs = jc_now() - t0;
	ph->bytes = (double)rounds * (double)o->msg_bytes * (double)g->nlinks;
	ph->status = rc;
	if (rc < 0)
		snprintf(ph->err, sizeof(ph->err), "rank %d: %.200s", g->rank, err.msg);
	free(x);
	free(sbuf);
	free(rbuf);
	return rc;
}

static void
put(void *buf, size_t i, enum rt_dtype t, double v)
{
	if (t == RT_FLOAT32)
		((float *)buf)[i] = (float)v;
	else
		((int32_t *)buf)[i] = (int32_t)v;
}

static double
get(const void *buf, size_t i, enum rt_dtype t)
{
	return t == RT_FLOAT32 ? (double)((const float *)buf)[i] :
	    (double)((const int32_t *)buf)[i];
}

/* This rank's contribution, with the corruption hook applied, then checked. */
static void
fill(struct rt_group *g, const struct rt_verify_opts *o, void *buf, size_t count,
    enum rt_dtype t, struct row *row)
{
	for (size_t i = 0; i < count; i++)
		put(buf, i, t, rt_verify_value(g->rank, i));
	if (g->rank == o->corrupt_rank && o->corrupt_elem < count)
		put(buf, o->corrupt_elem, t, get(buf, o->corrupt_elem, t) + 1);
	row->bad_in = -1;
	for (size_t i = 0; i < count; i++) {
		double v = get(buf, i, t), want = rt_verify_value(g->rank, i);

		if (v != want) {
			row->bad_in = (int64_t)i;
			row->in_got = v;
			row->in_want = want;
			break;
		}
	}
}

/* The result against the sum of every rank's contribution. */
static void
check(struct rt_group *g, const void *buf, size_t count, enum rt_dtype t, struct row *row)
{
	double ranks = (double)g->size * (g->size + 1) / 2;

	row->wrong = 0;
	row->first = -1;
	for (size_t i = 0; i < count; i++) {
		double v = get(buf, i, t), want = ranks * rt_verify_value(0, i);

		if (v == want)
			continue;
		if (row->wrong++ == 0) {
			row->first = (int64_t)i;
			row->got = v;
			row->want = want;
		}
	}
}

static void
sweep(struct rt_group *g, const struct rt_verify_opts *o, const size_t *sizes,
    const enum rt_dtype *types, size_t nrows, struct row *rows, struct phase *ph)
{
	struct jc_err err = { 0 };
	size_t max = 0;
	char *buf;

	for (size_t i = 0; i < nrows; i++) {
		rows[i].status = 1;
		rows[i].first = rows[i].bad_in = -1;
		if (sizes[i] > max)
			max = sizes[i];
	}
	buf = xmalloc(max + 8);
	for (size_t i = 0; i < nrows; i++) {
		size_t count = sizes[i] / rt_dtype_size(types[i]);
		size_t iters;
		double t0, tw, *all = xcalloc((size_t)g->size, sizeof(double));
		int rc;

		fill(g, o, buf, count, types[i], &rows[i]);
		t0 = jc_now();
		rc = rt_group_all_reduce(g, buf, count, types[i], &err);
		tw = rc < 0 ? -1 : jc_now() - t0;
		if (rc == 0)
			check(g, buf, count, types[i], &rows[i]);
		/*
		 * Every rank must run the same number of iterations: agree on
		 * the slowest warm-up (or on stopping, if any rank failed) and
		 * spend about RT_SWEEP_BUDGET seconds on each size.
		 */
		if (rt_sc_all_gather(g->sc, &tw, sizeof(tw), all, &err) < 0) {
			free(all);
			rc = -EPIPE;
			rows[i].status = rc;
			ph->status = rc;
			snprintf(ph->err, sizeof(ph->err), "rank %d: %.200s", g->rank, err.msg);
			break;
		}
		for (int r = 0; r < g->size; r++) {
			if (all[r] < 0 && rc == 0) {
				rc = -ECANCELED;
				snprintf(err.msg, sizeof(err.msg), "rank %d failed", r);
			}
			if (all[r] > tw)
				tw = all[r];
		}
		free(all);
		iters = tw > 0 ? (size_t)(RT_SWEEP_BUDGET / tw) : 50;
		iters = iters < 1 ? 1 : iters > 50 ? 50 : iters;
		t0 = jc_now();
		for (size_t it = 0; it < iters && rc == 0; it++)
			rc = rt_group_all_reduce(g, buf, count, types[i], &err);
		if (rc < 0) {
			rows[i].status = rc;
			ph->status = rc;
			snprintf(ph->err, sizeof(ph->err), "rank %d: all-reduce of %zu "
			    "bytes: %.180s", g->rank, sizes[i], err.msg);
			break;
		}
		rows[i].usec = (jc_now() - t0) / (double)iters * 1e6;
		rows[i].status = 0;
		ph->reached = (int32_t)(i + 1);
	}
	free(buf);
}

static json_t *
rate(double bps)
{
	return json_pack("{s:f,s:f}", "GBps", bps / 1e9, "Gbps", bps * 8 / 1e9);
}

static int
gather(struct rt_group *g, const void *mine, size_t n, void **all, struct jc_err *err)
{
	*all = xcalloc((size_t)g->size, n ? n : 1);
	return rt_sc_all_gather(g->sc, mine, n, *all, err);
}

/* What the phases of rt_verify_run share: the cables and the report so far. */
struct vrun {
	struct rt_group *g;
	const struct rt_verify_opts *o;
	struct cable *cb;
	size_t nc;
	json_t *rep, *fail;
	bool ok;		/* no failure so far */
	bool cables_ok;		/* every cable up: the later phases can run */
};

/* The report's header: the group, the fabric and the side channel. */
static json_t *
report_header(const struct rt_group *g, const struct rt_verify_opts *o)
{
	json_t *rep = json_object();

	json_object_set_new(rep, "ranks", json_integer(g->size));
	json_object_set_new(rep, "group", json_string(g->kind == RT_MESH ? "mesh" : "ring"));
	json_object_set_new(rep, "wires", json_integer(g->wires));
	json_object_set_new(rep, "fabric", json_string(o->fabric ? o->fabric : "tcp"));
	json_object_set_new(rep, "side_channel",
	    json_string(o->side_channel ? o->side_channel : "tcp"));
	if (o->min_bw > 0)
		json_object_set_new(rep, "min_bw", rate(o->min_bw));
	return rep;
}

/* Cable k as both ends saw it (ra, rb); a failure goes to v->fail. */
static json_t *
link_json(struct vrun *v, size_t k, const struct cres *ra, const struct cres *rb)
{
	const struct cable *cb = &v->cb[k];
	const char *status = "ok", *why = NULL;
	json_t *l;

	if (ra->status < 0 || rb->status < 0) {
		status = "down";
		why = ra->status < 0 ? ra->err : rb->err;
		v->cables_ok = false;
	} else if (v->o->min_bw > 0 && (ra->bw < v->o->min_bw || rb->bw < v->o->min_bw)) {
		status = "slow";
	}
	l = json_pack("{s:i,s:s,s:i,s:s,s:s}", "a", cb->a, "device_a", cb->dev_a,
	    "b", cb->b, "device_b", cb->dev_b, "status", status);
	if (why == NULL) {
		json_object_set_new(l, "a_to_b", rate(ra->bw));
		json_object_set_new(l, "b_to_a", rate(rb->bw));
		json_object_set_new(l, "latency_us", json_pack("{s:f,s:f}",
		    "median", ra->lat_med, "p99", ra->lat_p99));
	} else {
		json_object_set_new(l, "error", json_string(why));
	}
	if (why != NULL)
		json_array_append_new(v->fail, json_sprintf("link %d-%d (%s/%s) is down: %s",
		    cb->a, cb->b, cb->dev_a, cb->dev_b, why));
	else if (strcmp(status, "slow") == 0)
		json_array_append_new(v->fail, json_sprintf("link %d-%d (%s/%s) "
		    "is slower than the floor of %.2f GB/s: %.2f / %.2f GB/s",
		    cb->a, cb->b, cb->dev_a, cb->dev_b, v->o->min_bw / 1e9,
		    ra->bw / 1e9, rb->bw / 1e9));
	if (strcmp(status, "ok") != 0)
		v->ok = false;
	return l;
}

/* 1. each cable alone, one after the other; then the report's links. */
static int
phase_cables(struct vrun *v, struct jc_err *err)
{
	struct cres *mine = xcalloc(v->nc + 1, sizeof(*mine)), *allc = NULL;
	char *buf = xcalloc(1, v->o->msg_bytes + 8);
	json_t *links;
	int rc = 0;

	for (size_t k = 0; k < v->nc && rc == 0; k++) {
		if (v->g->rank == v->cb[k].a || v->g->rank == v->cb[k].b)
			test_cable(v->g, &v->cb[k], k, v->o, buf, &mine[k]);
		rc = rt_sc_barrier(v->g->sc, err);
	}
	if (rc == 0)
		rc = gather(v->g, mine, v->nc * sizeof(*mine), (void **)&allc, err);
	if (rc == 0) {
		v->rep = report_header(v->g, v->o);
		links = json_array();
		for (size_t k = 0; k < v->nc; k++)
			json_array_append_new(links, link_json(v, k,
			    &allc[(size_t)v->cb[k].a * v->nc + k],
			    &allc[(size_t)v->cb[k].b * v->nc + k]));
		json_object_set_new(v->rep, "links", links);
	}
	free(mine);
	free(allc);
	free(buf);
	return rc;
}

/* 2. every cable at once. */
static int
phase_all_links(struct vrun *v, struct jc_err *err)
{
	struct phase ph = { 0 }, *all = NULL;
	double bytes = 0, secs = 0;
	json_t *errs, *a;
	bool good = v->cables_ok;
	int rc;

	if (v->cables_ok) {
		if ((rc = rt_sc_barrier(v->g->sc, err)) < 0)
			return rc;
		rt_verify_event(v->o, v->g->rank, "all links start");
		all_at_once(v->g, v->o, &ph);
	} else {
		ph.status = 1;
	}
	if ((rc = gather(v->g, &ph, sizeof(ph), (void **)&all, err)) < 0) {
		free(all);
		return rc;
	}
	errs = json_array();
	for (int r = 0; r < v->g->size; r++) {
		bytes += all[r].bytes;
		if (all[r].secs > secs)
			secs = all[r].secs;
		if (all[r].status < 0) {
			good = false;
			json_array_append_new(errs, json_string(all[r].err));
		}
	}
	a = json_pack("{s:s,s:I}", "status", !v->cables_ok ? "skipped" : good ? "ok" :
	    "failed", "connections", (json_int_t)v->nc);
	if (good) {
		json_object_update_new(a, rate(bytes / secs));
	} else if (v->cables_ok) {
		v->ok = false;
		json_array_append_new(v->fail, json_sprintf("all links at once: %s",
		    json_string_value(json_array_get(errs, 0))));
	}
	json_object_set_new(a, "errors", errs);
	json_object_set_new(v->rep, "all_links", a);
	v->cables_ok = good;
	free(all);
	return 0;
}

/* The all-reduce sizes: float32 from ar_min to ar_max, then one int32 row. */
static size_t
sweep_sizes(const struct rt_verify_opts *o, size_t *sizes, enum rt_dtype *types)
{
	size_t n = 0;

	for (size_t s = o->ar_min; s <= o->ar_max && n < 47; s *= 2) {
		sizes[n] = s;
		types[n++] = RT_FLOAT32;
	}
	sizes[n] = o->ar_max < (1u << 20) ? o->ar_max : (1u << 20);
	types[n++] = RT_INT32;
	return n;
}

/* What the all-reduce rows of every rank add up to. */
struct sweep_sum {
	const size_t *sizes;
	const enum rt_dtype *types;
	json_t *rows;		/* the report's rows */
	json_t *first;		/* the first wrong element of any row, or NULL */
	json_t *culprits;	/* each rank that contributed wrong data, once */
	bool *named;		/* by rank: in culprits */
	int64_t wrong;
	double busbw_sum;
	size_t counted;
};

/* The ranks' inputs found wrong in row i (each culprit kept once). */
static json_t *
row_bad_inputs(struct sweep_sum *s, const struct row *allr, size_t nrows, size_t i, int size)
{
	json_t *bad = json_array();

	for (int r = 0; r < size; r++) {
		const struct row *w = &allr[(size_t)r * nrows + i];
		json_t *b;

		if (w->bad_in < 0)
			continue;
		b = json_pack("{s:i,s:I,s:f,s:f}", "rank", r, "element", (json_int_t)w->bad_in,
		    "value", w->in_got, "want", w->in_want);
		json_array_append(bad, b);
		if (!s->named[r]) {
			s->named[r] = true;
			json_array_append(s->culprits, b);
		}
		json_decref(b);
	}
	return bad;
}

/* Row i of every rank as one report row (none when a rank did not finish it). */
static void
sweep_row(struct sweep_sum *s, const struct row *allr, size_t nrows, size_t i, int size)
{
	double usec = 0, algbw, busbw, n = size;
	int64_t wrong = 0;
	const struct row *fw = NULL;
	int fr = -1;
	json_t *row, *bad;
	bool done = true;

	for (int r = 0; r < size; r++) {
		const struct row *w = &allr[(size_t)r * nrows + i];

		if (w->status != 0)
			done = false;
		if (w->usec > usec)
			usec = w->usec;
		wrong += w->wrong;
		if (w->first >= 0 && fw == NULL) {
			fw = w;
			fr = r;
		}
	}
	/* a rank's wrong input is named even when the row did not finish */
	bad = row_bad_inputs(s, allr, nrows, i, size);
	if (!done) {
		json_decref(bad);
		return;
	}
	algbw = (double)s->sizes[i] / (usec / 1e6) / 1e9;
	busbw = algbw * 2 * (n - 1) / n;
	row = json_pack("{s:I,s:I,s:s,s:s,s:i,s:f,s:f,s:f,s:I}",
	    "size", (json_int_t)s->sizes[i],
	    "count", (json_int_t)(s->sizes[i] / rt_dtype_size(s->types[i])),
	    "type", rt_dtype_name(s->types[i]), "redop", "sum", "root", -1,
	    "time_us", usec, "algbw", algbw, "busbw", busbw, "wrong", (json_int_t)wrong);
	if (fw != NULL) {
		json_object_set_new(row, "first_wrong", json_pack("{s:i,s:I,s:f,s:f}",
		    "rank", fr, "element", (json_int_t)fw->first, "got", fw->got,
		    "want", fw->want));
		if (s->first == NULL)
			s->first = json_pack("{s:I,s:s,s:i,s:I,s:f,s:f}",
			    "size", (json_int_t)s->sizes[i], "type", rt_dtype_name(s->types[i]),
			    "rank", fr, "element", (json_int_t)fw->first, "got", fw->got,
			    "want", fw->want);
	}
	if (json_array_size(bad) > 0)
		json_object_set(row, "bad_input", bad);
	json_decref(bad);
	json_array_append_new(s->rows, row);
	s->wrong += wrong;
	if (s->types[i] == RT_FLOAT32) {
		s->busbw_sum += busbw;
		s->counted++;
	}
}

/* The failures of the sweep: wrong values (the first named), wrong inputs. */
static void
sweep_failures(struct vrun *v, const struct sweep_sum *s)
{
	const json_t *f = s->first;

	if (s->wrong) {
		v->ok = false;
		if (f != NULL)
			json_array_append_new(v->fail, json_sprintf("all-reduce: %lld wrong "
			    "values; the first: element %lld of the %lld-byte %s all-reduce "
			    "on rank %lld is %.17g, not %.17g", (long long)s->wrong,
			    (long long)json_integer_value(json_object_get(f, "element")),
			    (long long)json_integer_value(json_object_get(f, "size")),
			    json_string_value(json_object_get(f, "type")),
			    (long long)json_integer_value(json_object_get(f, "rank")),
			    json_real_value(json_object_get(f, "got")),
			    json_real_value(json_object_get(f, "want"))));
		else
			json_array_append_new(v->fail, json_sprintf("all-reduce: %lld wrong "
			    "values", (long long)s->wrong));
	}
	for (size_t k = 0; k < json_array_size(s->culprits); k++) {
		json_t *b = json_array_get(s->culprits, k);

		v->ok = false;
		json_array_append_new(v->fail, json_sprintf("all-reduce: rank %lld "
		    "contributed wrong data: its element %lld was %.17g, not %.17g",
		    (long long)json_integer_value(json_object_get(b, "rank")),
		    (long long)json_integer_value(json_object_get(b, "element")),
		    json_real_value(json_object_get(b, "value")),
		    json_real_value(json_object_get(b, "want"))));
	}
}

/* The report's all-reduce from every rank's rows (allr) and phase (all). */
static void
sweep_report(struct vrun *v, const struct row *allr, const struct phase *all,
    const size_t *sizes, const enum rt_dtype *types, size_t nrows)
{
	struct sweep_sum s = { .sizes = sizes, .types = types };
	json_t *a = json_object(), *errs = json_array();
	bool good = v->cables_ok;

	s.rows = json_array();
	s.culprits = json_array();
	s.named = xcalloc((size_t)v->g->size, sizeof(bool));
	for (size_t i = 0; i < nrows; i++)
		sweep_row(&s, allr, nrows, i, v->g->size);
	for (int r = 0; r < v->g->size; r++)
		if (all[r].status < 0) {
			good = false;
			json_array_append_new(errs, json_string(all[r].err));
		}
	json_object_set_new(a, "status", json_string(!v->cables_ok ? "skipped" :
	    !good ? "failed" : s.wrong ? "wrong" : "ok"));
	json_object_set_new(a, "rows", s.rows);
	json_object_set_new(a, "wrong", json_integer(s.wrong));
	json_object_set_new(a, "avg_busbw", json_real(s.counted ? s.busbw_sum /
	    (double)s.counted : 0));
	json_object_set_new(a, "errors", errs);
	json_object_set_new(v->rep, "allreduce", a);
	if (v->cables_ok && !good) {
		v->ok = false;
		json_array_append_new(v->fail, json_sprintf("all-reduce: %s",
		    json_string_value(json_array_get(errs, 0))));
	}
	sweep_failures(v, &s);
	if (s.first != NULL)
		json_object_set_new(a, "first_wrong", s.first);
	json_object_set_new(a, "bad_input", s.culprits);
	free(s.named);
}

/* 3. the all-reduce sweep. */
static int
phase_allreduce(struct vrun *v, struct jc_err *err)
{
	size_t sizes[48], nrows;
	enum rt_dtype types[48];
	struct phase ph = { 0 }, *all = NULL;
	struct row *rows, *allr = NULL;
	int rc = 0;

	nrows = sweep_sizes(v->o, sizes, types);
	rows = xcalloc(nrows, sizeof(*rows));
	if (v->cables_ok) {
		rc = rt_sc_barrier(v->g->sc, err);
		if (rc == 0) {
			rt_verify_event(v->o, v->g->rank, "allreduce start");
			sweep(v->g, v->o, sizes, types, nrows, rows, &ph);
		}
	} else {
		ph.status = 1;
		for (size_t i = 0; i < nrows; i++)
			rows[i].status = 1;
	}
	if (rc == 0)
		rc = gather(v->g, rows, nrows * sizeof(*rows), (void **)&allr, err);
	if (rc == 0)
		rc = gather(v->g, &ph, sizeof(ph), (void **)&all, err);
	if (rc == 0)
		sweep_report(v, allr, all, sizes, types, nrows);
	free(rows);
	free(allr);
	free(all);
	return rc;
}

int
rt_verify_run(struct rt_group *g, const struct rt_config *c,
    const struct rt_verify_opts *o, json_t **report, struct jc_err *err)
{
	struct vrun v = { .g = g, .o = o, .ok = true, .cables_ok = true };
	int rc;

	*report = NULL;
	v.nc = list_cables(c, g, &v.cb);
	v.fail = json_array();
	if ((rc = phase_cables(&v, err)) == 0 && (rc = phase_all_links(&v, err)) == 0 &&
	    (rc = phase_allreduce(&v, err)) == 0 &&
	    (rc = rt_verify_ops(g, o, true, v.cables_ok, v.rep, v.fail, &v.ok, err)) == 0 &&
	    (rc = rt_verify_ops(g, o, false, v.cables_ok, v.rep, v.fail, &v.ok, err)) == 0) {
		json_object_set_new(v.rep, "failures", json_incref(v.fail));
		json_object_set_new(v.rep, "ok", json_boolean(v.ok));
		*report = v.rep;
		v.rep = NULL;
	}
	json_decref(v.rep);
	json_decref(v.fail);
	for (size_t k = 0; k < v.nc; k++) {
		free(v.cb[k].dev_a);
		free(v.cb[k].dev_b);
	}
	free(v.cb);
	return rc;
}
