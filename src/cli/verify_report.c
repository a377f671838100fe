/* SPDX-License-Identifier: MIT */
/*
 * The verification reports for people: rank 0's tables of verify-rank
 * (each link alone, all links at once, the all-reduce, all-gather and
 * send/recv tables, verify --mlx's figures, the verdict)
 * and the launcher's report of verify (the per-link matrix by host, those
 * tables, the failures and a summary line). Both read the JSON reports of
 * the runtime and the launcher.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static double
num(json_t *o, const char *k1, const char *k2)
{
	json_t *v = json_object_get(o, k1);

	if (k2 != NULL)
		v = json_object_get(v, k2);
	return json_number_value(v);
}

static long long
inum(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

static const char *
str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* str(), "?" when missing: what a %s of a table gets. */
static const char *
strq(json_t *o, const char *k)
{
	const char *v = str(o, k);

	return v != NULL ? v : "?";
}

/* ---- rank 0's report ---- */

static void
rt_print_links(FILE *fp, json_t *links)
{
	json_t *l;
	size_t i;

	fprintf(fp, "#\n# Each link alone, both directions\n");
	fprintf(fp, "# %4s %-12s %4s %-12s %9s %7s %9s %7s %9s %9s  %s\n",
	    "A", "device", "B", "device", "A->B GB/s", "Gb/s", "B->A GB/s", "Gb/s",
	    "lat p50", "p99 (us)", "status");
	json_array_foreach(links, i, l) {
		const char *st = strq(l, "status");

		fprintf(fp, "  %4lld %-12s %4lld %-12s ", inum(l, "a"), strq(l, "device_a"),
		    inum(l, "b"), strq(l, "device_b"));
		if (json_object_get(l, "a_to_b")) {
			double ab = num(l, "a_to_b", "GBps"), abg = num(l, "a_to_b", "Gbps");
			double ba = num(l, "b_to_a", "GBps"), bag = num(l, "b_to_a", "Gbps");

			/* a slow link keeps its significant digits */
			fprintf(fp, "%9.*f %7.*f %9.*f %7.*f %9.1f %9.1f  %s\n",
			    ab < 1 ? 3 : 2, ab, abg < 10 ? 2 : 1, abg,
			    ba < 1 ? 3 : 2, ba, bag < 10 ? 2 : 1, bag,
			    num(l, "latency_us", "median"), num(l, "latency_us", "p99"), st);
		} else {
			fprintf(fp, "%9s %7s %9s %7s %9s %9s  %s\n", "-", "-", "-", "-",
			    "-", "-", st);
		}
	}
}

static void
rt_print_allreduce(FILE *fp, json_t *a)
{
	json_t *row;
	size_t i;

	fprintf(fp, "#\n# All-reduce (sum)\n");
	fprintf(fp, "# %10s %12s %8s %6s %6s %10s %8s %8s %7s\n", "size", "count", "type",
	    "redop", "root", "time", "algbw", "busbw", "#wrong");
	fprintf(fp, "# %10s %12s %8s %6s %6s %10s %8s %8s %7s\n", "(B)", "(elements)", "",
	    "", "", "(us)", "(GB/s)", "(GB/s)", "");
	json_array_foreach(json_object_get(a, "rows"), i, row)
		fprintf(fp, "  %10lld %12lld %8s %6s %6d %10.1f %8.2f %8.2f %7lld\n",
		    inum(row, "size"), inum(row, "count"), strq(row, "type"), "sum", -1,
		    num(row, "time_us", NULL), num(row, "algbw", NULL),
		    num(row, "busbw", NULL), inum(row, "wrong"));
	fprintf(fp, "# Out of bounds values : %lld %s\n", inum(a, "wrong"),
	    inum(a, "wrong") ? "FAILED" : "OK");
	fprintf(fp, "# Avg bus bandwidth    : %.3f\n#\n", num(a, "avg_busbw", NULL));
}

