/* SPDX-License-Identifier: MIT */
/*
 * Hostfile rules. The backend is the one given, else the file's, else the
 * one the rdma matrix describes: a valid mesh of at most 8 ranks is jaccl,
 * a valid ring in rank order is jaccl-ring, any other non-empty matrix is
 * judged as the backend it is closer to (jaccl when at least half of the
 * pairs are listed, else jaccl-ring), and a file without any RDMA device is
 * ring. Every rule then runs once over the matrix, so a check is linear in
 * the size of the file (apart from sorting names per host).
 */
#include "config.h"

#include <stdint.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "hostfile_check.h"

/* A growable vector of host indices. */
struct idxv {
	size_t *v;
	size_t n, cap;
};

static void
idxv_push(struct idxv *x, size_t i)
{
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 16;
		x->v = xreallocarray(x->v, x->cap, sizeof(*x->v));
	}
	x->v[x->n++] = i;
}

struct tally {
	const char *code;
	bool warning;
	size_t count;		/* items added */
	long overflow;		/* index of the summary item, -1 if none */
	size_t extra;		/* items summed up in it */
	unsigned char *seen;	/* ranks already in the summary item */
	struct idxv ranks;	/* the ranks of the summary item */
};

struct ctx {
	const struct jc_hostfile *hf;
	struct check_report *rep;
	size_t n;
	struct tally *tally;
	size_t ntally;
	bool *rdma_bad;		/* the host's rdma had a type error */
	bool *row_ok;		/* rdma has one well-typed entry per host */
	bool ips0_bad;		/* rank 0's ips had a type error */
	bool backend_bad;	/* "backend" had a type error */
	unsigned char *mark;	/* scratch, one byte per host, kept zero */
};

static struct tally *
tally_get(struct ctx *c, const char *code, bool warning)
{
	for (size_t i = 0; i < c->ntally; i++)
		if (c->tally[i].warning == warning && strcmp(c->tally[i].code, code) == 0)
			return &c->tally[i];
	c->tally = xreallocarray(c->tally, c->ntally + 1, sizeof(*c->tally));
	c->tally[c->ntally] = (struct tally){ .code = code, .warning = warning, .overflow = -1 };
	return &c->tally[c->ntally++];
}

/* Add a problem (or warning) about ranks; past CHECK_SAME_CODE_MAX of one code, sum up. */
static void JC_PRINTF(6, 7)
add(struct ctx *c, bool warning, const char *code, const size_t *ranks, size_t nranks,
    const char *fmt, ...)
{
	struct check_item **list = warning ? &c->rep->warnings : &c->rep->problems;
	size_t *nlist = warning ? &c->rep->nwarnings : &c->rep->nproblems;
	struct tally *t = tally_get(c, code, warning);
	struct check_item *it;
	va_list ap;

	if (t->count >= CHECK_SAME_CODE_MAX) {
		if (t->overflow < 0) {
			*list = xreallocarray(*list, *nlist + 1, sizeof(**list));
			(*list)[*nlist] = (struct check_item){ .code = code };
			t->overflow = (long)(*nlist)++;
			t->seen = xcalloc(c->n ? c->n : 1, 1);
		}
		for (size_t i = 0; i < nranks; i++) {
			if (ranks[i] < c->n && !t->seen[ranks[i]]) {
				t->seen[ranks[i]] = 1;
				idxv_push(&t->ranks, ranks[i]);
			}
		}
		t->extra++;
		return;
	}
	t->count++;
	*list = xreallocarray(*list, *nlist + 1, sizeof(**list));
	it = &(*list)[(*nlist)++];
	memset(it, 0, sizeof(*it));
	it->code = code;
	va_start(ap, fmt);
	it->msg = xvasprintf(fmt, ap);
	va_end(ap);
	/* each host once, in the order given */
	if (nranks > 0)
		it->ranks = xcalloc(nranks, sizeof(*it->ranks));
	for (size_t i = 0; i < nranks; i++) {
		if (ranks[i] < c->n && !c->mark[ranks[i]]) {
			c->mark[ranks[i]] = 1;
			it->ranks[it->nranks++] = ranks[i];
		}
	}
	for (size_t i = 0; i < it->nranks; i++)
		c->mark[it->ranks[i]] = 0;
}

static void
tally_finish(struct ctx *c)
{
	for (size_t i = 0; i < c->ntally; i++) {
		struct tally *t = &c->tally[i];
		struct check_item *list = t->warning ? c->rep->warnings : c->rep->problems;

		if (t->overflow >= 0) {
			list[t->overflow].msg = xasprintf("and %zu more %s of this kind",
			    t->extra, t->warning ? "warnings" : "problems");
			list[t->overflow].ranks = t->ranks.v;
			list[t->overflow].nranks = t->ranks.n;
		} else {
			free(t->ranks.v);
		}
		free(t->seen);
	}
	free(c->tally);
}

static const char *
nm(const struct ctx *c, size_t i)
{
	return c->rep->names[i];
}

/* "a, b, c and K more" from the first max of v (n items of the form fn(i)). */
static char *
list_names(const struct ctx *c, const size_t *v, size_t n, size_t max)
{
	struct jc_buf b = { 0 };

	for (size_t i = 0; i < n && i < max; i++) {
		if (i > 0)
			buf_puts(&b, i + 1 == n ? " and " : ", ");
		buf_puts(&b, nm(c, v[i]));
	}
	if (n > max)
		buf_printf(&b, " and %zu more", n - max);
	return buf_steal(&b);
}

