/* SPDX-License-Identifier: MIT */
/*
 * verify --mlx: two launches of the program on every host (check, then
 * run), their lines collected per rank, and the report's "mlx" section
 * built from them. The Python program travels base64-encoded inside a
 * POSIX sh script given to /bin/sh as one argument, so it reaches a stock
 * Mac (zsh login shell, Apple's PATH, no root) as it is and needs no file
 * on the host; the script tries the named Python, or Homebrew's, then
 * /usr/local's, then the one on PATH, skipping macOS's /usr/bin/python3
 * stub when the Command Line Tools are missing (it would only ask to
 * install them), and keeps the first that imports mlx.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "jaccl_failure.h"
#include "verify_mlx.h"

#define MLX_TAIL 4		/* last lines of standard error kept per rank */
#define MLX_BUDGET 0.25		/* seconds of timed calls per operation */
#define MLX_MAX_ITERS 20

static const char *const mlx_ops[] = { "all_sum", "all_gather" };

/* ---- the command line ---- */

static void
base64(struct jc_buf *b, const char *s, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
		    (i + 2 < n ? p[i + 2] : 0);
		char q[4] = { tab[v >> 18 & 63], tab[v >> 12 & 63],
		    i + 1 < n ? tab[v >> 6 & 63] : '=', i + 2 < n ? tab[v & 63] : '=' };

		buf_append(b, q, 4);
	}
}

/*
 * The script: $1 is the mode, the rest its arguments. It prints a check
 * line of its own when no Python is found (exit 0 for check, 1 for run).
 */
static char *
finder_script(const struct verify_mlx_opts *m)
{
	struct jc_buf b = { 0 }, cands = { 0 };

	if (m->python != NULL) {
		jc_sh_quote(&cands, m->python);
	} else {
		buf_puts(&cands, VERIFY_MLX_PYTHONS);
	}
	buf_puts(&b, "prog='");
	base64(&b, verify_mlx_program, strlen(verify_mlx_program));
	buf_printf(&b, "'\npy= first= stub=\nfor p in %s; do\n"
	    "\tw=$(command -v \"$p\" 2>/dev/null) || continue\n"
	    "\tcase $w in /*) ;; *) continue ;; esac\n", cands.data);
	if (m->python == NULL)
		buf_puts(&b, "\tif [ \"$w\" = /usr/bin/python3 ] && [ \"$(uname)\" = Darwin ] &&"
		    " ! /usr/bin/xcode-select -p >/dev/null 2>&1; then stub=1; continue; fi\n");
	buf_printf(&b, "\t[ -n \"$first\" ] || first=$w\n"
	    "\tif \"$w\" -c 'import mlx.core' >/dev/null 2>&1; then py=$w; break; fi\n"
	    "done\n"
	    "[ -n \"$py\" ] || py=$first\n"
	    "if [ -z \"$py\" ]; then\n"
	    "\tif [ -n \"$stub\" ]; then why='only /usr/bin/python3, which needs the Command "
	    "Line Tools (xcode-select --install)'; else why='none of: %s'; fi\n"
	    "\techo \"" VERIFY_MLX_TAG " check python=none python_version=- mlx=none "
	    "why=no Python found: $why\"\n"
	    "\t[ \"$1\" = check ]; exit\n"
	    "fi\n"
	    "exec \"$py\" -c 'import base64,sys;exec(base64.b64decode(sys.argv.pop(1)))' "
	    "\"$prog\" \"$@\"\n", m->python ? m->python : VERIFY_MLX_PYTHONS);
	buf_free(&cands);
	return buf_steal(&b);
}

void
verify_mlx_argv(const struct verify_mlx_opts *m, const char *const *args, size_t nargs,
    struct jc_strv *argv)
{
	if (m->program != NULL) {
		strv_push(argv, m->program);
	} else {
		strv_push(argv, "/bin/sh");
		strv_push(argv, "-c");
		strv_push_owned(argv, finder_script(m));
		strv_push(argv, VERIFY_MLX_TAG);
	}
	for (size_t i = 0; i < nargs; i++)
		strv_push(argv, args[i]);
}

