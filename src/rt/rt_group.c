/* SPDX-License-Identifier: MIT */
/*
 * Groups and their collective operations. Links are described from the
 * device matrix exactly as JACCL pairs them (mesh: rank r's connection to
 * p meets p's connection to r on cell [r][p][0]; ring: left[i] meets the
 * left neighbour's right[i]). The algorithms are the classic ones, written
 * against the fabric's single primitive (complete a set of transfers):
 * mesh all-reduce is a reduce-scatter to each part's owner then an
 * all-gather, reduced in rank order so every rank gets the same bits;
 * ring all-reduce splits the array across both directions and all wires
 * and runs the textbook ring reduce-scatter + all-gather on each slice.
 * Point-to-point transfers take the mesh link, or the ring links towards
 * the neighbour cut over the wires, as JACCL's send and recv do.
 *
 * Built with RT_TEST_BREAK (a test program only, never jaccl-config
 * itself), JACCL_TEST_BREAK=BUG makes one operation wrong the way a
 * collective library goes wrong, so that the tests see verify catch it:
 * allgather-half (ring: both directions carry the lower part of every
 * block, as MLX #4443), allgather-rank (mesh: a peer's block lands in
 * another peer's place), sendrecv-half (ring: every wire sends the first
 * wire's slice), sendrecv-stale (a send carries the data of the first
 * send of that size).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rt_group.h"
#include "util.h"

#define MESH_SEGMENT (32u << 20)	/* bytes reduced per mesh round */
#define RING_SMALL 32768		/* JACCL: single direction and wire below */

#ifdef RT_TEST_BREAK
static bool
broken(const char *bug)
{
	const char *e = getenv("JACCL_TEST_BREAK");

	return e != NULL && strcmp(e, bug) == 0;
}
#else
#define broken(bug) false
#endif

size_t
rt_dtype_size(enum rt_dtype t)
{
	return t == RT_FLOAT64 || t == RT_INT64 ? 8 : 4;
}

const char *
rt_dtype_name(enum rt_dtype t)
{
	switch (t) {
	case RT_FLOAT32: return "float";
	case RT_INT32: return "int32";
	case RT_FLOAT64: return "double";
	case RT_INT64: return "int64";
	}
	return "?";
}

const struct rt_fabric_ops *
rt_fabric_find(const char *name)
{
	if (strcmp(name, "tcp") == 0)
		return &rt_fabric_tcp;
	if (strcmp(name, "verbs") == 0)
		return &rt_fabric_verbs;
	return NULL;
}

static void
add_link(struct rt_group *g, int peer, enum rt_dir dir, int wire, int peer_index,
    const char *dev, const char *peer_dev, bool active)
{
	struct rt_link *l = &g->links[g->nlinks];

	l->index = (int)g->nlinks++;
	l->peer = peer;
	l->dir = dir;
	l->wire = wire;
	l->peer_index = peer_index;
	l->device = xstrdup(dev);
	l->peer_device = xstrdup(peer_dev);
	l->active = active;
}

int
rt_group_new(struct rt_group **out, const struct rt_config *c, enum rt_kind kind,
    int wires, double timeout)
{
	struct rt_group *g = xcalloc(1, sizeof(*g));
	int r = c->rank, n = c->size;

	g->rank = r;
	g->size = n;
	g->kind = kind;
	g->wires = kind == RT_MESH ? 1 : wires;
	g->timeout = timeout;
	if (kind == RT_MESH) {
		g->links = xcalloc((size_t)n, sizeof(*g->links));
		for (int p = 0; p < n; p++)
			if (p != r)
				add_link(g, p, RT_PEER, 0, r < p ? r : r - 1,
				    rt_config_cell(c, r, p)->names[0],
				    rt_config_cell(c, p, r)->names[0], r < p);
	} else {
		int left = (r + n - 1) % n, right = (r + 1) % n;

		g->links = xcalloc((size_t)(2 * wires), sizeof(*g->links));
		for (int w = 0; w < wires; w++)
			add_link(g, left, RT_LEFT, w, wires + w,
			    rt_config_cell(c, r, left)->names[w],
			    rt_config_cell(c, left, r)->names[w], false);
		for (int w = 0; w < wires; w++)
			add_link(g, right, RT_RIGHT, w, w,
			    rt_config_cell(c, r, right)->names[w],
			    rt_config_cell(c, right, r)->names[w], true);
	}
	*out = g;
	return 0;
}