/* A device name for a message: as listed when it is a valid name. */
static const char *
dev(const char *s)
{
	return jc_iface_name_ok(s) ? s : "(an invalid name)";
}

static const struct jc_hf_cell *
cell(const struct ctx *c, size_t i, size_t j)
{
	const struct jc_hf_host *h = &c->hf->hosts[i];

	return j < h->nrdma ? &h->rdma[j] : NULL;
}

static size_t
cnt(const struct ctx *c, size_t i, size_t j)
{
	const struct jc_hf_cell *x = cell(c, i, j);

	return x ? x->n : 0;
}

static bool
all_rows_ok(const struct ctx *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (!c->row_ok[i])
			return false;
	return true;
}

static bool
mesh_ok(const struct ctx *c)
{
	if (c->n < 2 || c->n > CHECK_MESH_MAX || !all_rows_ok(c))
		return false;
	for (size_t i = 0; i < c->n; i++)
		for (size_t j = 0; j < c->n; j++)
			if ((i == j) != (cnt(c, i, j) == 0))
				return false;
	return true;
}

static bool
ring_ok(const struct ctx *c)
{
	size_t k, n = c->n;

	if (n < 2 || !all_rows_ok(c))
		return false;
	k = cnt(c, 0, 1);
	if (k < 1 || k > CHECK_RING_MAX)
		return false;
	for (size_t r = 0; r < n; r++)
		if (cnt(c, r, (r + n - 1) % n) != k || cnt(c, r, (r + 1) % n) != k ||
		    cnt(c, r, r) != 0)
			return false;
	return true;
}

static const char *
choose_backend(const struct ctx *c)
{
	unsigned long listed = 0, cells = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct jc_hf_host *h = &c->hf->hosts[i];

		for (size_t j = 0; j < h->nrdma; j++) {
			if (j != i)
				cells++;
			if (h->rdma[j].n > 0 && j != i)
				listed++;
		}
	}
	if (listed == 0)
		return "ring";
	if (mesh_ok(c))
		return "jaccl";
	if (ring_ok(c))
		return "jaccl-ring";
	return 2 * listed >= (unsigned long)c->n * (c->n - 1) ? "jaccl" : "jaccl-ring";
}

struct named {
	const char *s;
	size_t a, b;
};

