/* SPDX-License-Identifier: MIT */
/*
 * Live sessions for watch: see watch_live.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "watch_live.h"

#define WL_TOKEN_LEN 32
#define WL_MAX_BUFFER (32u * 1024 * 1024)

char *
wl_command(double interval, double command_timeout)
{
	struct jc_buf loop = { 0 }, cmd = { 0 };
	/*
	 * The first look is the whole probe but its sudo check (watch neither
	 * sets up nor reports sudo); the later ones ask only what can change
	 * (PROBE_CHANGING_ONLY), the parser taking the rest from the first
	 * (wl_parse). uname -sn runs once, for all of them.
	 */
	char *probe = probe_script_opts(command_timeout, false,
	    PROBE_NO_SUDO | PROBE_UNAME_GIVEN | PROBE_NO_MANAGERS);
	char *again = probe_script_opts(command_timeout, false,
	    PROBE_NO_SUDO | PROBE_UNAME_GIVEN | PROBE_CHANGING_ONLY);

	/*
	 * kill -TERM 0: the loop is the session's process group (sshd starts
	 * it with setsid), so a stop takes the probe and its commands along.
	 * The probe and the sleep run in the background so that the trap runs
	 * at once instead of after them.
	 */
	buf_puts(&loop, "# jaccl-config watch loop\n"
	    "IFS= read -r T || exit 97\n"
	    "trap 'trap - TERM HUP INT; kill -TERM 0 2>/dev/null; exit 143' TERM HUP INT\n"
	    "jc_u=$(uname -sn </dev/null 2>/dev/null); jc_s=$?\n"
	    "jc_p=");
	jc_sh_quote(&loop, probe);
	buf_puts(&loop, "\njc_q=");
	jc_sh_quote(&loop, again);
	buf_printf(&loop, "\nwhile :; do\n"
	    "\tprintf '%%s\\n%%s\\n%%s\\n' \"$T\" \"$jc_s\" \"$jc_u\" | /bin/sh -c \"$jc_p\" &\n"
	    "\twait $!\n"
	    "\tprintf '%%s S\\n' \"$T\" || exit 0\n"
	    "\tjc_p=$jc_q\n"
	    "\tsleep %.3f </dev/null >/dev/null 2>&1 &\n"
	    "\twait $!\n"
	    "done\n", interval);
	free(again);
	buf_puts(&cmd, "exec /bin/sh -c ");
	jc_sh_quote(&cmd, loop.data);
	buf_free(&loop);
	free(probe);
	return buf_steal(&cmd);
}

size_t
wl_snapshot_end(const char *token, const char *buf, size_t len, size_t *body_len)
{
	size_t tl = strlen(token), pos = 0;

	if (tl == 0)
		return 0;
	while (pos < len) {
		const char *p = memmem(buf + pos, len - pos, token, tl);
		size_t off;

		if (p == NULL)
			return 0;
		off = (size_t)(p - buf);
		if ((off == 0 || buf[off - 1] == '\n') && len - off >= tl + 3 &&
		    memcmp(p + tl, " S\n", 3) == 0) {
			*body_len = off;
			return off + tl + 3;
		}
		pos = off + 1;
	}
	return 0;
}

int
wl_parse(const char *token, const char *name, const char *body, size_t len,
    struct jc_raw *first, struct jc_host **out, struct jc_err *err)
{
	struct jc_raw raw = { 0 };
	struct jc_host *h = xcalloc(1, sizeof(*h));
	int r;

	*out = NULL;
	h->name = xstrdup(name);
	h->target = xstrdup(name);
	h->reachable = true;
	raw.host = xstrdup(name);
	r = probe_split(token, body, len, &raw, NULL, 0, err);
	if (r >= 0 && raw_get(&raw, "uname.txt") == NULL)
		r = jc_fail(err, -EPROTO, "%s: a snapshot without the system's name", name);
	for (size_t i = 0; r >= 0 && first != NULL && i < first->n; i++) {
		const struct jc_raw_out *o = &first->outs[i];

		if (raw_get(&raw, o->name) == NULL)
			raw_add(&raw, o->name, o->data, o->len, o->status);
	}
	if (r >= 0)
		r = probe_parse_raw(h, &raw, err);
	if (r >= 0 && first != NULL && first->n == 0) {
		*first = raw;
		raw = (struct jc_raw){ 0 };
	}
	raw_clear(&raw);
	if (r < 0) {
		jc_host_clear(h);
		free(h);
		return r;
	}
	*out = h;
	return 0;
}