int
rt_group_open(struct rt_group **out, const struct rt_config *c, enum rt_kind kind,
    int wires, const struct rt_fabric_ops *fab, struct rt_sc *sc, double timeout,
    struct jc_err *err)
{
	struct rt_group *g;
	unsigned char *mine, *all, *peer;
	struct { int32_t status; struct jc_err err; } st = { 0 }, *sts = NULL;
	size_t blk;
	int rc, r2;

	*out = NULL;
	rt_group_new(&g, c, kind, wires, timeout);
	g->fab = fab;
	g->sc = sc;
	blk = g->nlinks * RT_RECORD_SIZE;
	mine = xcalloc(1, blk);
	all = xcalloc((size_t)g->size, blk);
	peer = xcalloc(1, blk);
	/*
	 * Every rank takes part in both exchanges even when its own part
	 * failed, so that all ranks learn which link failed and why.
	 */
	rc = fab->prepare(g, mine, &st.err);
	if ((r2 = rt_sc_all_gather(sc, mine, blk, all, err)) < 0) {
		rc = r2;
		goto out;
	}
	if (rc == 0) {
		for (size_t i = 0; i < g->nlinks; i++) {
			struct rt_link *l = &g->links[i];

			memcpy(peer + i * RT_RECORD_SIZE, all + (size_t)l->peer * blk +
			    (size_t)l->peer_index * RT_RECORD_SIZE, RT_RECORD_SIZE);
		}
		rc = fab->connect(g, peer, &st.err);
	}
	st.status = rc;
	sts = xcalloc((size_t)g->size, sizeof(*sts));
	if ((rc = rt_sc_all_gather(sc, &st, sizeof(st), sts, err)) < 0)
		goto out;
	{
		struct jc_buf b = { 0 };

		for (int r = 0; r < g->size; r++) {
			if (sts[r].status == 0)
				continue;
			if (rc == 0)
				rc = sts[r].status < 0 ? sts[r].status : -EIO;
			sts[r].err.msg[sizeof(sts[r].err.msg) - 1] = '\0';
			buf_printf(&b, "%srank %d: %s", b.len ? "; " : "", r, sts[r].err.msg);
		}
		if (rc < 0)
			jc_fail(err, rc, "%s", b.data);
		buf_free(&b);
	}
out:
	free(sts);
	free(mine);
	free(all);
	free(peer);
	if (rc < 0) {
		rt_group_close(g);
		return rc;
	}
	*out = g;
	return 0;
}

struct rt_link *
rt_group_link(struct rt_group *g, int peer, enum rt_dir dir, int wire)
{
	for (size_t i = 0; i < g->nlinks; i++) {
		struct rt_link *l = &g->links[i];

		if (g->kind == RT_MESH ? l->peer == peer :
		    (l->dir == dir && l->wire == wire))
			return l;
	}
	return NULL;
}

int
rt_group_run(struct rt_group *g, struct rt_xfer *x, size_t n, struct jc_err *err)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (x[i].link->dead)
			return jc_fail(err, -EPIPE, "link to rank %d over %s is down",
			    x[i].link->peer, x[i].link->device);
		if (x[i].len == 0)
			continue;
		x[i].done = 0;
		x[k++] = x[i];
	}
	if (k == 0)
		return 0;
	return g->fab->run(g, x, k, err);
}

int
rt_group_send(struct rt_group *g, struct rt_link *l, const void *buf, size_t len,
    struct jc_err *err)
{
	struct rt_xfer x = { .link = l, .send = true, .buf = (void *)buf, .len = len };

	return rt_group_run(g, &x, 1, err);
}

int
rt_group_recv(struct rt_group *g, struct rt_link *l, void *buf, size_t len,
    struct jc_err *err)
{
	struct rt_xfer x = { .link = l, .send = false, .buf = buf, .len = len };

	return rt_group_run(g, &x, 1, err);
}