/* ---- sizes ---- */

static const json_t *
last_row(const json_t *sec, const char *type)
{
	const json_t *rows = json_object_get(sec, "rows"), *best = NULL, *r;
	size_t i;

	json_array_foreach(rows, i, r) {
		const char *t = json_string_value(json_object_get(r, "type"));

		if (type == NULL || (t != NULL && strcmp(t, type) == 0))
			best = r;
	}
	return best;
}

void
verify_mlx_sizes(const json_t *rep, struct verify_mlx_opts *m)
{
	const json_t *ar = last_row(json_object_get(rep, "allreduce"), "float");
	const json_t *ag = last_row(json_object_get(rep, "allgather"), NULL);
	double usec = 0;

	m->sum_bytes = ar ? (size_t)json_integer_value(json_object_get(ar, "size")) / 4 * 4 : 0;
	m->gather_bytes = ag ? (size_t)json_integer_value(json_object_get(ag, "block")) / 4 * 4 : 0;
	if (m->sum_bytes == 0)
		m->sum_bytes = 1u << 20;
	if (m->gather_bytes == 0)
		m->gather_bytes = 256u << 10;
	if (ar != NULL)
		usec = json_number_value(json_object_get(ar, "time_us"));
	if (ag != NULL && json_number_value(json_object_get(ag, "time_us")) > usec)
		usec = json_number_value(json_object_get(ag, "time_us"));
	m->iters = usec > 0 ? (long)(MLX_BUDGET * 1e6 / usec) : MLX_MAX_ITERS;
	m->iters = m->iters < 1 ? 1 : m->iters > MLX_MAX_ITERS ? MLX_MAX_ITERS : m->iters;
}

/* ---- the lines ---- */

int
verify_mlx_parse(const char *line, size_t len, json_t **out)
{
	size_t tl = strlen(VERIFY_MLX_TAG), i;
	json_t *o;

	*out = NULL;
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len < tl || memcmp(line, VERIFY_MLX_TAG, tl) != 0 || (len > tl && line[tl] != ' '))
		return -EINVAL;
	o = json_object();
	for (i = tl; i < len;) {
		size_t s, e, eq;
		char key[32];

		while (i < len && line[i] == ' ')
			i++;
		if (i >= len)
			break;
		s = i;
		while (i < len && line[i] != ' ')
			i++;
		e = i;
		for (eq = s; eq < e && line[eq] != '='; eq++)
			;
		if (eq == e) {
			if (e - s < sizeof(key) && json_object_get(o, "kind") == NULL)
				json_object_set_new(o, "kind", json_stringn(line + s, e - s));
			continue;
		}
		if (eq - s == 0 || eq - s >= sizeof(key))
			continue;
		memcpy(key, line + s, eq - s);
		key[eq - s] = '\0';
		if (strcmp(key, "why") == 0) {
			/* the reason is the rest of the line */
			json_object_set_new(o, "why", json_stringn(line + eq + 1, len - eq - 1));
			break;
		}
		if (strcmp(key, "kind") != 0)
			json_object_set_new(o, key, json_stringn(line + eq + 1, e - eq - 1));
	}
	*out = o;
	return 0;
}

/* A number of a parsed line; def when missing or not a number. */
static double
fnum(const json_t *o, const char *k, double def)
{
	const char *s = json_string_value(json_object_get(o, k));
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return def;
	v = strtod(s, &end);
	return *end == '\0' ? v : def;
}

static const char *
fstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "?";
}

/* ---- the launches ---- */

struct mrank {
	json_t *check;		/* its check line */
	json_t *hello;		/* "rank=R size=N" */
	json_t *op[2];		/* per mlx_ops */
	bool done;
	char *tail[MLX_TAIL];
	size_t ntail;
	const struct jaccl_failure *jf;	/* JACCL's failure its output named */
	bool crash_mark;		/* its output named tbt_post_recv */
};

struct mrun {
	const struct verify_opts *o;
	struct launch *l;
	size_t n;
	struct mrank *r;
	pthread_mutex_t mu;
};