/* the sessions */

struct wl_host {
	struct wl *w;
	size_t i;
	char *name, *user;
	int port;
	pthread_t tid;
	bool started;
	/* the stream of the current session */
	struct jc_buf buf;
	struct jc_raw first;	/* the answers of its first look */
	double last;		/* when the last snapshot (or the start) came */
	bool stalled, over;
};

struct wl {
	struct wl_opts o;
	struct jc_transport *tp, *own;
	char *command;
	char token[WL_TOKEN_LEN + 2];	/* as sent: with its newline */
	char tok[WL_TOKEN_LEN + 1];	/* as the frames carry it */
	struct wl_host *h;
	size_t n;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wl_update *q;	/* queued updates */
	size_t nq, capq;
	bool stop;
};

static void
push(struct wl *w, size_t i, enum wl_kind k, struct jc_host *inv, const char *msg, int attempt)
{
	pthread_mutex_lock(&w->mu);
	if (w->nq == w->capq) {
		w->capq = w->capq ? 2 * w->capq : 16;
		w->q = xreallocarray(w->q, w->capq, sizeof(*w->q));
	}
	w->q[w->nq++] = (struct wl_update){ i, k, inv, msg ? xstrdup(msg) : NULL, attempt };
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static bool
stopping(struct wl *w)
{
	bool s;

	pthread_mutex_lock(&w->mu);
	s = w->stop;
	pthread_mutex_unlock(&w->mu);
	return s;
}

/* Sleep up to seconds, waking at once on wl_stop(). Returns true when stopping. */
static bool
nap(struct wl *w, double seconds)
{
	struct timespec ts;
	double until = seconds;
	bool s;

	clock_gettime(CLOCK_REALTIME, &ts);
	until += (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	ts.tv_sec = (time_t)until;
	ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
	pthread_mutex_lock(&w->mu);
	while (!w->stop && pthread_cond_timedwait(&w->cv, &w->mu, &ts) != ETIMEDOUT)
		;
	s = w->stop;
	pthread_mutex_unlock(&w->mu);
	return s;
}

static int
on_data(void *arg, int fd, const char *data, size_t len)
{
	struct wl_host *h = arg;
	struct wl *w = h->w;
	size_t end, body;

	if (fd != 1)
		return 0;	/* stderr: the login shell's chatter, a command's warnings */
	if (h->buf.len + len > WL_MAX_BUFFER) {
		h->over = true;
		return 1;
	}
	buf_append(&h->buf, data, len);
	while ((end = wl_snapshot_end(w->tok, h->buf.data, h->buf.len, &body)) > 0) {
		struct jc_host *inv = NULL;
		struct jc_err err = { 0 };

		if (wl_parse(w->tok, h->name, h->buf.data, body, &h->first, &inv, &err) == 0)
			push(w, h->i, WL_SNAPSHOT, inv, NULL, 0);
		else
			push(w, h->i, WL_BAD, NULL, err.msg, 0);
		h->last = jc_now();
		memmove(h->buf.data, h->buf.data + end, h->buf.len - end);
		h->buf.len -= end;
		h->buf.data[h->buf.len] = '\0';
	}
	return 0;
}

static int
should_stop(void *arg)
{
	struct wl_host *h = arg;

	if (stopping(h->w))
		return 1;
	if (jc_now() - h->last > h->w->o.idle) {
		h->stalled = true;
		return 1;
	}
	return 0;
}

static void *
host_thread(void *arg)
{
	struct wl_host *h = arg;
	struct wl *w = h->w;
	static const struct tr_stream_cbs cbs = { .on_data = on_data, .should_stop = should_stop };
	bool ever = false, gone = false;
	int attempts = 0;

	while (!stopping(w)) {
		struct jc_conn *c = NULL;
		struct jc_err err = { 0 };
		int r, status = -1;

		r = tp_connect(w->tp, h->name, h->user, h->port, &c, &err);
		if (r != 0) {
			if (!ever) {
				push(w, h->i, WL_UNREACHABLE, NULL, err.msg, 0);
				return NULL;
			}
			attempts++;
			push(w, h->i, WL_GONE, NULL, err.msg, attempts);
			if (attempts >= w->o.max_reconnects) {
				push(w, h->i, WL_GAVE_UP, NULL, err.msg, attempts);
				return NULL;
			}
			/* 0.5, 1, 2, 4, 8, 8 ... seconds */
			if (nap(w, attempts >= 5 ? 8.0 : 0.5 * (double)(1 << (attempts - 1))))
				return NULL;
			continue;
		}
		if (gone)
			push(w, h->i, WL_BACK, NULL, NULL, attempts);
		ever = true;
		gone = false;
		attempts = 0;
		h->buf.len = 0;
		raw_clear(&h->first);	/* a new session begins with a whole look */
		h->stalled = h->over = false;
		h->last = jc_now();
		r = tp_stream(c, w->command, w->token, strlen(w->token), &cbs, h, 0, &status, &err);
		tp_close(c);
		if (stopping(w))
			break;
		gone = true;
		if (h->stalled)
			push(w, h->i, WL_GONE, NULL, "no snapshot for too long: connection stalled", 0);
		else if (h->over)
			push(w, h->i, WL_GONE, NULL, "the remote loop printed too much without a snapshot", 0);
		else if (r == 0)
			push(w, h->i, WL_GONE, NULL, "the remote loop ended", 0);
		else
			push(w, h->i, WL_GONE, NULL, err.msg, 0);
		if (nap(w, 0.5))
			break;
	}
	return NULL;
}

static void
make_token(char *out)
{
	jc_token(out, WL_TOKEN_LEN, "jw");
	out[WL_TOKEN_LEN] = '\n';
	out[WL_TOKEN_LEN + 1] = '\0';
}

struct wl *
wl_start(const struct jc_host *hosts, size_t n, const struct wl_opts *o)
{
	struct wl *w = xcalloc(1, sizeof(*w));
	sigset_t block, old;
	size_t started = 0;

	w->o = *o;
	if (w->o.interval <= 0)
		w->o.interval = 2;
	if (w->o.max_reconnects < 1)
		w->o.max_reconnects = 1;
	/* a probe run takes a few seconds at most; a stalled TCP session never ends */
	if (w->o.idle <= 0)
		w->o.idle = 5 * w->o.interval + 10;
	w->tp = o->transport;
	if (w->tp == NULL)
		w->tp = w->own = transport_ssh_new(&w->o.tr);
	w->command = wl_command(w->o.interval, w->o.command_timeout);
	make_token(w->token);
	memcpy(w->tok, w->token, WL_TOKEN_LEN);
	w->tok[WL_TOKEN_LEN] = '\0';
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->n = n;
	w->h = xcalloc(n ? n : 1, sizeof(*w->h));
	/* the caller's thread takes the signals (interrupts), not the sessions */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (size_t i = 0; i < n; i++) {
		struct wl_host *h = &w->h[i];

		h->w = w;
		h->i = i;
		h->name = xstrdup(hosts[i].name);
		h->user = hosts[i].user ? xstrdup(hosts[i].user) : NULL;
		h->port = hosts[i].port;
		if (pthread_create(&h->tid, NULL, host_thread, h) == 0) {
			h->started = true;
			started++;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (started == 0 && n > 0) {
		wl_stop(w);
		return NULL;
	}
	return w;
}

int
wl_next(struct wl *w, double timeout, struct wl_update *u)
{
	struct timespec ts;
	double until = timeout;
	int got = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	until += (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	ts.tv_sec = (time_t)until;
	ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
	pthread_mutex_lock(&w->mu);
	while (w->nq == 0 && pthread_cond_timedwait(&w->cv, &w->mu, &ts) != ETIMEDOUT)
		;
	if (w->nq > 0) {
		*u = w->q[0];
		memmove(w->q, w->q + 1, (w->nq - 1) * sizeof(*w->q));
		w->nq--;
		got = 1;
	}
	pthread_mutex_unlock(&w->mu);
	return got;
}

void
wl_update_clear(struct wl_update *u)
{
	if (u->inv != NULL) {
		jc_host_clear(u->inv);
		free(u->inv);
	}
	free(u->msg);
	memset(u, 0, sizeof(*u));
}

void
wl_stop(struct wl *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	for (size_t i = 0; i < w->n; i++) {
		if (w->h[i].started)
			pthread_join(w->h[i].tid, NULL);
		free(w->h[i].name);
		free(w->h[i].user);
		buf_free(&w->h[i].buf);
		raw_clear(&w->h[i].first);
	}
	for (size_t i = 0; i < w->nq; i++)
		wl_update_clear(&w->q[i]);
	free(w->q);
	free(w->h);
	free(w->command);
	transport_free(w->own);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