static int
named_cmp(const void *x, const void *y)
{
	const struct named *p = x, *q = y;
	int r = strcmp(p->s, q->s);

	if (r != 0)
		return r;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/*
 * Hosts listed under one ssh name, found with a hash table (linear in the
 * number of hosts): each name's ranks are chained in rank order, and the
 * names are reported in the order of their first rank.
 */
static void
rule_duplicate_hosts(struct ctx *c, const char *backend)
{
	/* under JACCL every rank talks RDMA to its peers: two on one Mac need a
	 * cable from that Mac to itself; the ring backend's TCP does not */
	bool jaccl = backend != NULL && strcmp(backend, "ring") != 0 &&
	    c->rep->backend_source != NULL && strcmp(c->rep->backend_source, "cabling") != 0;
	size_t cap = 16, *slot, *next, *last, *count;

	while (cap < 2 * c->n)
		cap *= 2;
	slot = xmalloc(cap * sizeof(*slot));
	for (size_t k = 0; k < cap; k++)
		slot[k] = SIZE_MAX;
	next = xcalloc(c->n, sizeof(*next));
	last = xcalloc(c->n, sizeof(*last));
	count = xcalloc(c->n, sizeof(*count));
	for (size_t i = 0; i < c->n; i++) {
		const char *s = c->hf->hosts[i].ssh;
		size_t k;

		next[i] = SIZE_MAX;
		if (s == NULL || *s == '\0')
			continue;
		for (k = name_hash(s) & (cap - 1); slot[k] != SIZE_MAX; k = (k + 1) & (cap - 1))
			if (strcmp(c->hf->hosts[slot[k]].ssh, s) == 0)
				break;
		if (slot[k] == SIZE_MAX) {
			slot[k] = i;
			last[i] = i;
			count[i] = 1;
		} else {
			size_t f = slot[k];

			next[last[f]] = i;
			last[f] = i;
			count[f]++;
		}
	}
	for (size_t i = 0; i < c->n; i++) {
		size_t *r, m = 0;

		if (count[i] < 2)
			continue;
		r = xcalloc(count[i], sizeof(*r));
		for (size_t j = i; j != SIZE_MAX; j = next[j])
			r[m++] = j;
		if (jaccl)
			add(c, false, "duplicate-host", r, m,
			    "%s is listed %zu times (ranks %zu and %zu%s): under %s two ranks on "
			    "one Mac would need a Thunderbolt cable from that Mac to itself",
			    nm(c, i), m, r[0], r[1], m > 2 ? " ..." : "", backend);
		else
			add(c, true, "duplicate-host", r, m,
			    "%s is listed %zu times (ranks %zu and %zu%s): the ranks share one "
			    "machine", nm(c, i), m, r[0], r[1], m > 2 ? " ..." : "");
		free(r);
	}
	free(slot);
	free(next);
	free(last);
	free(count);
}

static void
rule_ring_ips(struct ctx *c)
{
	size_t *v = xcalloc(c->n, sizeof(*v)), m = 0;

	for (size_t i = 0; i < c->n; i++)
		if (c->hf->hosts[i].nips == 0)
			v[m++] = i;
	if (m > 0) {
		char *s = list_names(c, v, m, 5);

		add(c, false, "ring-needs-ips", v, m,
		    "the ring backend connects to the IPs of every host; no IP is listed for %s", s);
		free(s);
	}
	free(v);
}

static void
rule_coordinator(struct ctx *c)
{
	const struct jc_hf_host *h0 = &c->hf->hosts[0];
	size_t r0 = 0;

	if (h0->nips == 0) {
		add(c, false, "rank0-no-ip", &r0, 1,
		    "rank 0 (%s) has no IP: its first IP is the coordinator every other rank "
		    "connects to, and it must be reachable from all of them", nm(c, 0));
		return;
	}
	if (strchr(h0->ips[0], ':') != NULL) {
		add(c, false, "coordinator-not-ipv4", &r0, 1,
		    "rank 0 (%s) lists an IPv6 address first: JACCL's coordinator is IPv4 only",
		    nm(c, 0));
	} else if (!jc_ipv4_ok(h0->ips[0]) && hostfile_ip_ok(h0->ips[0])) {
		add(c, true, "coordinator-hostname", &r0, 1,
		    "rank 0 (%s) lists the name %s first: every rank must resolve it to an IPv4 "
		    "address of rank 0", nm(c, 0), h0->ips[0]);
	}
}

/* Per host: one device for two peers, one device twice for one peer. */
static void
rule_devices(struct ctx *c, size_t i)
{
	const struct jc_hf_host *h = &c->hf->hosts[i];
	struct named *v;
	size_t m = 0, total = 0, lim = h->nrdma < c->n ? h->nrdma : c->n;

	for (size_t j = 0; j < lim; j++)
		if (j != i)
			total += h->rdma[j].n;
	if (total < 2)
		return;
	v = xcalloc(total, sizeof(*v));
	for (size_t j = 0; j < lim; j++)
		for (size_t k = 0; j != i && k < h->rdma[j].n; k++)
			v[m++] = (struct named){ h->rdma[j].names[k], j, k };
	qsort(v, m, sizeof(*v), named_cmp);
	for (size_t a = 0; a < m;) {
		size_t e = a + 1, npeers = 1;

		while (e < m && strcmp(v[e].s, v[a].s) == 0)
			e++;
		for (size_t k = a + 1; k < e; k++) {
			if (v[k].a == v[k - 1].a) {
				size_t r[2] = { i, v[k].a };

				add(c, false, "duplicate-device", r, 2,
				    "%s lists %s twice for %s: each cable has its own device",
				    nm(c, i), dev(v[k].s), nm(c, v[k].a));
			} else {
				npeers++;
			}
		}
		if (npeers > 1) {
			size_t *r = xcalloc(npeers + 1, sizeof(*r)), nr = 1;
			char *peers;

			r[0] = i;
			for (size_t k = a; k < e; k++)
				if (k == a || v[k].a != v[k - 1].a)
					r[nr++] = v[k].a;
			peers = list_names(c, r + 1, nr - 1, 3);
			add(c, false, "device-two-peers", r, nr,
			    "%s lists %s for %s: a Thunderbolt port is cabled to one Mac only",
			    nm(c, i), dev(v[a].s), peers);
			free(peers);
			free(r);
		}
		a = e;
	}
	free(v);
}

static int
size_cmp(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	return a < b ? -1 : a > b;
}

/* The value most of w[0..m) hold (the smallest of a tie), 0 if m is 0; sorts w. */
static size_t
most_common(size_t *w, size_t m)
{
	size_t best = 0, v = 0;

	qsort(w, m, sizeof(*w), size_cmp);
	for (size_t i = 0; i < m;) {
		size_t e = i;

		while (e < m && w[e] == w[i])
			e++;
		if (e - i > best) {
			best = e - i;
			v = w[i];
		}
		i = e;
	}
	return v;
}

static int
str_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Queue pairs JACCL opens per device on host i, against Apple's limit. */
static void
rule_qp(struct ctx *c, size_t i, bool ring)
{
	const struct jc_hf_cell *l = NULL, *r = NULL;
	const char **v;
	size_t m = 0, n = c->n;

	if (ring) {
		l = cell(c, i, (i + n - 1) % n);
		r = cell(c, i, (i + 1) % n);
		v = xcalloc((l ? l->n : 0) + (r ? r->n : 0) + 1, sizeof(*v));
		for (size_t k = 0; l && k < l->n; k++)
			v[m++] = l->names[k];
		for (size_t k = 0; r && k < r->n; k++)
			v[m++] = r->names[k];
	} else {
		v = xcalloc(n, sizeof(*v));
		for (size_t j = 0; j < n; j++)
			if (j != i && cnt(c, i, j) > 0)
				v[m++] = cell(c, i, j)->names[0];
	}
	qsort(v, m, sizeof(*v), str_cmp);
	for (size_t a = 0; a < m;) {
		size_t e = a + 1;

		while (e < m && strcmp(v[e], v[a]) == 0)
			e++;
		if (e - a > CHECK_QP_MAX)
			add(c, false, "qp-budget", &i, 1,
			    "%s would open %zu queue pairs on %s: Apple's driver allows %d per device",
			    nm(c, i), e - a, dev(v[a]), CHECK_QP_MAX);
		a = e;
	}
	free(v);
}

static bool
is_neighbour(size_t n, size_t i, size_t j)
{
	return j == (i + 1) % n || i == (j + 1) % n;
}

/* Links: missing ones, cable counts that differ between the two ends. */
static void
rule_links(struct ctx *c, bool ring)
{
	size_t n = c->n, *miss, nmiss, *who;
	struct idxv mv = { 0 };
	unsigned char *seen = xcalloc(n, 1);
	struct jc_buf b = { 0 };

	/* only rows with n entries are walked, so this is linear in the file */
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n && c->row_ok[i]; j++) {
			size_t a, z;

			if (i == j || !c->row_ok[j])
				continue;
			a = cnt(c, i, j);
			z = cnt(c, j, i);
			if (a == 0 && (!ring || is_neighbour(n, i, j))) {
				idxv_push(&mv, i);
				idxv_push(&mv, j);
			}
			if (i > j)
				continue;
			if (a > 0 && z > 0) {
				size_t r[2] = { i, j };

				c->rep->cabled_pairs++;
				if (a != z)
					add(c, false, "asymmetric-cable-count", r, 2,
					    "%s lists %zu %s to %s but %s lists %zu to %s: entry k of "
					    "both lists must name the two ends of the same cable",
					    nm(c, i), a, a == 1 ? "cable" : "cables", nm(c, j),
					    nm(c, j), z, nm(c, i));
			} else if (ring && (a > 0 || z > 0) && !is_neighbour(n, i, j)) {
				size_t r[2] = { a ? i : j, a ? j : i };

				add(c, true, "one-sided-link", r, 2,
				    "%s lists a device for %s but %s lists none for %s "
				    "(they are not ring neighbours, so jaccl-ring does not use it)",
				    nm(c, r[0]), nm(c, r[1]), nm(c, r[1]), nm(c, r[0]));
			}
		}
	}
	miss = mv.v;
	nmiss = mv.n;
	if (nmiss == 0) {
		free(seen);
		return;
	}
	/* "A to B, C to D, E to F and K more", as mlx.launch says it */
	who = xcalloc(n, sizeof(*who));
	for (size_t k = 0, np = nmiss / 2, nwho = 0; k < np; k++) {
		if (k < 3)
			buf_printf(&b, "%s%s to %s", k == 0 ? "" : k + 1 == np ? " and " : ", ",
			    nm(c, miss[2 * k]), nm(c, miss[2 * k + 1]));
		else if (k == 3)
			buf_printf(&b, " and %zu more", np - 3);
		for (size_t e = 0; e < 2; e++) {
			if (!seen[miss[2 * k + e]]) {
				seen[miss[2 * k + e]] = 1;
				who[nwho++] = miss[2 * k + e];
			}
		}
		if (k + 1 == np)
			add(c, false, "missing-link", who, nwho,
			    "no RDMA device is listed for %s%s", b.data,
			    ring ? " (jaccl-ring needs both ring neighbours, in rank order)" :
			    " (jaccl needs a cable between every pair of hosts)");
	}
	buf_free(&b);
	free(who);
	free(miss);
	free(seen);
}

