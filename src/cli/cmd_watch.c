/* SPDX-License-Identifier: MIT */
/*
 * The watch command: one SSH session per host (watch_live.c) delivers a
 * new inventory of its host every --interval seconds; once every live host
 * has delivered one (a round), the cable graph of all hosts is built, its
 * snapshot diffed against the last one (watch.c) and each change printed
 * as an event with its time. On a terminal the cable table is redrawn in
 * place above the last events; otherwise (or with --json) one line (one
 * JSON object) per event. Hosts that go away are reported and reconnected
 * by the sessions; the command ends on SIGINT/SIGTERM/SIGHUP (status 0),
 * after --count rounds or the first event named by --until-event (0), or
 * when every host is gone for good (3, unreachable).
 */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "graph.h"
#include "parse_tb.h"
#include "watch.h"
#include "watch_live.h"

enum host_state {
	HS_CONNECTING,
	HS_LIVE,
	HS_GONE,
	HS_DROPPED,		/* unreachable at the start (--ignore-unreachable) or given up */
};

static const char *const host_state_names[] = {
	[HS_CONNECTING] = "connecting", [HS_LIVE] = "live", [HS_GONE] = "gone",
	[HS_DROPPED] = "given up",
};

/* The kinds --until-event accepts besides watch_kind_name()'s. */
static const char *const extra_kinds[] = {
	"snapshot", "host-gone", "host-back", "host-lost", "error", "any", NULL,
};

#define TTY_EVENTS 12
#define WATCH_SETTLE_ROUNDS 3

struct watch_state {
	struct jc_opts *o;
	struct cli_hosts *h;
	struct jc_host *inv;	/* the latest inventory of each host (owned) */
	bool *have, *fresh;
	char **unreachable;	/* the first connection's error, or NULL */
	enum host_state *st;
	size_t n;
	bool tty, json, started;
	struct watch_snapshot prev;
	char *prev_key;		/* watch_unsettled_key() of the last round */
	int key_rounds;		/* how many rounds in a row gave prev_key */
	long rounds;
	bool done;		/* --count or --until-event reached */
	char *events[TTY_EVENTS];	/* the last events, for the terminal */
	size_t nev;
};

static bool
kind_ok(const char *k, size_t len)
{
	for (int i = WATCH_PLUGGED; i <= WATCH_ADDRESS; i++)
		if (strlen(watch_kind_name(i)) == len && strncmp(watch_kind_name(i), k, len) == 0)
			return true;
	for (size_t i = 0; extra_kinds[i]; i++)
		if (strlen(extra_kinds[i]) == len && strncmp(extra_kinds[i], k, len) == 0)
			return true;
	return false;
}

/* Whether the comma separated list until names kind (or "any"). */
static bool
until_has(const char *until, const char *kind)
{
	size_t kl = strlen(kind);

	for (const char *p = until; p && *p;) {
		size_t l = strcspn(p, ",");

		if ((l == kl && strncmp(p, kind, l) == 0) || (l == 3 && strncmp(p, "any", 3) == 0))
			return true;
		p += l + (p[l] == ',');
	}
	return false;
}

static int
until_check(const struct jc_opts *o)
{
	const char *p = o->until_event;

	if (p == NULL)
		return 0;
	if (*p == '\0')
		return cli_usage_error(o->cmd, "argument --until-event: no event named");
	while (*p) {
		size_t l = strcspn(p, ",");

		if (!kind_ok(p, l))
			return cli_usage_error(o->cmd, "argument --until-event: unknown event '%.*s' "
			    "(snapshot, plugged, unplugged, moved, speed, carrier, rdma, address, "
			    "host-gone, host-back, host-lost, error or any)", (int)(l > 40 ? 40 : l), p);
		p += l + (p[l] == ',');
	}
	return 0;
}

static char *
now_text(void)
{
	struct timeval tv;
	struct tm tm;
	char b[64];

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm);
	return xasprintf("%s.%03ldZ", b, (long)(tv.tv_usec / 1000));
}

