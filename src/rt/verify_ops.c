/* SPDX-License-Identifier: MIT */
/*
 * The checks of what JACCL's users call besides the all-reduce: the
 * all-gather, and send/recv between peers (mesh: every rank to every other
 * at a fixed distance, all at once; ring: to the right neighbour and to
 * the left one). Every 8-byte word moved says who sent it, to whom, at
 * which position and in which call (rt_verify_word()), and the output is
 * filled with ones first: so a part of a block that is never sent (MLX
 * #4443's lower half sent twice), a block in another rank's place and the
 * data of an earlier call are all seen, and the first wrong word is named
 * with what it holds instead. Each size is checked once before and once
 * after its timed calls (each with new data), and timed as nccl-tests
 * does: all-gather busbw = algbw * (n - 1) / n of the whole output,
 * send/recv busbw = algbw of what one rank sends.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify_rank.h"
#include "util.h"

#define OPS_BUDGET 0.1		/* seconds of timed calls per size */
#define OPS_MAX_ITERS 20
#define OPS_MAX_ROWS 4
#define OPS_FILL 0xff		/* the output before a checked call */
#define ERRLEN 240

struct crow {			/* one rank's row of a checked operation */
	double usec;		/* per call */
	int64_t wrong;		/* wrong words in the checked calls */
	int64_t first;		/* the first wrong word, or -1 */
	uint64_t got, want;	/* ... what it held and what it should have */
	int32_t peer;		/* ... whose block (all-gather), the sender (send/recv) */
	int32_t status;		/* 0 ok, 1 not run, <0 failed */
};

struct cphase {			/* one rank's result of the phase */
	int32_t status;
	int32_t pad;
	char err[ERRLEN];
};

struct ops {
	struct rt_group *g;
	const struct rt_verify_opts *o;
	bool gather;		/* all-gather, else send/recv */
	unsigned round;		/* checked calls so far (the same on every rank) */
	int shifts[RT_MESH_MAX_PEERS];	/* send/recv: to rank + shift */
	size_t nshifts;
	struct jc_err err;
};

uint64_t
rt_verify_word(unsigned round, int from, int to, size_t i)
{
	return (uint64_t)(round % 127 + 1) << 56 | (uint64_t)(from & 0xfff) << 44 |
	    (uint64_t)((to + 1) & 0xfff) << 32 | (uint64_t)(i & 0xffffffffu);
}

size_t
rt_verify_ops_sizes(const struct rt_verify_opts *o, int n, size_t *sizes)
{
	static const size_t fixed[] = { 8, 8008, 65544 };
	size_t k = 0, big = o->ar_max / (size_t)n / 8 * 8;

	for (size_t i = 0; i < JC_ARRAY_LEN(fixed); i++)
		if (fixed[i] <= o->ar_max || i == 0)
			sizes[k++] = fixed[i];
	if (big > sizes[k - 1])
		sizes[k++] = big;
	return k;
}

static void
note(struct crow *row, int64_t k, uint64_t got, uint64_t want, int peer)
{
	if (row->wrong++ == 0) {
		row->first = k;
		row->got = got;
		row->want = want;
		row->peer = peer;
	}
}

/* One checked call of size bytes per block; *secs its duration. */
static int
checked(struct ops *p, size_t shift_i, uint64_t *src, uint64_t *dst, size_t words,
    struct crow *row, double *secs)
{
	struct rt_group *g = p->g;
	size_t n = (size_t)g->size, r = (size_t)g->rank;
	unsigned round = p->round++;
	double t0;
	int rc, to = -1, from = -1;

	if (!p->gather) {
		to = (int)((r + (size_t)p->shifts[shift_i]) % n);
		from = (int)((r + n - (size_t)p->shifts[shift_i]) % n);
	}
	for (size_t j = 0; j < words; j++)
		src[j] = rt_verify_word(round, (int)r, to, j);
	memset(dst, OPS_FILL, words * 8 * (p->gather ? n : 1));
	t0 = jc_now();
	if (p->gather)
		rc = rt_group_all_gather(g, src, words * 8, dst, &p->err);
	else
		rc = rt_group_sendrecv(g, src, words * 8, to, dst, words * 8, from, &p->err);
	*secs = jc_now() - t0;
	if (rc < 0)
		return rc;
	if (p->gather) {
		for (size_t k = 0; k < n * words; k++) {
			uint64_t want = rt_verify_word(round, (int)(k / words), -1, k % words);

			if (dst[k] != want)
				note(row, (int64_t)k, dst[k], want, (int)(k / words));
		}
	} else {
		for (size_t j = 0; j < words; j++) {
			uint64_t want = rt_verify_word(round, from, (int)r, j);

			if (dst[j] != want)
				note(row, (int64_t)j, dst[j], want, from);
		}
	}
	return 0;
}

