/* SPDX-License-Identifier: MIT */
/*
 * Live sessions for watch: one SSH session per host, each running one
 * remote loop (one exec) that reruns the probe script every interval and
 * ends each run with a "TOKEN S" line, so that the stream is a sequence of
 * framed snapshots. One thread per host reads its stream, cuts it into
 * snapshots, parses each with the host's platform backend into a struct
 * jc_host and queues it for the caller. A session that breaks, or that
 * sends nothing for longer than the host's idle limit, is closed and
 * reconnected with a growing backoff (0.5 s doubling up to 8 s), at most
 * max_reconnects times in a row; each outage and each return is queued as
 * an update. Library code: nothing is printed, nothing is decided about
 * the cabling (that is watch.c's and the command's).
 */
#ifndef JC_WATCH_LIVE_H
#define JC_WATCH_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "jc.h"
#include "platform.h"
#include "transport.h"

enum wl_kind {
	WL_SNAPSHOT,		/* a new inventory of the host (inv) */
	WL_UNREACHABLE,		/* the first connection failed (msg); no retry */
	WL_GONE,		/* the session broke or stalled (msg, attempt 0) or a
				 * reconnection failed (msg, attempt k) */
	WL_BACK,		/* connected again after WL_GONE */
	WL_GAVE_UP,		/* max_reconnects failed in a row: the host is dropped */
	WL_BAD,			/* a snapshot could not be parsed (msg); the session goes on */
};

struct wl_update {
	size_t host;		/* index in the hosts given to wl_start */
	enum wl_kind kind;
	struct jc_host *inv;	/* WL_SNAPSHOT: owned by the receiver (jc_host_clear + free) */
	char *msg;		/* or NULL; owned by the receiver */
	int attempt;		/* WL_GONE: reconnection attempts so far */
};

struct wl_opts {
	struct tr_opts tr;
	struct jc_transport *transport;	/* NULL: the ssh transport of tr */
	double interval;		/* seconds between two runs of the probe (> 0) */
	double command_timeout;		/* per remote command (<= 0: 60) */
	int max_reconnects;		/* reconnections in a row before giving up */
	double idle;			/* no snapshot for this long: stalled (<= 0: derived) */
};

struct wl;

/*
 * Start one session thread per host (hosts[i].name, user, port are read
 * during the call and copied). Returns NULL only if no thread could start.
 */
struct wl *wl_start(const struct jc_host *hosts, size_t n, const struct wl_opts *o);

/*
 * The next update, waiting at most timeout seconds. Returns 1 with *u
 * filled, 0 when none came in time.
 */
int wl_next(struct wl *w, double timeout, struct wl_update *u);

/* Release what an update holds. */
void wl_update_clear(struct wl_update *u);

/*
 * Stop every session (the remote loops get SIGTERM and their channels are
 * closed), join the threads, free w. NULL is fine.
 */
void wl_stop(struct wl *w);

/*
 * The remote loop as one command line for the session ("exec /bin/sh -c
 * '...'"): it reads the token on its standard input, runs uname -sn once,
 * then forever runs the probe script with that token, prints "TOKEN S",
 * and sleeps interval seconds. The first run is the whole probe but sudo's
 * check; the later ones ask only what can change (PROBE_CHANGING_ONLY).
 * SIGTERM, SIGHUP or SIGINT end it and everything it started. New string.
 */
char *wl_command(double interval, double command_timeout);

/*
 * Where the first complete snapshot of buf ends: returns the offset just
 * past its "TOKEN S\n" line (at the start of buf or of a line), with
 * *body_len the length of what precedes that line; 0 when buf holds no
 * complete snapshot yet.
 */
size_t wl_snapshot_end(const char *token, const char *buf, size_t len, size_t *body_len);

/*
 * Parse one snapshot body (the framed outputs of a probe run) into a new
 * inventory of the host named name. first (may be NULL) keeps the answers
 * of a session's first snapshot: while it is empty, a snapshot that parses
 * fills it; after that, every output a snapshot lacks is taken from it.
 * Returns 0 with *out set (free with jc_host_clear and free), or negative
 * with err filled.
 */
int wl_parse(const char *token, const char *name, const char *body, size_t len,
    struct jc_raw *first, struct jc_host **out, struct jc_err *err);

#endif
