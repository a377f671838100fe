/* SPDX-License-Identifier: MIT */
/*
 * The verify orchestration: one launch of verify-rank per host, the
 * ssh side channel's relay between the launcher's streams (pipes carry
 * the ranks' output to rt_relay_run() and its answers back to their
 * standard input), rank 0's JSON report collected from its output and
 * completed with what the launcher knows about each host.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"
#include "rt_relay.h"
#include "verify_rank.h"
#include "verify_launcher.h"

#define TAIL_LINES 4		/* last lines of standard error kept per rank */

struct vrank {
	int from[2];		/* rank's output -> relay */
	int to[2];		/* relay -> rank's input */
	bool from_closed;
	char *tail[TAIL_LINES];	/* last lines of stderr */
	size_t ntail;
};

struct vrun {
	const struct verify_opts *o;
	struct launch *l;
	size_t n;
	struct vrank *vr;
	bool relay;
	struct jc_buf report;	/* rank 0's standard output (not frames) */
	pthread_mutex_t mu;	/* report, tails */
	int relay_rc;
	struct jc_err relay_err;
};

double
verify_overall_bound(double timeout, size_t nlinks)
{
	if (timeout <= 0)
		timeout = 30;
	return 60 + timeout * (6 + 2 * (double)nlinks);
}

static void
keep_tail(struct vrank *v, const char *data, size_t len)
{
	while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
		len--;
	if (len == 0)
		return;
	if (v->ntail == TAIL_LINES) {
		free(v->tail[0]);
		memmove(v->tail, v->tail + 1, (TAIL_LINES - 1) * sizeof(*v->tail));
		v->ntail--;
	}
	v->tail[v->ntail++] = xstrndup(data, len);
}

/* An ordinary line of rank r (from the launcher or the relay). */
static void
rank_line(struct vrun *V, size_t r, int fd, const char *data, size_t len)
{
	pthread_mutex_lock(&V->mu);
	if (fd == 1 && r == 0) {
		buf_append(&V->report, data, len);
		pthread_mutex_unlock(&V->mu);
		return;
	}
	if (fd == 2)
		keep_tail(&V->vr[r], data, len);
	pthread_mutex_unlock(&V->mu);
	if (V->o->line != NULL)
		V->o->line(V->o->arg, r, launch_host(V->l, r), fd, data, len);
}

static void
line_cb(void *arg, size_t rank, int fd, const char *data, size_t len)
{
	rank_line(arg, rank, fd, data, len);
}

static void
relay_out(void *arg, size_t rank, const char *data, size_t len)
{
	rank_line(arg, rank, 1, data, len);
}