/* The transfers of one direction of rt_group_sendrecv(), appended to x. */
static int
p2p(struct rt_group *g, bool send, char *buf, size_t len, int peer, struct rt_xfer *x,
    size_t *k, struct jc_err *err)
{
	int left = (g->rank + g->size - 1) % g->size, right = (g->rank + 1) % g->size;
	const char *what = send ? "send to" : "receive from";
	enum rt_dir dir;
	size_t per;

	if (peer < 0 || peer >= g->size || peer == g->rank)
		return jc_fail(err, -EINVAL, "rank %d cannot %s rank %d: not a peer in a "
		    "group of %d", g->rank, what, peer, g->size);
	if (g->kind == RT_MESH) {
		x[(*k)++] = (struct rt_xfer){ .link = rt_group_link(g, peer, RT_PEER, 0),
		    .send = send, .buf = buf, .len = len };
		return 0;
	}
	if (peer != left && peer != right)
		return jc_fail(err, -EINVAL, "rank %d cannot %s rank %d: on a ring only "
		    "the neighbours %d and %d are connected", g->rank, what, peer, left, right);
	/* JACCL: a send to the left neighbour takes the left links, a receive
	 * from the right one the right links (on 2 ranks both hold) */
	dir = send ? (peer == left ? RT_LEFT : RT_RIGHT) : (peer == right ? RT_RIGHT : RT_LEFT);
	per = (len + (size_t)g->wires - 1) / (size_t)g->wires;
	for (int w = 0; w < g->wires; w++) {
		size_t off = (size_t)w * per < len ? (size_t)w * per : len;
		size_t end = off + per < len ? off + per : len;

		if (send && broken("sendrecv-half"))
			x[*k] = (struct rt_xfer){ .buf = buf, .len = end - off };
		else
			x[*k] = (struct rt_xfer){ .buf = buf + off, .len = end - off };
		x[*k].link = rt_group_link(g, peer, dir, w);
		x[(*k)++].send = send;
	}
	return 0;
}

int
rt_group_sendrecv(struct rt_group *g, const void *sbuf, size_t n, int to, void *rbuf,
    size_t m, int from, struct jc_err *err)
{
	struct rt_xfer x[2 * RT_RING_MAX_CONNS];
	const char *src = sbuf;
	size_t k = 0;
	int rc;

#ifdef RT_TEST_BREAK
	static char *first;
	static size_t nfirst;

	if (to >= 0 && broken("sendrecv-stale")) {
		if (n != nfirst) {
			free(first);
			first = xmalloc(n + 1);
			memcpy(first, sbuf, n);
			nfirst = n;
		}
		src = first;
	}
#endif
	if (to >= 0 && (rc = p2p(g, true, (char *)src, n, to, x, &k, err)) < 0)
		return rc;
	if (from >= 0 && (rc = p2p(g, false, rbuf, m, from, x, &k, err)) < 0)
		return rc;
	return rt_group_run(g, x, k, err);
}

static void
reduce(void *dst, const void *src, size_t count, enum rt_dtype t)
{
	switch (t) {
	case RT_FLOAT32: {
		float *d = dst;
		const float *s = src;

		for (size_t i = 0; i < count; i++)
			d[i] += s[i];
		break;
	}
	case RT_INT32: {
		int32_t *d = dst;
		const int32_t *s = src;

		/* wrap around like two's complement hardware, without UB */
		for (size_t i = 0; i < count; i++)
			d[i] = (int32_t)((uint32_t)d[i] + (uint32_t)s[i]);
		break;
	}
	case RT_FLOAT64: {
		double *d = dst;
		const double *s = src;

		for (size_t i = 0; i < count; i++)
			d[i] += s[i];
		break;
	}
	case RT_INT64: {
		int64_t *d = dst;
		const int64_t *s = src;

		for (size_t i = 0; i < count; i++)
			d[i] = (int64_t)((uint64_t)d[i] + (uint64_t)s[i]);
		break;
	}
	}
}

/* Scratch space of at least n bytes, kept between calls (no page faults). */
static char *
scratch(struct rt_group *g, size_t n)
{
	if (n > g->nscratch) {
		free(g->scratch);
		g->scratch = xmalloc(n);
		g->nscratch = n;
	}
	return g->scratch;
}

/* ---- mesh ---- */

static int
mesh_all_gather(struct rt_group *g, const void *src, size_t n, void *dst,
    struct jc_err *err)
{
	struct rt_xfer *x = xcalloc(2 * g->nlinks, sizeof(*x));
	size_t k = 0;
	int rc;

	memcpy((char *)dst + (size_t)g->rank * n, src, n);
	for (size_t i = 0; i < g->nlinks; i++) {
		struct rt_link *l = &g->links[i];

		int slot = l->peer;

		if (broken("allgather-rank"))
			slot = g->links[(i + 1) % g->nlinks].peer;
		x[k++] = (struct rt_xfer){ .link = l, .send = true, .buf = (void *)src, .len = n };
		x[k++] = (struct rt_xfer){ .link = l, .send = false,
		    .buf = (char *)dst + (size_t)slot * n, .len = n };
	}
	rc = rt_group_run(g, x, k, err);
	free(x);
	return rc;
}

static int
mesh_all_reduce(struct rt_group *g, char *buf, size_t count, enum rt_dtype t,
    struct jc_err *err)
{
	size_t es = rt_dtype_size(t), n = (size_t)g->size, me = (size_t)g->rank;
	size_t seg = MESH_SEGMENT / es, off[RT_MESH_MAX_PEERS + 1];
	struct rt_xfer *x = xcalloc(2 * n, sizeof(*x));
	char **tmp = xcalloc(n, sizeof(char *)), *space;
	size_t part;
	int rc = 0;