static void
keep(struct mrank *r, const char *data, size_t len)
{
	while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
		len--;
	if (len == 0)
		return;
	if (r->ntail == MLX_TAIL) {
		free(r->tail[0]);
		memmove(r->tail, r->tail + 1, (MLX_TAIL - 1) * sizeof(*r->tail));
		r->ntail--;
	}
	r->tail[r->ntail++] = xstrndup(data, len);
}

static void
line_cb(void *arg, size_t rank, int fd, const char *data, size_t len)
{
	struct mrun *M = arg;
	struct mrank *r = &M->r[rank];
	json_t *o = NULL;
	bool ours = false;

	pthread_mutex_lock(&M->mu);
	r->jf = jaccl_failure_better(r->jf, jaccl_failure_line(data, len, &r->crash_mark));
	if (fd == 1 && verify_mlx_parse(data, len, &o) == 0) {
		ours = true;
		const char *kind = json_string_value(json_object_get(o, "kind"));
		const char *op = json_string_value(json_object_get(o, "op"));

		if (kind != NULL && strcmp(kind, "check") == 0 && r->check == NULL) {
			r->check = o;
			o = NULL;
		} else if (kind != NULL && strcmp(kind, "done") == 0) {
			r->done = true;
		} else if (json_object_get(o, "rank") != NULL && r->hello == NULL) {
			r->hello = o;
			o = NULL;
		} else if (op != NULL) {
			for (size_t i = 0; i < JC_ARRAY_LEN(mlx_ops); i++)
				if (strcmp(op, mlx_ops[i]) == 0 && r->op[i] == NULL) {
					r->op[i] = o;
					o = NULL;
				}
		}
		json_decref(o);
	} else if (fd == 2) {
		keep(r, data, len);
	}
	pthread_mutex_unlock(&M->mu);
	if (M->o->line != NULL && !ours)
		M->o->line(M->o->arg, rank, launch_host(M->l, rank), fd, data, len);
}

static void
mrun_clear(struct mrun *M)
{
	for (size_t k = 0; M->r != NULL && k < M->n; k++) {
		struct mrank *r = &M->r[k];

		json_decref(r->check);
		json_decref(r->hello);
		for (size_t i = 0; i < JC_ARRAY_LEN(mlx_ops); i++)
			json_decref(r->op[i]);
		for (size_t i = 0; i < r->ntail; i++)
			free(r->tail[i]);
	}
	free(M->r);
	launch_free(M->l);
	M->r = NULL;
	M->l = NULL;
}

/* Launch the program's mode on every host; the lines land in M->r. */
static int
launch_mode(struct mrun *M, const struct jc_hostfile *hf, const struct verify_mlx_opts *m,
    const char *const *args, size_t nargs, int *launch_rc, struct jc_err *err)
{
	struct launch_opts lo;
	struct jc_strv argv = { 0 }, warn = { 0 };
	int rc;

	verify_mlx_argv(m, args, nargs, &argv);
	memset(&lo, 0, sizeof(lo));
	lo.tr = M->o->tr;
	lo.env.backend = hf->backend && strcmp(hf->backend, "jaccl-ring") == 0 ?
	    "jaccl-ring" : "jaccl";
	lo.env.envs = M->o->envs;
	lo.env.nenvs = M->o->nenvs;
	lo.env.starting_port = M->o->starting_port > 0 ? M->o->starting_port : 32323;
	lo.env.connections_per_ip = 1;
	lo.argv = argv.v;
	lo.argc = argv.n;
	lo.timeout = verify_overall_bound(M->o->timeout, 0);
	lo.interrupted = M->o->interrupted;
	lo.line = line_cb;
	lo.arg = M;
	M->n = hf->nhosts;
	M->r = xcalloc(M->n, sizeof(*M->r));
	rc = launch_prepare(hf, &lo, &M->l, &warn, err);
	strv_free(&warn);
	if (rc == 0)
		*launch_rc = launch_run(M->l, err);
	strv_free(&argv);
	return rc;
}

static char *
host_of(const char *ssh)
{
	const char *at = strrchr(ssh, '@');

	return xstrdup(at ? at + 1 : ssh);
}