/* Raw standard output for the relay (launcher thread of the rank). */
static void
raw_cb(void *arg, size_t rank, const char *data, size_t len)
{
	struct vrun *V = arg;
	struct vrank *v = &V->vr[rank];

	if (v->from_closed)
		return;
	while (len > 0) {
		ssize_t w = write(v->from[1], data, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		data += w;
		len -= (size_t)w;
	}
}

static void
close_from(struct vrun *V, size_t r)
{
	pthread_mutex_lock(&V->mu);
	if (!V->vr[r].from_closed) {
		V->vr[r].from_closed = true;
		close(V->vr[r].from[1]);
	}
	pthread_mutex_unlock(&V->mu);
}

static void
ended_cb(void *arg, size_t rank, const struct launch_result *res)
{
	struct vrun *V = arg;

	(void)res;
	if (V->relay)
		close_from(V, rank);
}

static void *
relay_thread(void *arg)
{
	struct vrun *V = arg;
	int *from = xcalloc(V->n, sizeof(int)), *to = xcalloc(V->n, sizeof(int));

	for (size_t r = 0; r < V->n; r++) {
		from[r] = V->vr[r].from[0];
		to[r] = V->vr[r].to[1];
	}
	V->relay_rc = rt_relay_run(V->n, from, to, relay_out, V,
	    V->o->timeout > 0 ? 2 * V->o->timeout + 5 : 65, &V->relay_err);
	free(from);
	free(to);
	/* the answers are all written: the pump sees the end */
	for (size_t r = 0; r < V->n; r++)
		close(V->vr[r].to[1]);
	return NULL;
}

/* Carry the relay's answers to the ranks' standard input. */
static void *
pump_thread(void *arg)
{
	struct vrun *V = arg;
	struct pollfd *p = xcalloc(V->n, sizeof(*p));
	size_t open = V->n;
	char buf[65536];

	for (size_t r = 0; r < V->n; r++) {
		p[r].fd = V->vr[r].to[0];
		p[r].events = POLLIN;
	}
	while (open > 0) {
		if (poll(p, V->n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (size_t r = 0; r < V->n; r++) {
			ssize_t k;

			if (p[r].fd < 0 || p[r].revents == 0)
				continue;
			k = read(p[r].fd, buf, sizeof(buf));
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				p[r].fd = -1;
				open--;
				continue;
			}
			launch_write(V->l, r, buf, (size_t)k);
		}
	}
	free(p);
	return NULL;
}

static const char *
state_name(enum launch_state s)
{
	switch (s) {
	case LAUNCH_PENDING: return "not-started";
	case LAUNCH_UNREACHABLE: return "unreachable";
	case LAUNCH_NOSTART: return "not-started";
	case LAUNCH_RUNNING: return "running";
	case LAUNCH_EXITED: return "exited";
	case LAUNCH_KILLED: return "killed";
	case LAUNCH_STOPPED: return "stopped";
	case LAUNCH_LOST: return "lost";
	case LAUNCH_NOBIN: return "no-program";
	}
	return "?";
}

/* rank 0's report: the first JSON object of its output */
static json_t *
parse_report(const struct jc_buf *b)
{
	const char *p;
	json_error_t je;
	json_t *v;

	if (b->len == 0)
		return NULL;
	for (p = b->data; p != NULL; p = memchr(p, '\n', b->len - (size_t)(p - b->data))) {
		if (*p == '\n')
			p++;
		if ((size_t)(p - b->data) >= b->len)
			break;
		if (*p != '{')
			continue;
		v = json_loadb(p, b->len - (size_t)(p - b->data), JSON_DISABLE_EOF_CHECK, &je);
		if (json_is_object(v))
			return v;
		json_decref(v);
	}
	return NULL;
}

static size_t
count_links(const struct jc_hostfile *hf)
{
	size_t k = 0;

	for (size_t i = 0; i < hf->nhosts; i++)
		for (size_t j = i + 1; j < hf->hosts[i].nrdma; j++)
			k += hf->hosts[i].rdma[j].n;
	return k;
}

static char *
host_of(const char *ssh)
{
	const char *at = strrchr(ssh, '@');

	return xstrdup(at ? at + 1 : ssh);
}

/* Complete rep with the hosts and how each rank ended; returns the verdict. */
static bool
merge(struct vrun *V, json_t *rep, int launch_rc)
{
	json_t *hosts = json_array(), *procs = json_array(), *fails;
	long first = -1;
	enum launch_stop why = launch_stop_reason(V->l, &first);
	bool ok = launch_rc == 0 && json_is_true(json_object_get(rep, "ok"));

	fails = json_object_get(rep, "failures");
	if (!json_is_array(fails)) {
		fails = json_array();
		json_object_set_new(rep, "failures", fails);
	}
	for (size_t r = 0; r < V->n; r++) {
		const struct launch_result *res = launch_result(V->l, r);
		json_t *p, *tail = json_array();
		char *h = host_of(launch_host(V->l, r));

		json_array_append_new(hosts, json_string(h));
		for (size_t i = 0; i < V->vr[r].ntail; i++)
			json_array_append_new(tail, json_string(V->vr[r].tail[i]));
		p = json_pack("{s:I,s:s,s:s,s:o}", "rank", (json_int_t)r, "host", h,
		    "state", state_name(res->state), "stderr_tail", tail);
		if (res->state == LAUNCH_EXITED)
			json_object_set_new(p, "status", json_integer(res->status));
		if (res->signal)
			json_object_set_new(p, "signal", json_string(res->signal));
		if (res->error)
			json_object_set_new(p, "error", json_string(res->error));
		if (res->bin)
			json_object_set_new(p, "program", json_string(res->bin));
		json_object_set_new(p, "cleaned", json_boolean(res->cleaned));
		json_object_set_new(p, "killed_at_cleanup", json_boolean(res->killed_left));
		json_array_append_new(procs, p);
		free(h);
	}
	json_object_set_new(rep, "hosts", hosts);
	json_object_set_new(rep, "processes", procs);
	if (launch_rc != 0) {
		if (why == LAUNCH_STOP_INTERRUPT) {
			json_array_append_new(fails, json_string("interrupted"));
		} else if (why == LAUNCH_STOP_TIMEOUT) {
			json_array_append_new(fails, json_string("the verification outlived "
			    "its overall bound and was stopped"));
		}
		/* name the rank that failed first, and any other that did not just stop */
		for (size_t r = 0; r < V->n; r++) {
			const struct launch_result *res = launch_result(V->l, r);
			char *txt, *h;
			struct jc_buf b = { 0 };

			if ((res->state == LAUNCH_EXITED && res->status == 0) ||
			    res->state == LAUNCH_STOPPED || res->state == LAUNCH_PENDING)
				continue;
			/* a rank that only reports the verdict (exit 1 with a report) */
			if (res->state == LAUNCH_EXITED && res->status == 1 &&
			    json_object_get(rep, "links") != NULL && (long)r != first)
				continue;
			txt = launch_result_text(res);
			h = host_of(launch_host(V->l, r));
			buf_printf(&b, "rank %zu (%s) %s", r, h, txt);
			if (V->vr[r].ntail > 0 && json_object_get(rep, "links") == NULL)
				buf_printf(&b, ": %s", V->vr[r].tail[V->vr[r].ntail - 1]);
			json_array_append_new(fails, json_string(b.data));
			buf_free(&b);
			free(txt);
			free(h);
		}
		ok = false;
	}
	if (V->relay && V->relay_rc < 0)
		json_array_append_new(fails, json_sprintf("side channel relay: %s",
		    V->relay_err.msg));
	if (json_array_size(fails) > 0)
		ok = false;
	json_object_set_new(rep, "ok", json_boolean(ok));
	return ok;
}

/* Remove dir and the files in it (the file side channel makes no folders). */
static void
rm_flat(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			char *p;

			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			p = xasprintf("%s/%s", dir, e->d_name);
			unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* The command line of verify-rank on each host (argv[0]: found there). */
static void
rank_argv(const struct verify_opts *o, const char *sc, struct jc_strv *argv)
{
	strv_push(argv, JC_PROG);
	strv_push(argv, "verify-rank");
	strv_push(argv, "--json");
	if (o->fabric) {
		strv_push(argv, "--fabric");
		strv_push(argv, o->fabric);
	}
	if (o->side_channel) {
		strv_push(argv, "--side-channel");
		strv_push(argv, sc ? sc : o->side_channel);
	}
	if (o->min_bw || (o->fabric && strcmp(o->fabric, "verbs") == 0)) {
		/* RDMA over Thunderbolt 5 moves well over 50 Gb/s per cable */
		strv_push(argv, "--min-bw");
		strv_push(argv, o->min_bw ? o->min_bw : VERIFY_RDMA_FLOOR);
	}
	if (o->timeout > 0) {
		strv_push_owned(argv, xasprintf("--timeout=%g", o->timeout));
	}
	if (o->verbose)
		strv_push(argv, "-v");
}

/* The ssh side channel: a pair of pipes per rank, the relay and the pump. */
static int
relay_start(struct vrun *V, pthread_t *relay_th, pthread_t *pump_th, struct jc_err *err)
{
	for (size_t r = 0; r < V->n; r++) {
		if (pipe(V->vr[r].from) < 0 || pipe(V->vr[r].to) < 0) {
			int rc = jc_fail(err, -errno, "pipe: %s", strerror(errno));

			for (size_t k = 0; k <= r; k++)
				V->vr[k].from_closed = true;
			return rc;
		}
	}
	pthread_create(relay_th, NULL, relay_thread, V);
	pthread_create(pump_th, NULL, pump_thread, V);
	return 0;
}

static void
relay_stop(struct vrun *V, pthread_t relay_th, pthread_t pump_th)
{
	for (size_t r = 0; r < V->n; r++)
		close_from(V, r);
	pthread_join(relay_th, NULL);
	pthread_join(pump_th, NULL);
	for (size_t r = 0; r < V->n; r++) {
		close(V->vr[r].from[0]);
		close(V->vr[r].to[0]);
	}
}

int
verify_run(const struct jc_hostfile *hf, const struct verify_opts *o, json_t **report,
    struct jc_err *err)
{
	struct vrun V;
	struct launch_opts lo;
	struct jc_strv argv = { 0 };
	struct jc_strv warn = { 0 }, bins = { 0 };
	char tmpl[4096] = "", *sc = NULL;
	const char *tmp = getenv("TMPDIR");
	pthread_t relay_th, pump_th;
	json_t *rep;
	int rc;
	bool ok;

	*report = NULL;
	memset(&V, 0, sizeof(V));
	V.o = o;
	V.n = hf->nhosts;
	V.relay = o->side_channel != NULL && strcmp(o->side_channel, "ssh") == 0;
	pthread_mutex_init(&V.mu, NULL);

	if (o->remote_bin != NULL && !launch_bin_ok(o->remote_bin, err)) {
		pthread_mutex_destroy(&V.mu);
		return -EINVAL;
	}
	launch_bin_candidates(o->remote_bin, &bins);
	if (o->side_channel != NULL && strcmp(o->side_channel, "file") == 0) {
		/* a fresh folder here: the hosts must share this filesystem */
		snprintf(tmpl, sizeof(tmpl), "%s/jaccl-verify.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (mkdtemp(tmpl) == NULL) {
			strv_free(&bins);
			pthread_mutex_destroy(&V.mu);
			return jc_fail(err, -errno, "cannot make a folder for the file side "
			    "channel: %s", strerror(errno));
		}
		sc = xasprintf("file=%s", tmpl);
	}
	rank_argv(o, sc, &argv);

	memset(&lo, 0, sizeof(lo));
	lo.tr = o->tr;
	lo.env.backend = hf->backend && strcmp(hf->backend, "jaccl-ring") == 0 ?
	    "jaccl-ring" : "jaccl";
	lo.env.envs = o->envs;
	lo.env.nenvs = o->nenvs;
	lo.env.starting_port = o->starting_port > 0 ? o->starting_port : 32323;
	lo.env.connections_per_ip = 1;
	lo.argv = argv.v;
	lo.argc = argv.n;
	lo.bin = bins.v;
	lo.nbin = bins.n;
	lo.bin_version = JC_PROG " " PACKAGE_VERSION;
	lo.timeout = verify_overall_bound(o->timeout, count_links(hf));
	lo.interrupted = o->interrupted;
	lo.line = line_cb;
	lo.raw = V.relay ? raw_cb : NULL;
	lo.keep_stdin = V.relay;
	/* a rank's exit 1 is its verdict: rank 0 prints the report before it ends */
	lo.rank0_reports = true;
	lo.ended = ended_cb;
	lo.arg = &V;
	rc = launch_prepare(hf, &lo, &V.l, &warn, err);
	strv_free(&warn);
	if (rc < 0)
		goto out;
	V.vr = xcalloc(V.n, sizeof(*V.vr));
	if (V.relay && (rc = relay_start(&V, &relay_th, &pump_th, err)) < 0)
		goto out;
	rc = launch_run(V.l, err);
	if (V.relay)
		relay_stop(&V, relay_th, pump_th);
	rep = parse_report(&V.report);
	if (rep == NULL)
		rep = json_pack("{s:I,s:b}", "ranks", (json_int_t)V.n, "ok", 0);
	ok = merge(&V, rep, rc);
	*report = rep;
	rc = ok ? 0 : 1;
out:
	if (*tmpl)
		rm_flat(tmpl);
	if (V.vr != NULL)
		for (size_t r = 0; r < V.n; r++)
			for (size_t i = 0; i < V.vr[r].ntail; i++)
				free(V.vr[r].tail[i]);
	free(V.vr);
	launch_free(V.l);
	buf_free(&V.report);
	strv_free(&argv);
	strv_free(&bins);
	free(sc);
	pthread_mutex_destroy(&V.mu);
	return rc;
}