static void
redraw(struct watch_state *ws)
{
	struct jc_buf b = { 0 };
	char *t = now_text(), *cables = watch_snapshot_text(&ws->prev);

	buf_printf(&b, "\033[H\033[2J%s watch: %zu host%s, every %g s, %s\n\n", JC_PROG, ws->n,
	    ws->n == 1 ? "" : "s", ws->o->interval, t);
	for (size_t i = 0; i < ws->n; i++)
		buf_printf(&b, "  %-24s %s\n", ws->h->v[i].name, host_state_names[ws->st[i]]);
	buf_printf(&b, "\nCables (%zu):\n%s", ws->prev.n, cables);
	if (ws->nev)
		buf_puts(&b, "\nEvents:\n");
	for (size_t i = 0; i < ws->nev; i++)
		buf_printf(&b, "  %s\n", ws->events[i]);
	fputs(b.data, stdout);
	fflush(stdout);
	buf_free(&b);
	free(cables);
	free(t);
}

/* Print one event (o: its JSON, with "event" set; text: its line). Takes o. */
static void
emit(struct watch_state *ws, json_t *o, const char *text)
{
	const char *kind = json_string_value(json_object_get(o, "event"));
	char *t = now_text();

	if (ws->json) {
		json_t *line = json_pack("{s:s, s:s}", "event", kind, "time", t);
		char *s;

		json_object_update_missing(line, o);
		s = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (s != NULL)
			printf("%s\n", s);
		free(s);
		json_decref(line);
		ws->o->json_printed = true;
	} else if (ws->tty) {
		if (ws->nev == TTY_EVENTS) {
			free(ws->events[0]);
			memmove(ws->events, ws->events + 1, (TTY_EVENTS - 1) * sizeof(char *));
			ws->nev--;
		}
		ws->events[ws->nev++] = xasprintf("%s %s", t, text);
	} else {
		printf("%s %s\n", t, text);
	}
	if (!ws->tty)
		fflush(stdout);
	if (ws->o->until_event && until_has(ws->o->until_event, kind))
		ws->done = true;
	json_decref(o);
	free(t);
}

static void
host_event(struct watch_state *ws, const char *kind, size_t i, const char *msg, int attempt)
{
	json_t *o = json_pack("{s:s, s:s}", "event", kind, "host", ws->h->v[i].name);
	char *text;

	if (msg)
		json_object_set_new(o, "error", json_string(msg));
	if (attempt > 0)
		json_object_set_new(o, "attempt", json_integer(attempt));
	if (strcmp(kind, "host-back") == 0)
		text = xasprintf("host back: %s", ws->h->v[i].name);
	else if (strcmp(kind, "host-lost") == 0)
		text = xasprintf("host given up: %s after %d tries: %s", ws->h->v[i].name, attempt,
		    msg ? msg : "");
	else if (strcmp(kind, "error") == 0)
		text = xasprintf("error: %s: %s", ws->h->v[i].name, msg ? msg : "");
	else if (attempt > 0)
		text = xasprintf("host gone: %s (reconnection %d failed: %s)", ws->h->v[i].name,
		    attempt, msg ? msg : "");
	else
		text = xasprintf("host gone: %s (%s)", ws->h->v[i].name, msg ? msg : "");
	emit(ws, o, text);
	free(text);
}

/* Take a host's new inventory (name and target kept as given). */
static void
take(struct watch_state *ws, size_t i, struct jc_host *inv)
{
	jc_host_clear(&ws->inv[i]);
	ws->inv[i] = *inv;
	free(inv);
	free(ws->inv[i].name);
	free(ws->inv[i].target);
	ws->inv[i].name = xstrdup(ws->h->v[i].name);
	ws->inv[i].target = xstrdup(ws->h->v[i].target);
	ws->have[i] = ws->fresh[i] = true;
	ws->st[i] = HS_LIVE;
}

/* Every host has spoken since the last round (or cannot). */
static bool
round_ready(const struct watch_state *ws)
{
	bool any = false;

	for (size_t i = 0; i < ws->n; i++) {
		if (ws->st[i] == HS_DROPPED || ws->st[i] == HS_GONE)
			continue;
		if (!ws->fresh[i])
			return false;
		any = true;
	}
	return any;
}