	if (seg < n)
		seg = n;
	if (seg > count)
		seg = count;
	part = (seg / n + 1) * es;
	space = scratch(g, part * n);
	for (size_t p = 0; p < n; p++)
		tmp[p] = space + p * part;
	for (size_t base = 0; base < count && rc == 0; base += seg) {
		size_t len = count - base < seg ? count - base : seg, k = 0;
		char *b = buf + base * es;

		for (size_t p = 0; p <= n; p++)
			off[p] = p * len / n;
		/* reduce-scatter: part p goes to its owner p */
		for (size_t i = 0; i < g->nlinks; i++) {
			struct rt_link *l = &g->links[i];
			size_t p = (size_t)l->peer;

			x[k++] = (struct rt_xfer){ .link = l, .send = true,
			    .buf = b + off[p] * es, .len = (off[p + 1] - off[p]) * es };
			x[k++] = (struct rt_xfer){ .link = l, .send = false,
			    .buf = tmp[p], .len = (off[me + 1] - off[me]) * es };
		}
		if ((rc = rt_group_run(g, x, k, err)) < 0)
			break;
		/* own part = sum in rank order 0..n-1: the same bits everywhere */
		{
			size_t m = off[me + 1] - off[me];
			char *mine = b + off[me] * es;

			if (me != 0) {
				memcpy(tmp[me], mine, m * es);
				memcpy(mine, tmp[0], m * es);
			}
			for (size_t p = 1; p < n; p++)
				reduce(mine, tmp[p], m, t);
		}
		/* all-gather of the reduced parts */
		k = 0;
		for (size_t i = 0; i < g->nlinks; i++) {
			struct rt_link *l = &g->links[i];
			size_t p = (size_t)l->peer;

			x[k++] = (struct rt_xfer){ .link = l, .send = true,
			    .buf = b + off[me] * es, .len = (off[me + 1] - off[me]) * es };
			x[k++] = (struct rt_xfer){ .link = l, .send = false,
			    .buf = b + off[p] * es, .len = (off[p + 1] - off[p]) * es };
		}
		rc = rt_group_run(g, x, k, err);
	}
	free(tmp);
	free(x);
	return rc;
}

/* ---- ring ---- */

struct slice {
	size_t off, len;	/* elements (or bytes) of the whole array */
	struct rt_link *send, *recv;
	int sign;		/* +1: data flows right, -1: left */
	char *tmp;
};

/* Slices over both directions and all wires, or one when small. */
static size_t
ring_slices(struct rt_group *g, size_t len, bool small, struct slice *s)
{
	size_t ns = small ? 1 : 2 * (size_t)g->wires;

	for (size_t i = 0; i < ns; i++) {
		int w = (int)(i % (size_t)g->wires), right = i < (size_t)g->wires;

		s[i].off = i * len / ns;
		s[i].len = (i + 1) * len / ns - s[i].off;
		s[i].send = rt_group_link(g, 0, right ? RT_RIGHT : RT_LEFT, w);
		s[i].recv = rt_group_link(g, 0, right ? RT_LEFT : RT_RIGHT, w);
		s[i].sign = right ? 1 : -1;
		s[i].tmp = NULL;
	}
	return ns;
}

static size_t
mod(long a, long n)
{
	return (size_t)(((a % n) + n) % n);
}

/* chunk c of a slice of len elements cut in n */
static void
chunk(const struct slice *s, size_t c, size_t n, size_t *off, size_t *len)
{
	*off = s->off + c * s->len / n;
	*len = s->off + (c + 1) * s->len / n - *off;
}

static int
ring_all_gather(struct rt_group *g, const void *src, size_t n, void *dst,
    struct jc_err *err)
{
	struct slice s[2 * RT_RING_MAX_CONNS];
	struct rt_xfer x[4 * RT_RING_MAX_CONNS];
	long N = g->size, r = g->rank;
	size_t ns = ring_slices(g, n, n * (size_t)N <= RING_SMALL, s);
	char *d = dst;
	int rc = 0;