/* The calls of one pass: every shift (send/recv) or the one all-gather. */
static size_t
calls(const struct ops *p)
{
	return p->gather ? 1 : p->nshifts;
}

/*
 * Every rank runs as many timed calls: about OPS_BUDGET seconds' worth at
 * the slowest rank's pace. tw < 0 where a rank failed; then none run.
 */
static int
agree(struct ops *p, double tw, size_t *iters, struct jc_err *err)
{
	double *all = xcalloc((size_t)p->g->size, sizeof(double)), slow = tw;
	int rc = rt_sc_all_gather(p->g->sc, &tw, sizeof(tw), all, err);

	*iters = 0;
	if (rc == 0) {
		for (int r = 0; r < p->g->size; r++) {
			if (all[r] < 0) {
				free(all);
				return -ECANCELED;
			}
			if (all[r] > slow)
				slow = all[r];
		}
		*iters = slow > 0 ? (size_t)(OPS_BUDGET / slow) : OPS_MAX_ITERS;
		*iters = *iters < 1 ? 1 : *iters > OPS_MAX_ITERS ? OPS_MAX_ITERS : *iters;
	}
	free(all);
	return rc;
}

/*
 * This rank's rows. A rank that fails goes on taking part in the side
 * channel's exchanges (one per row) without running anything, so that
 * every rank learns of it at the next row and the phase ends the same way
 * everywhere; only a failure of the side channel itself ends the run.
 */
static int
rows_run(struct ops *p, const size_t *sizes, size_t nrows, struct crow *rows,
    struct cphase *ph, struct jc_err *err)
{
	struct rt_group *g = p->g;
	int frc = 0;		/* this rank's failure, or -ECANCELED: another's */

	for (size_t i = 0; i < nrows; i++)
		rows[i] = (struct crow){ .first = -1, .status = 1 };
	for (size_t i = 0; i < nrows; i++) {
		size_t words = sizes[i] / 8, iters = 0;
		size_t out = words * (p->gather ? (size_t)g->size : 1);
		uint64_t *src = xmalloc(words * 8 + 8), *dst = xmalloc(out * 8 + 8);
		double tw = 0, t = 0, t0;
		int sc;

		for (size_t c = 0; c < calls(p) && frc == 0; c++) {
			frc = checked(p, c, src, dst, words, &rows[i], &t);
			tw += t;
		}
		if ((sc = agree(p, frc < 0 ? -1 : tw, &iters, err)) < 0 && sc != -ECANCELED) {
			free(src);
			free(dst);
			return sc;
		}
		if (sc == -ECANCELED && frc == 0) {
			frc = sc;
			snprintf(p->err.msg, sizeof(p->err.msg), "another rank failed");
		}
		t0 = jc_now();
		for (size_t it = 0; it < iters && frc == 0; it++)
			for (size_t c = 0; c < calls(p) && frc == 0; c++)
				frc = p->gather ?
				    rt_group_all_gather(g, src, words * 8, dst, &p->err) :
				    rt_group_sendrecv(g, src, words * 8,
				    (g->rank + p->shifts[c]) % g->size, dst, words * 8,
				    (g->rank + g->size - p->shifts[c]) % g->size, &p->err);
		t = jc_now() - t0;
		/* after the timed calls, new data again: a stale buffer shows */
		for (size_t c = 0; c < calls(p) && frc == 0; c++)
			frc = checked(p, c, src, dst, words, &rows[i], &tw);
		free(src);
		free(dst);
		if (frc < 0) {
			if (ph->status == 0) {
				rows[i].status = frc;
				ph->status = frc;
				snprintf(ph->err, sizeof(ph->err), "rank %d: %s of %zu bytes: "
				    "%.180s", g->rank, p->gather ? "all-gather" : "send/recv",
				    sizes[i], p->err.msg);
			}
			continue;
		}
		rows[i].usec = t / (double)(iters * calls(p)) * 1e6;
		rows[i].status = 0;
	}
	return 0;
}