static void
round_run(struct watch_state *ws)
{
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	struct watch_snapshot snap;
	char *key;

	for (size_t i = 0; i < ws->n; i++)
		ws->fresh[i] = false;
	ws->rounds++;
	parse_tb_infer_peers(ws->inv, ws->n);
	if (graph_build(ws->inv, ws->n, &g, &err) != 0) {
		json_t *o = json_pack("{s:s, s:s}", "event", "error", "error", err.msg);
		char *text = xasprintf("error: %s", err.msg);

		emit(ws, o, text);
		free(text);
		return;
	}
	watch_snapshot_build(g, &snap);
	key = watch_unsettled_key(g);
	graph_free(g);
	if (key != NULL && ws->prev_key != NULL && strcmp(key, ws->prev_key) == 0)
		ws->key_rounds++;
	else
		ws->key_rounds = 1;
	free(ws->prev_key);
	ws->prev_key = key;
	/*
	 * A change seen from one end only: believed on the third round in a
	 * row that shows it. The snapshot a host delivers in the round after
	 * the first may have been taken before that round ended (before the
	 * change, for all we know); the one of the round after that was
	 * started after it, so after the change.
	 */
	if (key != NULL && ws->key_rounds < WATCH_SETTLE_ROUNDS) {
		jc_info(NULL, "one-sided ports (%s): waiting for another look", key);
		watch_snapshot_free(&snap);
		return;
	}
	if (!ws->started) {
		json_t *o = json_pack("{s:s, s:o}", "event", "snapshot", "cables",
		    watch_snapshot_json(&snap));
		char *text = xasprintf("snapshot: %zu cable%s", snap.n, snap.n == 1 ? "" : "s");

		ws->started = true;
		ws->prev = snap;
		emit(ws, o, text);
		free(text);
		if (!ws->tty && !ws->json) {
			char *c = watch_snapshot_text(&ws->prev);

			fputs(c, stdout);
			fflush(stdout);
			free(c);
		}
	} else {
		struct watch_event *ev;
		size_t nev;

		watch_diff(&ws->prev, &snap, &ev, &nev);
		for (size_t k = 0; k < nev; k++) {
			char *text = watch_event_text(&ev[k]);

			emit(ws, watch_event_json(&ev[k]), text);
			free(text);
		}
		free(ev);
		watch_snapshot_free(&ws->prev);
		ws->prev = snap;
	}
	if (ws->o->count > 0 && ws->rounds >= ws->o->count)
		ws->done = true;
}

/* Every host either answered once or failed its first connection. */
static bool
start_known(const struct watch_state *ws)
{
	for (size_t i = 0; i < ws->n; i++)
		if (!ws->have[i] && ws->unreachable[i] == NULL && ws->st[i] != HS_DROPPED)
			return false;
	return true;
}

/* At the start, as mlx: unreachable hosts fail the command unless ignored. */
static int
start_check(struct watch_state *ws)
{
	bool any = false;

	for (size_t i = 0; i < ws->n; i++)
		if (ws->unreachable[i] != NULL) {
			ws->h->v[i].reachable = false;
			free(ws->h->v[i].error);
			ws->h->v[i].error = xstrdup(ws->unreachable[i]);
			any = true;
		} else {
			ws->h->v[i].reachable = true;
		}
	if (!any)
		return 0;
	/* only reached without --ignore-unreachable: prints mlx's report */
	return cli_hosts_check(ws->o, ws->h, "no reachable host left to watch");
}

static bool
all_dropped(const struct watch_state *ws)
{
	for (size_t i = 0; i < ws->n; i++)
		if (ws->st[i] != HS_DROPPED)
			return false;
	return true;
}

/* One update from the sessions. Returns an exit status to stop with, or -1. */
static int
update(struct watch_state *ws, struct wl_update *u)
{
	size_t i = u->host;

	switch (u->kind) {
	case WL_SNAPSHOT:
		take(ws, i, u->inv);
		u->inv = NULL;
		break;
	case WL_UNREACHABLE:
		if (ws->o->ignore_unreachable) {
			jc_warn(ws->h->v[i].name, "unreachable, left out: %s", u->msg);
			ws->st[i] = HS_DROPPED;
		} else {
			ws->unreachable[i] = xstrdup(u->msg ? u->msg : "unreachable");
		}
		break;
	case WL_GONE:
		if (ws->st[i] != HS_GONE || u->attempt > 0)
			host_event(ws, "host-gone", i, u->msg, u->attempt);
		ws->st[i] = HS_GONE;
		ws->fresh[i] = false;
		break;
	case WL_BACK:
		host_event(ws, "host-back", i, NULL, 0);
		ws->st[i] = HS_CONNECTING;
		break;
	case WL_GAVE_UP:
		host_event(ws, "host-lost", i, u->msg, u->attempt);
		ws->st[i] = HS_DROPPED;
		if (all_dropped(ws)) {
			jc_error(NULL, "every host is gone: gave up after %ld reconnection%s each",
			    ws->o->max_reconnects, ws->o->max_reconnects == 1 ? "" : "s");
			return JC_EXIT_UNREACHABLE;
		}
		break;
	case WL_BAD:
		if (!ws->started && !ws->have[i]) {
			/* as probe: a host whose outputs cannot be understood fails it */
			jc_error(ws->h->v[i].name, "%s", u->msg ? u->msg : "unreadable outputs");
			return JC_EXIT_FAIL;
		}
		host_event(ws, "error", i, u->msg, 0);
		break;
	}
	if (!ws->started && start_known(ws)) {
		int rc = start_check(ws);

		if (rc != 0)
			return rc;
		if (all_dropped(ws)) {
			jc_error(NULL, "no reachable host left to watch");
			return JC_EXIT_UNREACHABLE;
		}
	}
	if ((ws->started || start_known(ws)) && round_ready(ws))
		round_run(ws);
	return -1;
}