/* Bytes of s as Python's json.dumps writes it (ASCII only: \uXXXX escapes). */
static size_t
json_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 2;

	for (; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\' || *p == '\b' || *p == '\f' || *p == '\n' ||
		    *p == '\r' || *p == '\t')
			n += 2;
		else if (*p < 0x20 || *p == 0x7f)
			n += *p == 0x7f ? 1 : 6;
		else if (*p < 0x80)
			n++;
		else if (*p >= 0xf0)
			n += 12;	/* beyond U+FFFF: a surrogate pair */
		else if (*p >= 0xc0)
			n += 6;
	}
	return n;
}

/*
 * Python's shlex.quote(s): *len its bytes, *quotes the single quotes in it
 * (s as it is when every byte is one shlex leaves alone, else in single
 * quotes, each ' of s written '"'"').
 */
static void
shlex_len(const char *s, size_t n, size_t *len, size_t *quotes)
{
	size_t q = 0;
	bool safe = n > 0;

	for (size_t k = 0; k < n; k++) {
		if (!isalnum((unsigned char)s[k]) && strchr("_@%+=:,./-", s[k]) == NULL)
			safe = false;
		q += s[k] == '\'';
	}
	*len = safe ? n : 2 + n + 4 * q;
	*quotes = safe ? 0 : 2 + 3 * q;
}

/* Add text of n bytes, quoted by shlex_len() when quote is set, to a script's size. */
static void
script_add(size_t *len, size_t *quotes, const char *s, size_t n, bool quote)
{
	size_t l = n, q = 0;

	if (quote) {
		shlex_len(s, n, &l, &q);
	} else {
		for (size_t k = 0; k < n; k++)
			q += s[k] == '\'';
	}
	*len += l;
	*quotes += q;
}

#define SCRIPT_ADD(len, quotes, lit) script_add(len, quotes, lit, sizeof(lit) - 1, false)