/* "rank R (host) exited with code C: its last line of standard error" */
static char *
rank_failure(struct mrun *M, size_t k)
{
	const struct launch_result *res = launch_result(M->l, k);
	char *txt = launch_result_text(res), *h = host_of(launch_host(M->l, k)), *s;
	struct mrank *r = &M->r[k];

	const struct jaccl_failure *f = r->jf;
	char *known = NULL;

	if (res->state == LAUNCH_KILLED && jaccl_failure_signal(res->signal, r->crash_mark))
		f = jaccl_failure_signal(res->signal, r->crash_mark);
	if (f != NULL)
		known = xasprintf(" (JACCL: %s: %s; fix: %s)", f->what, f->cause, f->fix);
	s = xasprintf("rank %zu (%s) %s%s%s%s", k, h, txt, r->ntail ? ": " : "",
	    r->ntail ? r->tail[r->ntail - 1] : "", known ? known : "");
	free(known);
	free(txt);
	free(h);
	return s;
}

static bool
rank_failed(const struct launch_result *res)
{
	return res->state != LAUNCH_PENDING && res->state != LAUNCH_STOPPED &&
	    !(res->state == LAUNCH_EXITED && res->status == 0);
}

/* The hosts of the check; false when one has no mlx or did not say. */
static bool
check_hosts(struct mrun *M, json_t *sec, json_t *fail)
{
	json_t *hosts = json_array();
	bool all = true;

	for (size_t k = 0; k < M->n; k++) {
		const json_t *c = M->r[k].check;
		char *h = host_of(launch_host(M->l, k));
		json_t *e = json_pack("{s:I,s:s}", "rank", (json_int_t)k, "host", h);

		if (c != NULL) {
			const char *mlx = fstr(c, "mlx");

			json_object_set_new(e, "python", json_string(fstr(c, "python")));
			json_object_set_new(e, "python_version", json_string(fstr(c, "python_version")));
			json_object_set_new(e, "mlx", json_string(mlx));
			if (json_object_get(c, "why"))
				json_object_set_new(e, "why", json_string(fstr(c, "why")));
			if (strcmp(mlx, "none") == 0) {
				all = false;
				if (strcmp(fstr(c, "python"), "none") == 0)
					json_array_append_new(fail, json_sprintf("mlx: %s has no "
					    "Python to run MLX (%s)", h, fstr(c, "why")));
				else
					json_array_append_new(fail, json_sprintf("mlx: mlx is not "
					    "installed for %s's Python %s (%s): %s", h,
					    fstr(c, "python_version"), fstr(c, "python"), fstr(c, "why")));
			}
		} else {
			char *why = rank_failure(M, k);

			all = false;
			json_object_set_new(e, "error", json_string(why));
			json_array_append_new(fail, json_sprintf("mlx: the check of %s said "
			    "nothing: %s", h, why));
			free(why);
		}
		json_array_append_new(hosts, e);
		free(h);
	}
	json_object_set_new(sec, "hosts", hosts);
	return all;
}

/* What a wrong all_gather word holds: (rank + 1) << 24 | element. */
static void
gather_word(double got, char *buf, size_t len)
{
	long long v = (long long)got;

	if (v == 0)
		snprintf(buf, len, "never written: 0");
	else if (v > 0 && (v >> 24) >= 1 && (double)v == got)
		snprintf(buf, len, "rank %lld's element %lld", (v >> 24) - 1, v & 0xffffff);
	else
		snprintf(buf, len, "not a value of this test");
}