/* The all-gather and send/recv tables (reports without them print nothing). */
static void
rt_print_ops(FILE *fp, json_t *a, const char *title)
{
	const char *st = str(a, "status");
	json_t *row, *sh;
	size_t i;

	if (!json_is_object(a))
		return;
	fprintf(fp, "# %s", title);
	sh = json_object_get(a, "shifts");
	json_array_foreach(sh, i, row)
		fprintf(fp, "%s%lld", i ? ", " : " (every rank sends to rank + s and "
		    "receives from rank - s at once, for s = ", (long long)json_integer_value(row));
	fprintf(fp, "%s\n", json_array_size(sh) ? ")" : "");
	fprintf(fp, "# %10s %12s %8s %6s %6s %10s %8s %8s %7s\n", "size", "count", "type",
	    "redop", "root", "time", "algbw", "busbw", "#wrong");
	fprintf(fp, "# %10s %12s %8s %6s %6s %10s %8s %8s %7s\n", "(B)", "(elements)", "",
	    "", "", "(us)", "(GB/s)", "(GB/s)", "");
	json_array_foreach(json_object_get(a, "rows"), i, row)
		fprintf(fp, "  %10lld %12lld %8s %6s %6d %10.1f %8.2f %8.2f %7lld\n",
		    inum(row, "size"), inum(row, "count"), strq(row, "type"), "none", -1,
		    num(row, "time_us", NULL), num(row, "algbw", NULL),
		    num(row, "busbw", NULL), inum(row, "wrong"));
	if (st != NULL && strcmp(st, "ok") != 0 && strcmp(st, "wrong") != 0)
		fprintf(fp, "# %s\n", st);
	fprintf(fp, "# Wrong values         : %lld %s\n", inum(a, "wrong"),
	    inum(a, "wrong") ? "FAILED" : "OK");
	fprintf(fp, "# Avg bus bandwidth    : %.3f\n#\n", num(a, "avg_busbw", NULL));
}