/*
 * mlx.launch hands JACCL its device matrix on each rank's command line:
 * launch_jaccl() writes json.dumps([h.rdma for h in hosts]) into the script
 * that RemoteProcess runs as `ssh -tt -o LogLevel=QUIET HOST SCRIPT`
 * (/bin/bash -c on this side, the login shell -c on the far side), so every
 * byte of the matrix is in an exec's arguments on both ends. The line of
 * rank r is counted as make_launch_script() writes it with the shortest
 * working directory ("/"), the hostfile's envs, the coordinator (and the
 * ring's flag), and no command. Over macOS's ARG_MAX it cannot be started:
 * E2BIG, "Argument list too long", on every rank.
 */
static void
rule_command_line(struct ctx *c, bool ring)
{
	const char *ip0 = c->hf->hosts[0].nips > 0 ? c->hf->hosts[0].ips[0] : "";
	size_t m = 2, worst = 0, wr = 0, slen = 0, sq = 0;
	char *coord;

	for (size_t i = 0; i < c->n; i++) {
		const struct jc_hf_host *h = &c->hf->hosts[i];
		size_t row = 2;

		for (size_t j = 0; j < h->nrdma; j++) {
			const struct jc_hf_cell *x = &h->rdma[j];

			row += j ? 2 : 0;
			if (x->n == 0 && !x->is_list) {
				row += 4;
				continue;
			}
			row += x->is_list ? 2 + (x->n ? 2 * (x->n - 1) : 0) : 0;
			for (size_t k = 0; k < x->n; k++)
				row += json_len(x->names[k]);
		}
		m += (i ? 2 : 0) + row;
	}
	/* the script but the rank: its bytes and its single quotes */
	SCRIPT_ADD(&slen, &sq, "stty -echo; pidfile=$(mktemp); echo $$ > $pidfile; "
	    "printf \"%s\\n\" $pidfile; if [[ -d / ]]; then   cd /; fi; ");
	for (size_t k = 0; k < c->hf->nenvs; k++) {
		const char *e = c->hf->envs[k], *eq = strchr(e, '=');
		size_t kl = eq ? (size_t)(eq - e) : strlen(e);

		SCRIPT_ADD(&slen, &sq, "export ");
		script_add(&slen, &sq, e, kl, false);
		SCRIPT_ADD(&slen, &sq, "=");
		if (eq != NULL)
			script_add(&slen, &sq, eq + 1, strlen(eq + 1), true);
		SCRIPT_ADD(&slen, &sq, "; ");
	}
	coord = xasprintf("%s:%ld", ip0, c->rep->port);
	SCRIPT_ADD(&slen, &sq, "export MLX_JACCL_COORDINATOR=");
	script_add(&slen, &sq, coord, strlen(coord), true);
	SCRIPT_ADD(&slen, &sq, "; ");
	free(coord);
	if (ring)
		SCRIPT_ADD(&slen, &sq, "export MLX_JACCL_RING=1; ");
	SCRIPT_ADD(&slen, &sq, "fname=$(mktemp); echo ");
	slen += m + 2;		/* the matrix in single quotes (it holds none) */
	sq += 2;
	SCRIPT_ADD(&slen, &sq, " >$fname; export MLX_IBV_DEVICES=$fname; export MLX_RANK=");
	SCRIPT_ADD(&slen, &sq, "; cmd=(); exec \"${cmd[@]}\"");
	for (size_t r = 0; r < c->n; r++) {
		const char *ssh = c->hf->hosts[r].ssh ? c->hf->hosts[r].ssh : "";
		size_t hl, hq, len;

		shlex_len(ssh, strlen(ssh), &hl, &hq);
		len = sizeof("ssh -tt -o LogLevel=QUIET ") - 1 + hl + 1 +
		    2 + slen + (size_t)snprintf(NULL, 0, "%zu", r) + 4 * sq;
		if (len > worst) {
			worst = len;
			wr = r;
		}
	}
	c->rep->launch_line = worst;
	c->rep->launch_rank = wr;
	if (worst > CHECK_ARG_MAX)
		add(c, false, "command-too-long", &wr, 1,
		    "mlx.launch puts the device matrix (%zu bytes of JSON) on every rank's command "
		    "line: at least %zu bytes for rank %zu, over the %d bytes an exec takes on macOS "
		    "(ARG_MAX): no rank could start (\"Argument list too long\")", m, worst, wr,
		    CHECK_ARG_MAX);
}

static void
rule_rows(struct ctx *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct jc_hf_host *h = &c->hf->hosts[i];

		if (c->rdma_bad[i])
			continue;
		if (h->nrdma != c->n)
			add(c, false, "rdma-length", &i, 1,
			    "%s lists %zu RDMA %s, but the hostfile has %zu hosts: rdma needs one "
			    "entry per host, in rank order", nm(c, i), h->nrdma,
			    h->nrdma == 1 ? "entry" : "entries", c->n);
		if (i < h->nrdma && (h->rdma[i].n > 0 || h->rdma[i].is_list))
			add(c, false, "rdma-self-not-null", &i, 1,
			    "%s's own entry (rdma[%zu]) must be null", nm(c, i), i);
		rule_devices(c, i);
	}
}