	if (broken("allgather-half"))
		for (size_t i = (size_t)g->wires; i < ns; i++) {
			s[i].off = s[i - (size_t)g->wires].off;
			s[i].len = s[i - (size_t)g->wires].len;
		}
	memcpy(d + (size_t)r * n, src, n);
	for (long step = 0; step < N - 1 && rc == 0; step++) {
		size_t k = 0;

		for (size_t i = 0; i < ns; i++) {
			size_t sb = mod(r - s[i].sign * step, N);
			size_t rb = mod(r - s[i].sign * (step + 1), N);

			x[k++] = (struct rt_xfer){ .link = s[i].send, .send = true,
			    .buf = d + sb * n + s[i].off, .len = s[i].len };
			x[k++] = (struct rt_xfer){ .link = s[i].recv, .send = false,
			    .buf = d + rb * n + s[i].off, .len = s[i].len };
		}
		rc = rt_group_run(g, x, k, err);
	}
	return rc;
}

static int
ring_all_reduce(struct rt_group *g, char *buf, size_t count, enum rt_dtype t,
    struct jc_err *err)
{
	struct slice s[2 * RT_RING_MAX_CONNS];
	struct rt_xfer x[4 * RT_RING_MAX_CONNS];
	size_t es = rt_dtype_size(t), N = (size_t)g->size, r = (size_t)g->rank;
	bool small = count * es <= RING_SMALL || count < N * 2 * (size_t)g->wires;
	size_t ns = ring_slices(g, count, small, s);
	int rc = 0;

	{
		size_t part = (count / ns / N + 2) * es;
		char *space = scratch(g, part * ns);

		for (size_t i = 0; i < ns; i++)
			s[i].tmp = space + i * part;
	}
	/* reduce-scatter: after N-1 steps chunk r+sign of each slice is complete */
	for (size_t step = 0; step + 1 < N && rc == 0; step++) {
		size_t k = 0, so, sl, ro, rl;

		for (size_t i = 0; i < ns; i++) {
			chunk(&s[i], mod((long)r - s[i].sign * (long)step, (long)N), N, &so, &sl);
			chunk(&s[i], mod((long)r - s[i].sign * (long)(step + 1), (long)N), N, &ro, &rl);
			x[k++] = (struct rt_xfer){ .link = s[i].send, .send = true,
			    .buf = buf + so * es, .len = sl * es };
			x[k++] = (struct rt_xfer){ .link = s[i].recv, .send = false,
			    .buf = s[i].tmp, .len = rl * es };
		}
		if ((rc = rt_group_run(g, x, k, err)) < 0)
			break;
		for (size_t i = 0; i < ns; i++) {
			chunk(&s[i], mod((long)r - s[i].sign * (long)(step + 1), (long)N), N, &ro, &rl);
			reduce(buf + ro * es, s[i].tmp, rl, t);
		}
	}
	/* all-gather of the complete chunks */
	for (size_t step = 0; step + 1 < N && rc == 0; step++) {
		size_t k = 0, so, sl, ro, rl;

		for (size_t i = 0; i < ns; i++) {
			chunk(&s[i], mod((long)r + s[i].sign * (1 - (long)step), (long)N), N, &so, &sl);
			chunk(&s[i], mod((long)r - s[i].sign * (long)step, (long)N), N, &ro, &rl);
			x[k++] = (struct rt_xfer){ .link = s[i].send, .send = true,
			    .buf = buf + so * es, .len = sl * es };
			x[k++] = (struct rt_xfer){ .link = s[i].recv, .send = false,
			    .buf = buf + ro * es, .len = rl * es };
		}
		rc = rt_group_run(g, x, k, err);
	}
	return rc;
}

int
rt_group_all_gather(struct rt_group *g, const void *src, size_t n, void *dst,
    struct jc_err *err)
{
	if (g->kind == RT_MESH)
		return mesh_all_gather(g, src, n, dst, err);
	return ring_all_gather(g, src, n, dst, err);
}

int
rt_group_all_reduce(struct rt_group *g, void *buf, size_t count, enum rt_dtype t,
    struct jc_err *err)
{
	if (count == 0)
		return 0;
	if (g->kind == RT_MESH)
		return mesh_all_reduce(g, buf, count, t, err);
	return ring_all_reduce(g, buf, count, t, err);
}

int
rt_group_barrier(struct rt_group *g, struct jc_err *err)
{
	unsigned char one = 1, *all = xcalloc((size_t)g->size, 1);
	int rc = rt_group_all_gather(g, &one, 1, all, err);

	free(all);
	return rc;
}

void
rt_group_close(struct rt_group *g)
{
	if (g == NULL)
		return;
	if (g->fab != NULL)
		g->fab->close(g);
	for (size_t i = 0; i < g->nlinks; i++) {
		free(g->links[i].device);
		free(g->links[i].peer_device);
	}
	free(g->links);
	free(g->scratch);
	free(g);
}