/* verify --mlx: every host's Python and mlx, then MLX's figures beside the runtime's. */
static void
rt_print_mlx(FILE *fp, json_t *m)
{
	const char *prog = str(m, "program");
	json_t *h, *op;
	size_t i;

	if (!json_is_object(m))
		return;
	fprintf(fp, "# MLX's own collectives (%s, backend %s), beside the runtime's\n",
	    prog != NULL && strcmp(prog, "python") != 0 ? prog : "mlx.core.distributed",
	    strq(m, "backend"));
	json_array_foreach(json_object_get(m, "hosts"), i, h) {
		const char *mlx = str(h, "mlx");

		fprintf(fp, "#   %lld %s: ", inum(h, "rank"), strq(h, "host"));
		if (mlx == NULL)
			fprintf(fp, "%s\n", str(h, "error") ? str(h, "error") : "?");
		else if (strcmp(mlx, "none") == 0 && strcmp(strq(h, "python"), "none") == 0)
			fprintf(fp, "no Python (%s)\n", strq(h, "why"));
		else if (strcmp(mlx, "none") == 0)
			fprintf(fp, "mlx is not installed (Python %s at %s)\n",
			    strq(h, "python_version"), strq(h, "python"));
		else if (strcmp(strq(h, "python"), "-") == 0)
			fprintf(fp, "mlx %s\n", mlx);
		else
			fprintf(fp, "mlx %s, Python %s at %s\n", mlx, strq(h, "python_version"),
			    strq(h, "python"));
	}
	if (json_array_size(json_object_get(m, "ops")) > 0) {
		fprintf(fp, "# %-10s %10s %10s %8s %5s %10s %8s %8s %8s %7s\n", "operation",
		    "size", "count", "type", "iters", "time", "algbw", "busbw", "runtime",
		    "#wrong");
		fprintf(fp, "# %-10s %10s %10s %8s %5s %10s %8s %8s %8s %7s\n", "", "(B)",
		    "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "(GB/s)", "");
	}
	json_array_foreach(json_object_get(m, "ops"), i, op) {
		fprintf(fp, "  %-10s %10lld %10lld %8s %5lld %10.1f %8.2f %8.2f ", strq(op, "op"),
		    inum(op, "size"), inum(op, "count"), strq(op, "type"), inum(op, "iters"),
		    num(op, "time_us", NULL), num(op, "algbw", NULL), num(op, "busbw", NULL));
		if (json_object_get(op, "runtime_busbw"))
			fprintf(fp, "%8.2f", num(op, "runtime_busbw", NULL));
		else
			fprintf(fp, "%8s", "-");
		fprintf(fp, " %7lld\n", inum(op, "wrong"));
	}
	fprintf(fp, "# MLX: %s%s%s%s\n#\n", strq(m, "status"), str(m, "why") ? " (" : "",
	    str(m, "why") ? str(m, "why") : "", str(m, "why") ? ")" : "");
}

static void
rt_report(FILE *fp, json_t *rep)
{
	json_t *a, *f;
	size_t i;

	fprintf(fp, "# jaccl-config verify: %lld ranks, %s group (%lld wire%s), "
	    "fabric %s, side channel %s\n", inum(rep, "ranks"), strq(rep, "group"),
	    inum(rep, "wires"), inum(rep, "wires") == 1 ? "" : "s", strq(rep, "fabric"),
	    strq(rep, "side_channel"));
	rt_print_links(fp, json_object_get(rep, "links"));
	a = json_object_get(rep, "all_links");
	fprintf(fp, "#\n# All links at once: ");
	if (strcmp(strq(a, "status"), "ok") == 0)
		fprintf(fp, "%.2f GB/s (%.1f Gb/s) over %lld connections\n",
		    num(a, "GBps", NULL), num(a, "Gbps", NULL), inum(a, "connections"));
	else
		fprintf(fp, "%s\n", strq(a, "status"));
	rt_print_allreduce(fp, json_object_get(rep, "allreduce"));
	rt_print_ops(fp, json_object_get(rep, "allgather"), "All-gather (8-byte words "
	    "that name their rank and place)");
	rt_print_ops(fp, json_object_get(rep, "sendrecv"), "Send/recv");
	rt_print_mlx(fp, json_object_get(rep, "mlx"));
	json_array_foreach(json_object_get(rep, "failures"), i, f)
		fprintf(fp, "FAIL: %s\n", json_is_string(f) ? json_string_value(f) : "?");
	fprintf(fp, "verify: %s\n", json_is_true(json_object_get(rep, "ok")) ?
	    "PASS" : "FAIL");
}

/* ---- the launcher's report ---- */

static const char *
name_of(json_t *hosts, json_int_t r)
{
	const char *s = json_string_value(json_array_get(hosts, (size_t)r));

	return s ? s : "?";
}

/* Gb/s from row host to column host summed over its cables, and each pair's status. */
static void
matrix_cells(json_t *links, size_t n, double *cell, const char **st)
{
	json_t *l;
	size_t i;

	json_array_foreach(links, i, l) {
		json_int_t a = json_integer_value(json_object_get(l, "a"));
		json_int_t b = json_integer_value(json_object_get(l, "b"));
		const char *s = str(l, "status");

		if (a < 0 || b < 0 || (size_t)a >= n || (size_t)b >= n)
			continue;
		cell[a * n + b] += num(l, "a_to_b", "Gbps");
		cell[b * n + a] += num(l, "b_to_a", "Gbps");
		if (s == NULL || strcmp(s, "ok") != 0)
			st[a * n + b] = st[b * n + a] = s ? s : "?";
		else if (st[a * n + b] == NULL)
			st[a * n + b] = st[b * n + a] = "ok";
	}
}

static void
print_matrix(FILE *fp, json_t *hosts, json_t *links)
{
	size_t n = json_array_size(hosts);
	double *cell = xcalloc(n * n, sizeof(*cell));
	const char **st = xcalloc(n * n, sizeof(*st));
	int w = 8;

	matrix_cells(links, n, cell, st);
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(name_of(hosts, (json_int_t)i)) > w)
			w = (int)strlen(name_of(hosts, (json_int_t)i));
	fprintf(fp, "#\n# Per-link matrix, Gb/s from row to column, each link alone\n");
	fprintf(fp, "# %-*s", w, "");
	for (size_t c = 0; c < n; c++)
		fprintf(fp, " %*s", w, name_of(hosts, (json_int_t)c));
	fprintf(fp, "\n");
	for (size_t r = 0; r < n; r++) {
		fprintf(fp, "  %-*s", w, name_of(hosts, (json_int_t)r));
		for (size_t c = 0; c < n; c++) {
			const char *s = st[r * n + c];

			if (r == c || s == NULL)
				fprintf(fp, " %*s", w, "-");
			else if (strcmp(s, "ok") == 0 || strcmp(s, "slow") == 0)
				/* two decimals below 10 Gb/s: a slow cable's figure stays readable */
				fprintf(fp, " %*.*f%s", strcmp(s, "slow") == 0 ? w - 1 : w,
				    cell[r * n + c] < 10 ? 2 : 1, cell[r * n + c],
				    strcmp(s, "slow") == 0 ? "!" : "");
			else
				fprintf(fp, " %*s", w, s);
		}
		fprintf(fp, "\n");
	}
	free(cell);
	free(st);
}

/* Every link that is not ok; returns how many. */
static size_t
print_bad_links(FILE *fp, json_t *hosts, json_t *links)
{
	size_t i, nbad = 0;
	json_t *l;

	json_array_foreach(links, i, l) {
		const char *s = str(l, "status");
		const char *e = str(l, "error");

		if (s != NULL && strcmp(s, "ok") == 0)
			continue;
		nbad++;
		fprintf(fp, "link %s:%s -- %s:%s: %s%s%s\n",
		    name_of(hosts, json_integer_value(json_object_get(l, "a"))),
		    strq(l, "device_a"), name_of(hosts, json_integer_value(json_object_get(l, "b"))),
		    strq(l, "device_b"), s ? s : "?", e ? ": " : "", e ? e : "");
	}
	return nbad;
}

