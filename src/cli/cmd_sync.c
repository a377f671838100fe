/* SPDX-License-Identifier: MIT */
/*
 * The sync and sync-rank commands. sync: a folder from one host onto every
 * other host of a hostfile over the cables (sync_run.h), with a progress
 * line per host (redrawn on a terminal, plain lines otherwise, JSON lines
 * with --json) and each host's result; --dry-run prints the route and,
 * when verify has measured the cables, the expected time. sync-rank: one
 * host's part, talking to the controller on its standard input and output.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "launch.h"
#include "hostfile_read.h"
#include "sync_rank.h"
#include "sync_run.h"

/* ---- sync-rank ---- */

static pthread_mutex_t rank_out = PTHREAD_MUTEX_INITIALIZER;

static char *
rank_read_line(void *arg)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	(void)arg;
	n = getline(&line, &cap, stdin);
	if (n <= 0) {
		free(line);
		return NULL;
	}
	return line;
}

static void
rank_event(void *arg, json_t *ev)
{
	char *s = json_dumps(ev, JSON_COMPACT);

	(void)arg;
	pthread_mutex_lock(&rank_out);
	if (s != NULL) {
		fputs(s, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	pthread_mutex_unlock(&rank_out);
	free(s);
}

int
cmd_sync_rank(struct jc_opts *o)
{
	struct sync_rank_io io = { rank_read_line, rank_event, NULL };
	struct jc_err err = { 0 };

	o->json_printed = true;
	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if (sync_rank_run(&io, &err) < 0) {
		jc_error(NULL, "sync-rank: %s", err.msg);
		return JC_EXIT_FAIL;
	}
	return JC_EXIT_OK;
}

/* ---- sync ---- */

struct hprog {
	char *host;
	double need, written, t0, last_print;
	double rate;
	bool done;
};

struct prog {
	pthread_mutex_t mu;
	struct hprog *h;
	size_t n, drawn;
	bool tty, json;
};

static void
prog_line(FILE *fp, const struct hprog *h)
{
	char *w = sync_fmt_bytes(h->written), *t = sync_fmt_bytes(h->need), *r = sync_fmt_bytes(h->rate);

	fprintf(fp, "%s: %s of %s, %s/s", h->host, w, t, r);
	if (h->done)
		fputs(", done", fp);
	else if (h->rate > 0 && h->need > h->written)
		fprintf(fp, ", %.0f s left", (h->need - h->written) / h->rate);
	free(w);
	free(t);
	free(r);
}

static void
redraw(struct prog *P)
{
	if (P->drawn > 0)
		fprintf(stderr, "\033[%zuA", P->drawn);
	for (size_t i = 0; i < P->n; i++) {
		fputs("\r\033[K", stderr);
		prog_line(stderr, &P->h[i]);
		fputc('\n', stderr);
	}
	P->drawn = P->n;
	fflush(stderr);
}

static struct hprog *
prog_host(struct prog *P, const char *host)
{
	for (size_t i = 0; host != NULL && i < P->n; i++)
		if (strcmp(P->h[i].host, host) == 0)
			return &P->h[i];
	return NULL;
}

static void
sync_event(void *arg, const char *host, json_t *ev)
{
	struct prog *P = arg;
	const char *kind = json_string_value(json_object_get(ev, "ev"));
	struct hprog *h;
	double now = jc_now();

	if (kind == NULL)
		return;
	pthread_mutex_lock(&P->mu);
	h = prog_host(P, host);
	if (P->json && strcmp(kind, "hello") != 0) {
		json_t *c = json_deep_copy(ev);
		char *s;

		json_object_del(c, "ev");
		json_object_set_new(c, "event", json_string(kind));
		if (host != NULL)
			json_object_set_new(c, "host", json_string(host));
		s = json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER);
		printf("%s\n", s);
		fflush(stdout);
		free(s);
		json_decref(c);
	}
	if (h != NULL && strcmp(kind, "hello") == 0) {
		h->need = (double)json_integer_value(json_object_get(ev, "bytes_needed"));
		h->written = 0;
		h->t0 = now;
		h->done = false;
	} else if (h != NULL && strcmp(kind, "progress") == 0) {
		h->written = (double)json_integer_value(json_object_get(ev, "written"));
		if (now > h->t0)
			h->rate = h->written / (now - h->t0);
	} else if (h != NULL && strcmp(kind, "end") == 0) {
		h->written = (double)json_integer_value(json_object_get(ev, "written"));
		h->done = json_is_true(json_object_get(ev, "complete"));
	} else if (!P->json && strcmp(kind, "bad-chunk") == 0) {
		jc_warn(host, "chunk %d of %s arrived damaged: sent again",
		    (int)json_integer_value(json_object_get(ev, "chunk")),
		    json_string_value(json_object_get(ev, "path")));
	} else if (!P->json && strcmp(kind, "source-error") == 0) {
		jc_warn(host, "%s: %s: not sent in this run",
		    json_string_value(json_object_get(ev, "path")),
		    json_string_value(json_object_get(ev, "why")));
	} else if (!P->json && strcmp(kind, "upstream-lost") == 0) {
		jc_warn(host, "upstream %s", json_string_value(json_object_get(ev, "why")));
	} else if (!P->json && strcmp(kind, "child-lost") == 0) {
		jc_warn(host, "downstream rank %d: %s",
		    (int)json_integer_value(json_object_get(ev, "rank")),
		    json_string_value(json_object_get(ev, "why")));
	} else if (!P->json && strcmp(kind, "file") == 0 && jc_verbosity > 0) {
		jc_info(host, "%s %s", json_string_value(json_object_get(ev, "path")),
		    json_is_true(json_object_get(ev, "ok")) ? "done" : "failed");
	}
	if (!P->json && h != NULL && (strcmp(kind, "progress") == 0 || strcmp(kind, "end") == 0)) {
		if (P->tty) {
			redraw(P);
		} else if (strcmp(kind, "end") == 0 || now - h->last_print >= 5) {
			h->last_print = now;
			prog_line(stderr, h);
			fputc('\n', stderr);
		}
	}
	pthread_mutex_unlock(&P->mu);
}

/* Split SRC into host and folder: "host:folder", or a local folder (host NULL). */
static void
split_src(const char *src, char **host, char **path)
{
	const char *colon = strchr(src, ':');
	const char *slash = strchr(src, '/');

	if (colon != NULL && (slash == NULL || colon < slash)) {
		*host = xstrndup(src, (size_t)(colon - src));
		*path = xstrdup(colon + 1);
	} else {
		*host = NULL;
		*path = xstrdup(src);
	}
}

static int
find_host(const struct jc_hostfile *hf, const char *name)
{
	for (size_t i = 0; i < hf->nhosts; i++) {
		const char *s = hf->hosts[i].ssh, *at = strrchr(s, '@');

		if (strcmp(s, name) == 0 || (at != NULL && strcmp(at + 1, name) == 0))
			return (int)i;
	}
	return -1;
}

/* A folder name that reaches the hosts: printable, not empty. */
static bool
folder_ok(const char *p)
{
	if (p == NULL || *p == '\0')
		return false;
	for (; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

static json_t *
load_verify_report(const struct jc_opts *o)
{
	const char *home = getenv("HOME");
	char *p = o->state_dir ? xasprintf("%s/verify.json", o->state_dir) :
	    xasprintf("%s/.cache/jaccl-config/verify.json", home ? home : "/");
	json_error_t je;
	json_t *v = json_load_file(p, 0, &je);

	free(p);
	return v;
}

static void
print_route(FILE *fp, json_t *rj)
{
	json_t *parts = json_object_get(rj, "parts"), *p, *e;
	size_t i, k;

	fprintf(fp, "route: %s from %s, %zu part%s\n", json_string_value(json_object_get(rj, "kind")),
	    json_string_value(json_object_get(rj, "source")), json_array_size(parts),
	    json_array_size(parts) == 1 ? "" : "s");
	json_array_foreach(parts, i, p) {
		fprintf(fp, "  part %zu:", i + 1);
		json_array_foreach(p, k, e)
			fprintf(fp, "%s %s -> %s", k ? "," : "",
			    json_string_value(json_object_get(e, "from")),
			    json_string_value(json_object_get(e, "to")));
		fputc('\n', fp);
	}
	if (json_object_get(rj, "seconds_per_GB") != NULL)
		fprintf(fp, "expected: %.2f s per GB (verify's measures)\n",
		    json_number_value(json_object_get(rj, "seconds_per_GB")));
	if (json_object_get(rj, "expected_seconds") != NULL)
		fprintf(fp, "expected: %.1f s for %s\n",
		    json_number_value(json_object_get(rj, "expected_seconds")),
		    json_string_value(json_object_get(rj, "bytes_text")));
	if (json_object_get(rj, "seconds_per_GB") == NULL)
		fputs("expected: unknown (run 'jaccl-config verify' to measure the cables)\n", fp);
}

static int
dry_run(struct jc_opts *o, const struct jc_hostfile *hf, int source, const char *srcpath,
    bool local)
{
	struct sync_graph g;
	struct sync_route r;
	json_t *rep = load_verify_report(o), *rj;
	double *gbps = rep ? sync_gbps_from_report(hf, rep) : NULL, bytes = 0;

	if (local) {
		struct sync_tree t;
		struct jc_err err = { 0 };

		if (sync_tree_scan(srcpath, false, &t, &err) < 0) {
			jc_error(NULL, "%s", err.msg);
			free(gbps);
			json_decref(rep);
			return JC_EXIT_FAIL;
		}
		for (size_t i = 0; i < t.n; i++)
			bytes += (double)t.v[i].size;
		sync_tree_free(&t);
	}
	sync_graph_from_hostfile(hf, o->over && strcmp(o->over, "ethernet") == 0, &g);
	sync_route_plan(&g, source, &r);
	rj = sync_route_json(&r, hf, gbps, bytes);
	if (bytes > 0) {
		char *b = sync_fmt_bytes(bytes);

		json_object_set_new(rj, "bytes", json_integer((json_int_t)bytes));
		json_object_set_new(rj, "bytes_text", json_string(b));
		free(b);
	}
	for (size_t i = 0; i < hf->nhosts; i++)
		if (!r.reached[i])
			jc_warn(NULL, "%s: no cable leads there from the source", hf->hosts[i].ssh);
	if (o->json) {
		json_object_del(rj, "bytes_text");
		out_json(rj);
		o->json_printed = true;
	} else {
		print_route(stdout, rj);
	}
	json_decref(rj);
	sync_route_free(&r);
	sync_graph_free(&g);
	free(gbps);
	json_decref(rep);
	return JC_EXIT_OK;
}

static void
print_result(json_t *res)
{
	json_t *hosts = json_object_get(res, "hosts"), *h, *f;
	size_t i;

	json_array_foreach(hosts, i, h) {
		const char *state = json_string_value(json_object_get(h, "state"));
		char *w = sync_fmt_bytes((double)json_integer_value(json_object_get(h, "written")));

		printf("%-20s %-11s %s written into %s\n",
		    json_string_value(json_object_get(h, "host")), state, w,
		    json_string_value(json_object_get(h, "dest")));
		free(w);
	}
	/* what was lost, as an error when a host is left incomplete */
	json_array_foreach(json_object_get(res, "failures"), i, f) {
		if (json_is_true(json_object_get(res, "ok")))
			jc_warn(NULL, "%s", json_string_value(f));
		else
			jc_error(NULL, "%s", json_string_value(f));
	}
	printf("summary: %zu hosts, %d run%s: %s\n", json_array_size(hosts),
	    (int)json_integer_value(json_object_get(res, "runs")),
	    json_integer_value(json_object_get(res, "runs")) == 1 ? "" : "s",
	    json_is_true(json_object_get(res, "ok")) ? "COMPLETE" : "INCOMPLETE");
}

int
cmd_sync(struct jc_opts *o)
{
	struct jc_hostfile *hf = NULL;
	struct hostfile_diags d = { 0 };
	struct sync_opts so;
	struct jc_err err = { 0 };
	struct prog P;
	char *shost = NULL, *spath = NULL, hn[256] = "";
	json_t *res = NULL;
	int rc = JC_EXIT_FAIL, source = -1, r;

	if (o->hostfile == NULL)
		return cli_usage_error(o->cmd, "the following arguments are required: --hostfile");
	if (o->argc < 1)
		return cli_usage_error(o->cmd, "the following arguments are required: SRC");
	if (o->argc > 2)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[2]);
	if (cli_remote_bin(o) != NULL && !launch_bin_ok(cli_remote_bin(o), &err))
		return cli_usage_error(o->cmd, "%s %s", o->remote_bin != NULL ?
		    "argument --remote-bin:" : "JACCL_CONFIG_REMOTE:", err.msg);
	split_src(o->argv[0], &shost, &spath);
	if (!folder_ok(spath) || (o->argc == 2 && !folder_ok(o->argv[1]))) {
		free(shost);
		free(spath);
		return cli_usage_error(o->cmd, "a folder name must not be empty or hold "
		    "control characters");
	}
	hostfile_load(o->hostfile, &hf, &d);
	if (hf == NULL || d.nerrors > 0) {
		for (size_t i = 0; i < d.n; i++)
			jc_error(NULL, "%s: %s", o->hostfile, d.v[i].msg);
		if (hf == NULL && d.nerrors == 0)
			jc_error(NULL, "%s: cannot read the hostfile", o->hostfile);
		goto out;
	}
	if (hf->nhosts > SYNC_MAX_HOSTS) {
		jc_error(NULL, "%s: sync handles %d hosts at most", o->hostfile, SYNC_MAX_HOSTS);
		goto out;
	}
	if (shost != NULL) {
		source = find_host(hf, shost);
		if (source < 0) {
			jc_error(NULL, "%s: not a host of %s", shost, o->hostfile);
			goto out;
		}
	} else {
		/* a local folder: this machine must be one of the hosts */
		gethostname(hn, sizeof(hn) - 1);
		source = find_host(hf, hn);
		if (source < 0 && strchr(hn, '.') != NULL) {
			*strchr(hn, '.') = '\0';
			source = find_host(hf, hn);
		}
		if (source < 0) {
			jc_error(NULL, "%s: a local folder, but this machine (%s) is none of the "
			    "hosts of %s: give the source as HOST:FOLDER", spath, hn, o->hostfile);
			goto out;
		}
	}
	if (o->dry_run) {
		rc = dry_run(o, hf, source, spath, shost == NULL);
		goto out;
	}
	memset(&so, 0, sizeof(so));
	so.tr = cli_tr_opts(o);
	so.remote_bin = cli_remote_bin(o);
	so.source = source;
	so.src = spath;
	so.dest = o->argc == 2 ? o->argv[1] : spath;
	so.checksum = o->checksum;
	so.verify_sha256 = o->verify_sha256;
	so.over_ethernet = o->over != NULL && strcmp(o->over, "ethernet") == 0;
	so.timeout = o->timeout;
	{
		const char *runs = getenv("JACCL_SYNC_RUNS");
		long k;

		if (runs != NULL && jc_parse_int(runs, 1, 100, &k))
			so.max_runs = (int)k;
	}
	so.interrupted = &cli_interrupted;
	memset(&P, 0, sizeof(P));
	pthread_mutex_init(&P.mu, NULL);
	P.n = hf->nhosts;
	P.h = xcalloc(P.n, sizeof(*P.h));
	for (size_t i = 0; i < P.n; i++) {
		const char *s = hf->hosts[i].ssh, *at = strrchr(s, '@');

		P.h[i].host = xstrdup(at ? at + 1 : s);
	}
	P.json = o->json;
	P.tty = !o->json && isatty(STDERR_FILENO);
	so.event = sync_event;
	so.arg = &P;
	if (cli_tr_init() != 0)
		goto out_p;
	cli_catch_interrupts();
	r = sync_run(hf, &so, &res, &err);
	if (r < 0) {
		jc_error(NULL, "%s", err.msg);
	} else {
		rc = r == 0 ? JC_EXIT_OK : JC_EXIT_FAIL;
		if (cli_interrupted)
			rc = 128 + (int)cli_interrupted;
		if (o->json) {
			json_t *c = json_deep_copy(res);

			json_object_del(c, "run_details");
			json_object_set_new(c, "event", json_string("result"));
			json_object_set_new(c, "code", json_string(cli_exit_code(rc)));
			{
				char *s = json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER);

				printf("%s\n", s);
				free(s);
			}
			json_decref(c);
			o->json_printed = true;
		} else {
			print_result(res);
		}
	}
	tr_global_cleanup();
out_p:
	for (size_t i = 0; i < P.n; i++)
		free(P.h[i].host);
	free(P.h);
	pthread_mutex_destroy(&P.mu);
out:
	json_decref(res);
	jc_hostfile_free(hf);
	hostfile_diags_free(&d);
	free(shost);
	free(spath);
	return rc;
}