/* What a wrong word holds, in words: whose, which element, which call. */
static void
describe(uint64_t got, uint64_t want, bool gather, char *buf, size_t len)
{
	unsigned rg = (unsigned)(got >> 56), rw = (unsigned)(want >> 56);
	int from = (int)(got >> 44 & 0xfff), to = (int)(got >> 32 & 0xfff) - 1;
	uint64_t i = got & 0xffffffffu;

	int fill = 0, same = 0;

	for (int b = 0; b < 8; b++) {
		unsigned gb = (unsigned)(got >> (8 * b) & 0xff);

		fill += gb == OPS_FILL;
		same += gb != OPS_FILL && gb == (unsigned)(want >> (8 * b) & 0xff);
	}
	if (got == UINT64_MAX) {
		snprintf(buf, len, "never written: still the fill");
	} else if (fill > 0 && fill + same == 8) {
		snprintf(buf, len, "partly never written: %d of its 8 bytes still the fill", fill);
	} else if (rg == 0 || rg > 127 || (gather ? to != -1 : to < 0)) {
		snprintf(buf, len, "not a value of this test");
	} else {
		int n = snprintf(buf, len, "rank %d's element %" PRIu64, from, i);

		if (!gather && n > 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, " for rank %d", to);
		if (rg != rw && n > 0 && (size_t)n < len)
			snprintf(buf + n, len - (size_t)n, " of an earlier call");
	}
}

static json_t *
hex(uint64_t v)
{
	return json_sprintf("0x%016" PRIx64, v);
}

/* The report's section from every rank's rows (allr) and phase (allp). */
static json_t *
section(struct ops *p, const size_t *sizes, size_t nrows, const struct crow *allr,
    const struct cphase *allp, bool run, json_t *fail, bool *ok)
{
	int n = p->g->size;
	const char *name = p->gather ? "all-gather" : "send/recv";
	json_t *sec = json_object(), *rows = json_array(), *errs = json_array(), *first = NULL;
	int64_t wrong = 0;
	double busbw_sum = 0;
	size_t counted = 0;
	bool good = run;

	for (int r = 0; r < n; r++)
		if (allp[r].status < 0) {
			good = false;
			json_array_append_new(errs, json_string(allp[r].err));
		}
	for (size_t i = 0; i < nrows; i++) {
		double usec = 0, total, algbw, busbw;
		const struct crow *fw = NULL;
		int64_t w = 0;
		int fr = -1;
		bool done = true;
		json_t *row;

		for (int r = 0; r < n; r++) {
			const struct crow *c = &allr[(size_t)r * nrows + i];

			done &= c->status == 0;
			if (c->usec > usec)
				usec = c->usec;
			w += c->wrong;
			if (c->first >= 0 && fw == NULL) {
				fw = c;
				fr = r;
			}
		}
		if (fw != NULL && first == NULL) {
			char what[160];

			describe(fw->got, fw->want, p->gather, what, sizeof(what));
			first = json_pack("{s:I,s:i,s:I,s:i,s:o,s:o,s:s}",
			    "size", (json_int_t)sizes[i], "rank", fr,
			    "element", (json_int_t)fw->first, p->gather ? "block" : "from", fw->peer,
			    "got", hex(fw->got), "want", hex(fw->want), "got_is", what);
		}
		wrong += w;
		if (!done)
			continue;
		total = (double)sizes[i] * (p->gather ? n : 1);
		algbw = total / (usec / 1e6) / 1e9;
		busbw = p->gather ? algbw * (n - 1) / n : algbw;
		row = json_pack("{s:I,s:I,s:I,s:s,s:f,s:f,s:f,s:I}",
		    "size", (json_int_t)total, "block", (json_int_t)sizes[i],
		    "count", (json_int_t)(total / 8), "type", "uint64", "time_us", usec,
		    "algbw", algbw, "busbw", busbw, "wrong", (json_int_t)w);
		if (fw != NULL)
			json_object_set_new(row, "first_wrong", json_pack("{s:i,s:I,s:i,s:o,s:o}",
			    "rank", fr, "element", (json_int_t)fw->first,
			    p->gather ? "block" : "from", fw->peer, "got", hex(fw->got),
			    "want", hex(fw->want)));
		json_array_append_new(rows, row);
		busbw_sum += busbw;
		counted++;
	}
	json_object_set_new(sec, "status", json_string(!run ? "skipped" : !good ? "failed" :
	    wrong ? "wrong" : "ok"));
	if (!p->gather) {
		json_t *sh = json_array();

		for (size_t k = 0; k < p->nshifts; k++)
			json_array_append_new(sh, json_integer(p->shifts[k]));
		json_object_set_new(sec, "shifts", sh);
	}
	json_object_set_new(sec, "rows", rows);
	json_object_set_new(sec, "wrong", json_integer(wrong));
	json_object_set_new(sec, "avg_busbw", json_real(counted ? busbw_sum / (double)counted : 0));
	json_object_set_new(sec, "errors", errs);
	if (run && !good) {
		*ok = false;
		json_array_append_new(fail, json_sprintf("%s: %s", name,
		    json_string_value(json_array_get(errs, 0))));
	}
	if (first != NULL) {
		json_int_t size = json_integer_value(json_object_get(first, "size"));
		json_int_t el = json_integer_value(json_object_get(first, "element"));
		json_int_t peer = json_integer_value(json_object_get(first,
		    p->gather ? "block" : "from"));
		int rank = (int)json_integer_value(json_object_get(first, "rank"));
		const char *got = json_string_value(json_object_get(first, "got"));
		const char *want = json_string_value(json_object_get(first, "want"));
		const char *is = json_string_value(json_object_get(first, "got_is"));

		*ok = false;
		if (p->gather)
			json_array_append_new(fail, json_sprintf("all-gather: %lld wrong values; "
			    "the first: element %lld of the %lld-byte all-gather on rank %d "
			    "(rank %lld's block, its element %lld) is %s, not %s (%s)",
			    (long long)wrong, (long long)el, (long long)size * n, rank,
			    (long long)peer, (long long)(el % (size / 8)), got, want, is));
		else
			json_array_append_new(fail, json_sprintf("send/recv: %lld wrong values; "
			    "the first: element %lld of the %lld bytes rank %d received from "
			    "rank %lld is %s, not %s (%s)", (long long)wrong, (long long)el,
			    (long long)size, rank, (long long)peer, got, want, is));
		json_object_set_new(sec, "first_wrong", first);
	}
	return sec;
}