/* The failures (after the runtime's tables, only the launcher's own) and the ranks' stderr. */
static void
print_failures(FILE *fp, json_t *rep, bool tables)
{
	json_t *f, *p;
	size_t i;

	json_array_foreach(json_object_get(rep, "failures"), i, f) {
		const char *s = json_is_string(f) ? json_string_value(f) : "?";

		if (!tables || strncmp(s, "rank ", 5) == 0 ||
		    strncmp(s, "side channel", 12) == 0 || strcmp(s, "interrupted") == 0)
			fprintf(fp, "FAIL: %s\n", s);
	}
	json_array_foreach(json_object_get(rep, "processes"), i, p) {
		const char *state = str(p, "state");
		size_t k;
		json_t *t;

		if (state != NULL && (strcmp(state, "exited") == 0 || strcmp(state, "stopped") == 0)
		    && inum(p, "status") <= 1)
			continue;
		json_array_foreach(json_object_get(p, "stderr_tail"), k, t)
			fprintf(fp, "# %s: %s\n", strq(p, "host"),
			    json_is_string(t) ? json_string_value(t) : "?");
	}
}

static void
launcher_report(FILE *fp, json_t *rep)
{
	json_t *hosts = json_object_get(rep, "hosts"), *links = json_object_get(rep, "links");
	size_t n = json_array_size(hosts), i, nbad;
	json_t *f;

	fprintf(fp, "# hosts:");
	json_array_foreach(hosts, i, f)
		fprintf(fp, " %zu=%s", i, json_is_string(f) ? json_string_value(f) : "?");
	fprintf(fp, "\n");
	if (json_is_array(links) && n > 0) {
		print_matrix(fp, hosts, links);
		rt_report(fp, rep);
	}
	nbad = print_bad_links(fp, hosts, links);
	print_failures(fp, rep, json_is_array(links));
	fprintf(fp, "summary: %zu hosts, %zu links, %zu failed: %s\n", n,
	    json_array_size(links), nbad,
	    json_is_true(json_object_get(rep, "ok")) ? "PASS" : "FAIL");
}

/*
 * s tells of a rank that ran, tried the coordinator and got no answer
 * (sidechan-tcp.c's words): what a firewall that drops does. Rank 0's
 * "did not connect to the coordinator" alone may be a rank that never
 * started.
 */
static bool
coordinator_blocked(const char *s)
{
	return s != NULL && strstr(s, "did not accept within") != NULL;
}

char *
verify_firewall_hint(json_t *rep, const char *bin, const char **host)
{
	json_t *f, *p, *t;
	size_t i, k;
	bool blocked = false;
	char *path, *hint;

	*host = name_of(json_object_get(rep, "hosts"), 0);
	json_array_foreach(json_object_get(rep, "failures"), i, f)
		blocked |= coordinator_blocked(json_string_value(f));
	json_array_foreach(json_object_get(rep, "processes"), i, p)
		json_array_foreach(json_object_get(p, "stderr_tail"), k, t)
			blocked |= coordinator_blocked(json_string_value(t));
	if (!blocked)
		return NULL;
	path = bin != NULL && bin[0] == '/' && jc_plain_word(bin) ? xstrdup(bin) :
	    xstrdup("\"$(command -v jaccl-config)\"");
	hint = xasprintf("the other ranks could not reach the coordinator port here; if this "
	    "Mac's application firewall is on (jaccl-config doctor says), let jaccl-config "
	    "accept connections: sudo /usr/libexec/ApplicationFirewall/socketfilterfw --add %s "
	    "&& sudo /usr/libexec/ApplicationFirewall/socketfilterfw --unblockapp %s", path, path);
	free(path);
	return hint;
}

/*
 * The reports hold names, errors and stderr lines the hosts sent: each is
 * written whole into memory first, then with every control character but
 * the newline and the tab escaped (jc_buf_printable).
 */
static void
print_safe(FILE *fp, json_t *rep, void (*fn)(FILE *, json_t *))
{
	struct jc_buf b = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	if (mem == NULL) {
		fprintf(fp, "jaccl-config: cannot format the report: out of memory\n");
		return;
	}
	fn(mem, rep);
	fclose(mem);
	jc_buf_printable(&b, text, 0, true);
	fputs(b.data, fp);
	buf_free(&b);
	free(text);
}

void
rt_verify_print(FILE *fp, json_t *rep)
{
	print_safe(fp, rep, rt_report);
}

void
verify_print(FILE *fp, json_t *rep)
{
	print_safe(fp, rep, launcher_report);
}
