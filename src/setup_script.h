/* SPDX-License-Identifier: MIT */
/*
 * The setup of one host as one remote script (pure: text in, text out).
 *
 * The script runs as the login user: it reads a per-run token (a random
 * word, on its standard input, so it never appears in a command line),
 * runs the read-only queries that capture the host's prior state, each
 * output framed by lines carrying the token, says it is ready, and waits
 * for a line on its standard input. "go" (then the token again) makes it
 * exec one `sudo -n /bin/sh -c '...'` that runs the setup commands, root
 * already, one by one; anything else ends it with nothing changed. Before
 * each command the privileged part says which command it is about to run
 * and waits for "go" again (anything else ends it); after each, it reports
 * the exit status and the standard error, and it ends at the first failed
 * command that may not fail. On its standard output:
 *
 *   TOKEN B K\n OUTPUT \nTOKEN Q K STATUS\n     query K (1-based), stdout and stderr
 *   TOKEN R\n                                  every query done; waits for go
 *   TOKEN S K\n                                command K is next; waits for go
 *   TOKEN E K STATUS\n STDERR \nTOKEN F\n       command K ended
 *
 * Lines outside frames (a login shell's chatter) are skipped. Every word of
 * a command is single-quoted; a leading "sudo" is dropped (the script is
 * root already). The whole script reaches /bin/sh as `exec /bin/sh -c '...'`
 * through the login shell, as the probe's does.
 *
 * Where sudo allows only the commands themselves (a scoped rule, no
 * `sudo -n /bin/sh`), the same script runs its commands part as the login
 * user, `exec /bin/sh -c '...'` instead of `exec sudo -n /bin/sh -c '...'`,
 * and each command that starts with "sudo" runs as `sudo -n PATH ARGS`, PATH
 * the absolute path of its program (the one a sudoers rule names); the
 * frames, the go's and the order are the same.
 */
#ifndef JC_SETUP_SCRIPT_H
#define JC_SETUP_SCRIPT_H

#include "plan.h"
#include "util.h"

/* Length of a token: "jc" and 30 hex digits. */
#define SS_TOKEN_LEN 32

/*
 * The command line that runs the script of queries q[0..nq) (sh command
 * lines) and commands c[0..nc), all under one sudo when paths is NULL, else
 * each command under its own, its program's path from paths (the system's
 * jc_platform_ops.priv_path). New string.
 */
char *setup_script(char *const *q, size_t nq, const struct plan_cmd *c, size_t nc,
    const char *(*paths)(const char *));

/* A word single-quoted for sh. New string. */
char *ss_quote(const char *s);

enum ss_ev_kind {
	SS_QUERY,		/* query k ended: status, text = its output */
	SS_READY,		/* every query ran; the script waits for go */
	SS_START,		/* command k is next; the script waits for go */
	SS_END,			/* command k ended: status, text = its stderr */
};

struct ss_event {
	enum ss_ev_kind kind;
	size_t k;		/* 1-based */
	int status;
	char *text;		/* owned; NUL-terminated; NULL for READY and START */
	size_t len;
};

/* Reads the script's standard output as it comes. */
struct ss_parser {
	char token[SS_TOKEN_LEN + 1];
	struct jc_buf buf;	/* what came and was not consumed */
	size_t pos;		/* consumed bytes of buf */
};

void ss_parser_init(struct ss_parser *p, const char *token);
void ss_parser_clear(struct ss_parser *p);

/* Append a chunk of output. */
void ss_feed(struct ss_parser *p, const char *data, size_t len);

/*
 * The next complete frame: 1 with *ev filled (release with
 * ss_event_clear()), 0 when more output is needed, or negative with err
 * filled when a frame is malformed (bad kind, number or status).
 */
int ss_next(struct ss_parser *p, struct ss_event *ev, struct jc_err *err);

void ss_event_clear(struct ss_event *ev);

/* Bytes held (for a bound on what a host may send). */
size_t ss_pending(const struct ss_parser *p);

#endif