static void
rule_mesh(struct ctx *c)
{
	size_t lo = 0, hi = 0, longest = 0, li = 0, lj = 0;

	if (c->n > CHECK_MESH_MAX)
		add(c, false, "mesh-too-large", NULL, 0,
		    "the JACCL mesh supports up to %d hosts, this hostfile has %zu: "
		    "use jaccl-ring", CHECK_MESH_MAX, c->n);
	for (size_t i = 0; i < c->n; i++) {
		for (size_t j = i + 1; j < c->n && c->row_ok[i]; j++) {
			size_t a, z, m;

			if (!c->row_ok[j])
				continue;
			a = cnt(c, i, j);
			z = cnt(c, j, i);
			if (a > longest || z > longest) {
				longest = a > z ? a : z;
				li = a >= z ? i : j;
				lj = a >= z ? j : i;
			}
			if (a == 0 || z == 0)
				continue;
			m = a < z ? a : z;
			if (lo == 0 || m < lo)
				lo = m;
			if (m > hi)
				hi = m;
		}
	}
	if (longest > 1) {
		size_t r[2] = { li, lj };

		add(c, true, "mesh-first-cable-only", r, 2,
		    "the JACCL mesh uses only the first device of each entry (%s lists %zu for "
		    "%s): the other cables stay idle; jaccl-ring uses them all",
		    nm(c, li), longest, nm(c, lj));
	}
	if (lo != hi)
		add(c, true, "uneven-cable-count", NULL, 0,
		    "pairs have different cable counts (from %zu to %zu): JACCL uses the smallest "
		    "count for every pair", lo, hi);
	for (size_t i = 0; i < c->n; i++)
		if (c->row_ok[i])
			rule_qp(c, i, false);
}

static void
rule_ring(struct ctx *c)
{
	size_t n = c->n, k = 0;
	struct idxv bad = { 0 };
	struct jc_buf b = { 0 };

	/*
	 * JACCL takes the width from rank 0's right neighbour cell; to say
	 * which cells are odd, take the most common width instead.
	 */
	{
		size_t *w = xcalloc(2 * n, sizeof(*w)), m = 0;

		for (size_t r = 0; r < n; r++) {
			size_t l = cnt(c, r, (r + n - 1) % n), rr = cnt(c, r, (r + 1) % n);

			if (c->row_ok[r] && l > 0)
				w[m++] = l;
			if (c->row_ok[r] && rr > 0 && n > 2)
				w[m++] = rr;
		}
		k = most_common(w, m);
		free(w);
	}
	for (size_t r = 0; r < n; r++) {
		size_t side[2] = { (r + n - 1) % n, (r + 1) % n };

		if (!c->row_ok[r])
			continue;
		for (size_t s = 0; s < 2; s++) {
			size_t w = cnt(c, r, side[s]), pr[2] = { r, side[s] };

			if (n == 2 && s == 1)
				break;
			if (w > CHECK_RING_MAX)
				add(c, false, "ring-width-range", pr, 2,
				    "%s lists %zu cables to %s: JACCL's ring uses at most %d per "
				    "direction", nm(c, r), w, nm(c, side[s]), CHECK_RING_MAX);
			if (w == 0 || w == k)
				continue;
			if (bad.n < 6)
				buf_printf(&b, "%s%s lists %zu to %s", bad.n ? ", " : "", nm(c, r), w,
				    nm(c, side[s]));
			idxv_push(&bad, r);
			idxv_push(&bad, side[s]);
		}
	}
	if (bad.n > 0) {
		if (bad.n > 6)
			buf_printf(&b, " and %zu more", (bad.n - 6) / 2);
		add(c, false, "ring-width-mismatch", bad.v, bad.n,
		    "a JACCL ring needs the same number of cables to every neighbour: "
		    "most list %zu, but %s", k, b.data);
	}
	buf_free(&b);
	free(bad.v);
	for (size_t i = 0; i < n; i++)
		if (c->row_ok[i])
			rule_qp(c, i, true);
}

/* Which IPs of which host the ring backend cannot use (every rank's, all of them). */
static void
rule_ring_addresses(struct ctx *c)
{
	size_t n = c->n, want = 0;
	bool even = true;
	struct idxv odd = { 0 };
	struct jc_buf b = { 0 };

	for (size_t i = 0; i < n; i++) {
		const struct jc_hf_host *h = &c->hf->hosts[i];

		for (size_t k = 0; k < h->nips; k++) {
			const char *ip = h->ips[k];

			/* ring.cpp opens socket(AF_INET, ...) to bind and to connect */
			if (strchr(ip, ':') != NULL && hostfile_ip_ok(ip))
				add(c, false, "ring-not-ipv4", &i, 1,
				    "%s lists the IPv6 address %s: the ring backend opens IPv4 "
				    "sockets only, to listen on a host's IPs and to connect to them",
				    nm(c, i), ip);
			else if (!jc_ipv4_ok(ip) && hostfile_ip_ok(ip))
				add(c, true, "ring-hostname", &i, 1,
				    "%s lists the name %s: every rank must resolve it to an IPv4 "
				    "address of %s", nm(c, i), ip, nm(c, i));
		}
		if (h->nips > 0 && h->nips != c->hf->hosts[0].nips)
			even = false;
	}
	if (even || n < 2)
		return;
	/*
	 * Rank r accepts one connection per IP of its own from its left and
	 * makes one per IP of rank r+1 to its right, and needs as many of
	 * each: so every host lists as many IPs. The odd ones are those that
	 * differ from the most common count.
	 */
	{
		size_t *w = xcalloc(n, sizeof(*w)), m = 0;

		for (size_t i = 0; i < n; i++)
			if (c->hf->hosts[i].nips > 0)
				w[m++] = c->hf->hosts[i].nips;
		want = most_common(w, m);
		free(w);
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = c->hf->hosts[i].nips;

		if (k == 0 || k == want)
			continue;
		if (odd.n < 3)
			buf_printf(&b, "%s%s lists %zu", odd.n ? ", " : "", nm(c, i), k);
		idxv_push(&odd, i);
	}
	if (odd.n > 3)
		buf_printf(&b, " and %zu more", odd.n - 3);
	add(c, false, "ring-ip-count", odd.v, odd.n,
	    "the ring backend pairs each rank's connections from its left neighbour (one per IP "
	    "of its own) with those to its right neighbour (one per IP of that host), so every "
	    "host needs the same number of IPs: most list %zu, but %s", want, b.data);
	buf_free(&b);
	free(odd.v);
}