static int
watch_loop(struct watch_state *ws, struct wl *w)
{
	double last_draw = 0;
	int rc = -1;

	while (rc < 0 && !ws->done && !cli_interrupted) {
		struct wl_update u = { 0 };

		if (wl_next(w, 0.1, &u)) {
			rc = update(ws, &u);
			wl_update_clear(&u);
		}
		if (ws->tty && ws->started && jc_now() - last_draw >= 0.5) {
			redraw(ws);
			last_draw = jc_now();
		}
	}
	if (ws->tty && ws->started)
		redraw(ws);
	if (rc < 0)
		rc = JC_EXIT_OK;	/* interrupted, --count or --until-event */
	return rc;
}

int
cmd_watch(struct jc_opts *o)
{
	struct cli_hosts h = { 0 };
	struct watch_state ws = { 0 };
	struct wl_opts wo = { 0 };
	struct wl *w;
	int rc;

	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if ((rc = until_check(o)) != 0)
		return rc;
	if ((rc = cli_ssh_config_ok(o)) != 0 || (rc = cli_hosts_load(o, 0, &h)) != 0)
		goto out;
	if (h.n == 0) {
		jc_error(NULL, "no host to watch");
		rc = JC_EXIT_FAIL;
		goto out;
	}
	if ((rc = cli_tr_init()) != 0)
		goto out;
	cli_catch_interrupts();
	ws.o = o;
	ws.h = &h;
	ws.n = h.n;
	ws.json = o->json;
	ws.tty = !o->json && isatty(STDOUT_FILENO);
	ws.inv = xcalloc(h.n, sizeof(*ws.inv));
	ws.have = xcalloc(h.n, sizeof(*ws.have));
	ws.fresh = xcalloc(h.n, sizeof(*ws.fresh));
	ws.st = xcalloc(h.n, sizeof(*ws.st));
	ws.unreachable = xcalloc(h.n, sizeof(*ws.unreachable));
	for (size_t i = 0; i < h.n; i++) {
		ws.inv[i].name = xstrdup(h.v[i].name);
		ws.inv[i].target = xstrdup(h.v[i].target);
	}
	wo.tr = cli_tr_opts(o);
	wo.interval = o->interval;
	wo.command_timeout = o->command_timeout;
	wo.max_reconnects = (int)o->max_reconnects;
	jc_info(NULL, "watching %zu host%s every %g s", h.n, h.n == 1 ? "" : "s", o->interval);
	if (ws.tty)
		fputs("\033[?25l", stdout);	/* no cursor while redrawing */
	w = wl_start(h.v, h.n, &wo);
	if (w == NULL) {
		jc_error(NULL, "cannot start the sessions");
		rc = JC_EXIT_FAIL;
	} else {
		rc = watch_loop(&ws, w);
		wl_stop(w);	/* every remote loop stopped, every session closed */
	}
	if (ws.tty)
		fputs("\033[?25h", stdout);
	fflush(stdout);
	tr_global_cleanup();
	if (cli_interrupted)
		jc_info(NULL, "stopped by signal %d", (int)cli_interrupted);
out:
	for (size_t i = 0; i < ws.n; i++) {
		jc_host_clear(&ws.inv[i]);
		free(ws.unreachable[i]);
	}
	for (size_t i = 0; i < ws.nev; i++)
		free(ws.events[i]);
	free(ws.inv);
	free(ws.have);
	free(ws.fresh);
	free(ws.st);
	free(ws.unreachable);
	free(ws.prev_key);
	watch_snapshot_free(&ws.prev);
	cli_hosts_clear(&h);
	return rc;
}