/* One operation over every rank: its row of the section, failures named. */
static json_t *
op_result(struct mrun *M, size_t i, const struct verify_mlx_opts *m, const json_t *rep,
    json_t *fail)
{
	bool gather = i == 1;
	double n = (double)M->n, usec = 0, algbw, busbw, size;
	size_t bytes = gather ? m->gather_bytes : m->sum_bytes, count = bytes / 4;
	long long wrong = 0;
	json_t *o = json_object(), *bad = json_array(), *first = NULL, *per = json_array();
	const json_t *row;

	for (size_t k = 0; k < M->n; k++) {
		const json_t *r = M->r[k].op[i];
		double w = fnum(r, "wrong", -1), f = fnum(r, "first", -1);
		json_t *pr;

		if (r == NULL)
			continue;
		pr = json_pack("{s:I,s:f,s:I,s:I}", "rank", (json_int_t)k, "time_us",
		    fnum(r, "time_us", 0), "wrong", (json_int_t)w, "first", (json_int_t)f);
		if (f >= 0) {
			json_object_set_new(pr, "got", json_real(fnum(r, "got", 0)));
			json_object_set_new(pr, "want", json_real(fnum(r, "want", 0)));
		}
		json_array_append_new(per, pr);
		if (fnum(r, "time_us", 0) > usec)
			usec = fnum(r, "time_us", 0);
		if (w > 0) {
			wrong += (long long)w;
			json_array_append_new(bad, json_integer((json_int_t)k));
		}
		if (w > 0 && first == NULL && f >= 0) {
			first = json_pack("{s:I,s:I,s:f,s:f}", "rank", (json_int_t)k,
			    "element", (json_int_t)f, "got", fnum(r, "got", 0), "want",
			    fnum(r, "want", 0));
			if (gather) {
				char what[96];

				gather_word(fnum(r, "got", 0), what, sizeof(what));
				json_object_set_new(first, "block", json_integer((json_int_t)f /
				    (json_int_t)count));
				json_object_set_new(first, "got_is", json_string(what));
			}
		}
	}
	size = gather ? (double)bytes * n : (double)bytes;
	algbw = usec > 0 ? size / (usec / 1e6) / 1e9 : 0;
	busbw = gather ? algbw * (n - 1) / n : algbw * 2 * (n - 1) / n;
	json_object_set_new(o, "op", json_string(mlx_ops[i]));
	json_object_set_new(o, "size", json_integer((json_int_t)size));
	if (gather)
		json_object_set_new(o, "block", json_integer((json_int_t)bytes));
	json_object_set_new(o, "count", json_integer((json_int_t)(size / 4)));
	json_object_set_new(o, "type", json_string(gather ? "int32" : "float32"));
	json_object_set_new(o, "iters", json_integer(m->iters));
	json_object_set_new(o, "time_us", json_real(usec));
	json_object_set_new(o, "algbw", json_real(algbw));
	json_object_set_new(o, "busbw", json_real(busbw));
	json_object_set_new(o, "wrong", json_integer(wrong));
	json_object_set_new(o, "ranks_wrong", bad);
	json_object_set_new(o, "ranks", per);
	/* the runtime's figure at the same size, when it measured it */
	row = gather ? last_row(json_object_get(rep, "allgather"), NULL) :
	    last_row(json_object_get(rep, "allreduce"), "float");
	if (row != NULL && (size_t)json_integer_value(json_object_get(row,
	    gather ? "block" : "size")) / 4 * 4 == bytes)
		json_object_set_new(o, "runtime_busbw",
		    json_real(json_number_value(json_object_get(row, "busbw"))));
	if (first != NULL) {
		long long el = (long long)json_integer_value(json_object_get(first, "element"));
		long long rk = (long long)json_integer_value(json_object_get(first, "rank"));

		if (gather)
			json_array_append_new(fail, json_sprintf("mlx: all_gather: %lld wrong "
			    "values on %zu of %zu ranks; the first: element %lld of the "
			    "%.0f-byte all_gather on rank %lld (rank %lld's block, its element "
			    "%lld) is %.17g, not %.17g (%s)", wrong, json_array_size(bad), M->n,
			    el, size, rk, el / (long long)count, el % (long long)count,
			    json_real_value(json_object_get(first, "got")),
			    json_real_value(json_object_get(first, "want")),
			    json_string_value(json_object_get(first, "got_is"))));
		else
			json_array_append_new(fail, json_sprintf("mlx: all_sum: %lld wrong "
			    "values on %zu of %zu ranks; the first: element %lld of the "
			    "%.0f-byte all_sum on rank %lld is %.17g, not %.17g", wrong,
			    json_array_size(bad), M->n, el, size, rk,
			    json_real_value(json_object_get(first, "got")),
			    json_real_value(json_object_get(first, "want"))));
		json_object_set_new(o, "first_wrong", first);
	} else if (wrong > 0) {
		json_array_append_new(fail, json_sprintf("mlx: %s: %lld wrong values",
		    mlx_ops[i], wrong));
	}
	return o;
}