static bool
is_backend(const char *s)
{
	return strcmp(s, "ring") == 0 || strcmp(s, "jaccl") == 0 ||
	    strcmp(s, "jaccl-ring") == 0;
}

/*
 * The backend that applies: the option's, else the file's (NULL when it is
 * not one that is checked), else the one the rdma matrix describes.
 */
static const char *
pick_backend(struct ctx *c, const char *backend)
{
	if (backend != NULL) {
		c->rep->backend_source = "option";
		return backend;
	}
	if (*c->hf->backend != '\0') {
		c->rep->backend_source = "hostfile";
		return is_backend(c->hf->backend) ? c->hf->backend : NULL;
	}
	if (c->n == 0)
		return NULL;
	c->rep->backend_source = "cabling";
	return choose_backend(c);
}

/*
 * Why a problem the reader found does not matter to backend, or NULL when
 * it does. mlx.launch's launch_ring reads only "ssh" and "ips"; its
 * launch_jaccl reads only rank 0's first IP (the coordinator), and JACCL
 * the rdma matrix.
 */
static const char *
unused_by(const char *backend, const struct hostfile_diag *g)
{
	if (backend == NULL || g->warning)
		return NULL;
	if (strcmp(backend, "ring") == 0 && g->part == HF_PART_RDMA)
		return "the ring backend does not read rdma";
	if (strcmp(backend, "ring") != 0 && g->part == HF_PART_IPS &&
	    (g->host > 0 || g->index > 0))
		return "JACCL uses only rank 0's first IP";
	return NULL;
}

static void
rules(struct ctx *c, const char *option, const char *backend)
{
	const struct jc_hostfile *hf = c->hf;
	bool any_rdma = false;

	if (option == NULL && *hf->backend != '\0' && backend == NULL) {
		char *d = hostfile_printable(hf->backend, 32);

		add(c, false, "unknown-backend", NULL, 0,
		    "backend '%s' is not one that jaccl-config checks (ring, jaccl or "
		    "jaccl-ring)", d);
		free(d);
	} else if (backend != NULL && strcmp(c->rep->backend_source, "cabling") == 0 &&
	    strcmp(backend, "ring") != 0 && !c->backend_bad) {
		add(c, true, "no-backend", NULL, 0,
		    "the hostfile names no backend: its rdma matrix is for %s, but "
		    "mlx.launch uses ring unless it is given --backend %s",
		    backend, backend);
	}
	c->rep->backend = xstrdup(backend);

	if (c->n == 0)
		return;
	rule_duplicate_hosts(c, backend);
	if (c->hf->hosts[0].nips > 0 && hostfile_ip_ok(c->hf->hosts[0].ips[0]))
		c->rep->coordinator = xasprintf("%s:%ld", c->hf->hosts[0].ips[0], c->rep->port);
	if (backend == NULL)
		return;
	for (size_t i = 0; i < c->n; i++)
		for (size_t j = 0; j < hf->hosts[i].nrdma; j++)
			any_rdma = any_rdma || hf->hosts[i].rdma[j].n > 0;
	if (strcmp(backend, "ring") == 0) {
		rule_ring_ips(c);
		rule_ring_addresses(c);
		if (any_rdma)
			add(c, true, "rdma-unused", NULL, 0,
			    "the ring backend talks TCP over the IPs: the rdma entries are not used");
		return;
	}
	if (c->n == 1) {
		size_t r0 = 0;

		add(c, false, "too-few-hosts", &r0, 1, "%s needs at least 2 hosts", backend);
	}
	if (!c->ips0_bad)
		rule_coordinator(c);
	rule_rows(c);
	rule_command_line(c, strcmp(backend, "jaccl-ring") == 0);
	rule_links(c, strcmp(backend, "jaccl-ring") == 0);
	if (strcmp(backend, "jaccl") == 0)
		rule_mesh(c);
	else if (c->n >= 2)
		rule_ring(c);
}