int
rt_verify_ops(struct rt_group *g, const struct rt_verify_opts *o, bool gather, bool run,
    json_t *rep, json_t *fail, bool *ok, struct jc_err *err)
{
	struct ops p = { .g = g, .o = o, .gather = gather };
	size_t sizes[OPS_MAX_ROWS], nrows = rt_verify_ops_sizes(o, g->size, sizes);
	struct crow *rows = xcalloc(nrows, sizeof(*rows)), *allr;
	struct cphase ph = { 0 }, *allp;
	int rc = 0;

	/* the rounds of the two phases differ: data of the other is stale too */
	p.round = gather ? 0 : 64;
	if (g->kind == RT_MESH) {
		for (int s = 1; s < g->size; s++)
			p.shifts[p.nshifts++] = s;
	} else {
		p.shifts[p.nshifts++] = 1;
		if (g->size > 2)
			p.shifts[p.nshifts++] = g->size - 1;
	}
	allr = xcalloc((size_t)g->size * nrows, sizeof(*rows));
	allp = xcalloc((size_t)g->size, sizeof(*allp));
	if (run) {
		rc = rt_sc_barrier(g->sc, err);
		if (rc == 0) {
			rt_verify_event(o, g->rank, "%s start", gather ? "allgather" : "sendrecv");
			rc = rows_run(&p, sizes, nrows, rows, &ph, err);
		}
	} else {
		ph.status = 1;
		for (size_t i = 0; i < nrows; i++)
			rows[i] = (struct crow){ .first = -1, .status = 1 };
	}
	if (rc == 0)
		rc = rt_sc_all_gather(g->sc, rows, nrows * sizeof(*rows), allr, err);
	if (rc == 0)
		rc = rt_sc_all_gather(g->sc, &ph, sizeof(ph), allp, err);
	if (rc == 0)
		json_object_set_new(rep, gather ? "allgather" : "sendrecv",
		    section(&p, sizes, nrows, allr, allp, run, fail, ok));
	free(rows);
	free(allr);
	free(allp);
	return rc;
}