/* Why the runtime's report says MLX's run would not tell anything, or NULL. */
static const char *
not_now(const json_t *rep)
{
	const json_t *l;
	size_t i;

	if (!json_is_array(json_object_get(rep, "links")))
		return "the runtime's verification did not run";
	json_array_foreach(json_object_get(rep, "links"), i, l) {
		const char *st = json_string_value(json_object_get(l, "status"));

		if (st != NULL && strcmp(st, "down") == 0)
			return "a link is down";
	}
	return NULL;
}

int
verify_mlx_run(const struct jc_hostfile *hf, const struct verify_opts *o,
    const struct verify_mlx_opts *m, json_t *rep, struct jc_err *err)
{
	struct mrun M = { .o = o };
	json_t *sec = json_object(), *fail = json_array(), *ops, *rf;
	const char *status = "ok", *skip = not_now(rep);
	int rc = 0, lrc = 0;

	pthread_mutex_init(&M.mu, NULL);
	json_object_set_new(sec, "program", json_string(m->program ? m->program : "python"));
	if (m->python != NULL)
		json_object_set_new(sec, "python", json_string(m->python));
	json_object_set_new(sec, "backend", json_string(hf->backend &&
	    strcmp(hf->backend, "jaccl-ring") == 0 ? "jaccl-ring" : "jaccl"));
	if (skip != NULL) {
		status = "skipped";
		json_object_set_new(sec, "why", json_string(skip));
		json_array_append_new(fail, json_sprintf("mlx: not run: %s", skip));
		goto out;
	}
	{
		static const char *const check[] = { "check" };

		if ((rc = launch_mode(&M, hf, m, check, 1, &lrc, err)) < 0)
			goto out;
	}
	if (!check_hosts(&M, sec, fail)) {
		status = "not-installed";
		goto out;
	}
	mrun_clear(&M);
	{
		char sb[32], gb[32], it[32];
		const char *args[] = { "run", "jaccl", sb, gb, it };

		snprintf(sb, sizeof(sb), "%zu", m->sum_bytes);
		snprintf(gb, sizeof(gb), "%zu", m->gather_bytes);
		snprintf(it, sizeof(it), "%ld", m->iters);
		if ((rc = launch_mode(&M, hf, m, args, JC_ARRAY_LEN(args), &lrc, err)) < 0)
			goto out;
	}
	ops = json_array();
	for (size_t i = 0; i < JC_ARRAY_LEN(mlx_ops); i++)
		json_array_append_new(ops, op_result(&M, i, m, rep, fail));
	json_object_set_new(sec, "ops", ops);
	if (json_array_size(fail) > 0)
		status = "wrong";
	for (size_t k = 0; k < M.n; k++) {
		const struct launch_result *res = launch_result(M.l, k);

		if (rank_failed(res) || (lrc == 0 && !M.r[k].done)) {
			char *why = rank_failure(&M, k);

			status = "failed";
			json_array_append_new(fail, json_sprintf("mlx: %s", why));
			free(why);
		}
	}
	if (lrc != 0 && strcmp(status, "failed") != 0) {
		status = "failed";
		json_array_append_new(fail, json_sprintf("mlx: %s", err->msg));
	}
out:
	mrun_clear(&M);
	pthread_mutex_destroy(&M.mu);
	if (rc < 0) {
		json_decref(sec);
		json_decref(fail);
		return rc;
	}
	json_object_set_new(sec, "status", json_string(status));
	json_object_set(sec, "failures", fail);
	json_object_set_new(rep, "mlx", sec);
	rf = json_object_get(rep, "failures");
	if (!json_is_array(rf)) {
		rf = json_array();
		json_object_set_new(rep, "failures", rf);
	}
	json_array_extend(rf, fail);
	if (json_array_size(fail) > 0)
		json_object_set_new(rep, "ok", json_false());
	json_decref(fail);
	return 0;
}