struct check_report *
check_hostfile(const struct jc_hostfile *hf, const struct hostfile_diags *diags,
    const char *backend, long port)
{
	struct check_report *rep = xcalloc(1, sizeof(*rep));
	struct ctx c = { .hf = hf, .rep = rep };
	const char *eff = NULL;
	bool top_bad = false;

	rep->port = port;
	if (hf != NULL) {
		c.n = hf->nhosts;
		rep->nhosts = hf->nhosts;
		rep->format = hf->legacy_list ? "list" : "object";
		rep->mesh_links = (unsigned long)c.n * (c.n ? c.n - 1 : 0) / 2;
	}
	rep->names = xcalloc(c.n + 1, sizeof(*rep->names));
	c.rdma_bad = xcalloc(c.n + 1, sizeof(*c.rdma_bad));
	c.row_ok = xcalloc(c.n + 1, sizeof(*c.row_ok));
	c.mark = xcalloc(c.n + 1, 1);
	for (size_t i = 0; i < c.n; i++) {
		const char *s = hf->hosts[i].ssh;

		rep->names[i] = hostfile_ssh_ok(s) ? xstrdup(s) :
		    xasprintf("%s[%zu]", hf->legacy_list ? "" : "hosts", i);
	}
	for (size_t k = 0; diags != NULL && k < diags->n; k++) {
		const struct hostfile_diag *g = &diags->v[k];
		size_t r = g->host >= 0 ? (size_t)g->host : 0;
		bool about = g->host >= 0 && r < c.n;

		if (g->warning)
			continue;
		if (about && (g->part == HF_PART_RDMA || g->part == HF_PART_HOST) &&
		    strcmp(g->code, "bad-type") == 0)
			c.rdma_bad[r] = true;
		if (g->part == HF_PART_IPS && about && r == 0 && g->index <= 0)
			c.ips0_bad = true;
		if (g->part == HF_PART_BACKEND)
			c.backend_bad = true;
		if (g->part == HF_PART_TOP || g->part == HF_PART_HOSTS || g->part == HF_PART_FILE)
			top_bad = true;
	}
	for (size_t i = 0; i < c.n; i++)
		c.row_ok[i] = !c.rdma_bad[i] && hf->hosts[i].nrdma == c.n;
	if (hf != NULL)
		eff = pick_backend(&c, backend);
	for (size_t k = 0; diags != NULL && k < diags->n; k++) {
		const struct hostfile_diag *g = &diags->v[k];
		size_t r = g->host >= 0 ? (size_t)g->host : 0;
		bool about = g->host >= 0 && r < c.n;
		const char *why = unused_by(eff, g);
		bool named = about && hostfile_ssh_ok(hf->hosts[r].ssh);

		/* name the host when its ssh name is usable: "mac2: hosts[1].ips[0]: ..." */
		add(&c, g->warning || why != NULL, g->code, &r, about ? 1 : 0, "%s%s%s%s%s%s",
		    named ? rep->names[r] : "", named ? ": " : "", g->msg,
		    why ? " (" : "", why ? why : "", why ? ")" : "");
	}
	if (hf == NULL) {
		rep->backend = xstrdup(backend);
		rep->backend_source = backend ? "option" : NULL;
	} else {
		if (c.n == 0 && !top_bad)
			add(&c, false, "no-hosts", NULL, 0, "the hostfile lists no hosts");
		rules(&c, backend, eff);
	}
	tally_finish(&c);
	free(c.rdma_bad);
	free(c.row_ok);
	free(c.mark);
	rep->valid = rep->nproblems == 0;
	return rep;
}

/* A JSON string of s; never NULL, even when s is not valid UTF-8. */
static json_t *
jstr(const char *s)
{
	json_t *j = json_string(s);
	char *p;

	if (j != NULL)
		return j;
	p = hostfile_printable(s, 0);
	j = json_string(p);
	free(p);
	return j ? j : json_string("");
}

static json_t *
items_json(const struct check_report *r, const struct check_item *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object(), *hosts = json_array(), *ranks = json_array();

		for (size_t k = 0; k < v[i].nranks; k++) {
			json_array_append_new(hosts, jstr(r->names[v[i].ranks[k]]));
			json_array_append_new(ranks, json_integer((json_int_t)v[i].ranks[k]));
		}
		json_object_set_new(o, "code", json_string(v[i].code));
		json_object_set_new(o, "message", jstr(v[i].msg));
		json_object_set_new(o, "hosts", hosts);
		json_object_set_new(o, "ranks", ranks);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *
str_or_null(const char *s)
{
	return s ? jstr(s) : json_null();
}

json_t *
check_report_json(const struct check_report *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "valid", json_boolean(r->valid));
	json_object_set_new(o, "backend", str_or_null(r->backend));
	json_object_set_new(o, "backend_source", str_or_null(r->backend_source));
	json_object_set_new(o, "coordinator", str_or_null(r->coordinator));
	json_object_set_new(o, "port", json_integer(r->port));
	json_object_set_new(o, "format", str_or_null(r->format));
	json_object_set_new(o, "hosts", json_integer((json_int_t)r->nhosts));
	json_object_set_new(o, "mesh_links", json_integer((json_int_t)r->mesh_links));
	json_object_set_new(o, "cabled_pairs", json_integer((json_int_t)r->cabled_pairs));
	json_object_set_new(o, "launch_line", r->launch_line == 0 ? json_null() :
	    json_pack("{s:I, s:I}", "bytes", (json_int_t)r->launch_line, "rank",
	    (json_int_t)r->launch_rank));
	json_object_set_new(o, "problems", items_json(r, r->problems, r->nproblems));
	json_object_set_new(o, "warnings", items_json(r, r->warnings, r->nwarnings));
	return o;
}

static void
items_free(struct check_item *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].msg);
		free(v[i].ranks);
	}
	free(v);
}

void
check_report_free(struct check_report *r)
{
	if (r == NULL)
		return;
	free(r->backend);
	free(r->coordinator);
	strv_free_array(r->names, r->nhosts);
	items_free(r->problems, r->nproblems);
	items_free(r->warnings, r->nwarnings);
	free(r);
}
