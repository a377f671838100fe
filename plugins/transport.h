/* SPDX-License-Identifier: MIT */
/*
 * Transport: running commands on the hosts over SSH, with libssh (never by
 * spawning ssh). One session per host; a session may be used by any thread
 * but by one thread at a time, so N hosts are handled by N threads at once.
 * The ssh client configuration is read as ssh reads it (~/.ssh/config, or
 * the file of -F), host keys are checked against known_hosts (an unknown key
 * is refused unless accept_new is set, a changed key is always refused), and
 * authentication uses the agent, the default keys and the configuration's
 * IdentityFile. Every host, 127.0.0.1 included, goes through sshd, the way
 * mlx.distributed_config reaches it: there is no local shortcut, so what
 * runs is exactly what a remote host would run.
 *
 * Errors are negative TR_E* codes with err filled; a command that ran and
 * exited non-zero is not an error (its status is in the result).
 */
#ifndef JC_TRANSPORT_H
#define JC_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "jc.h"
#include "util.h"

/* Error codes (struct jc_err.code and the return values below). */
enum {
	TR_ECONNECT = -1001,	/* no TCP/SSH connection (refused, timeout, DNS) */
	TR_EHOSTKEY = -1002,	/* host key unknown, changed or unreadable */
	TR_EAUTH = -1003,	/* no key was accepted */
	TR_ECHANNEL = -1004,	/* session lost or channel refused mid-way */
	TR_ETIMEOUT = -1005,	/* the command outlived its timeout */
	TR_ETOOBIG = -1006,	/* the output went over the size cap */
	TR_ECONFIG = -1007,	/* ssh configuration file unreadable */
	TR_ESTOPPED = -1008,	/* tr_stream_stop() was called */
};

/* Default bound on what tr_run() collects (stdout + stderr). */
#define TR_DEFAULT_CAP (16u * 1024 * 1024)

/* Connection settings shared by every host. */
struct tr_opts {
	const char *ssh_config;	/* NULL: ~/.ssh/config, then the system file */
	bool accept_new;	/* record unknown host keys (as accept-new) */
	double connect_timeout;	/* seconds; <= 0 means 5 */
};

struct tr_session;

/*
 * Call once, before any thread uses the transport (initialises libssh);
 * tr_global_cleanup() once at the end. Return 0 / negative.
 */
int tr_global_init(void);
void tr_global_cleanup(void);

/*
 * True when an error code means that the host could not be reached or
 * logged into at all (connect, host key, authentication): what mlx calls
 * "Could not ssh".
 */
bool tr_unreachable(int code);

/*
 * Connect to host (a name or address as ssh_config's Host lines match it),
 * as user (NULL: from the configuration, else the local user) on port (0:
 * from the configuration, else 22). Checks the host key and authenticates.
 * Returns 0 with *out set, or TR_ECONFIG / TR_ECONNECT / TR_EHOSTKEY /
 * TR_EAUTH with err naming host. Messages:
 *   "host key for H is not known; add it to known_hosts or pass --accept-new"
 *   "host key for H has changed (now SHA256:...); refusing to connect ..."
 * The session is released with tr_close().
 */
int tr_connect(const char *host, const char *user, int port, const struct tr_opts *o,
    struct tr_session **out, struct jc_err *err);

/* Close and free; NULL is fine. */
void tr_close(struct tr_session *s);

/* The host name given to tr_connect (borrowed). */
const char *tr_host(const struct tr_session *s);

/* What one command produced. */
struct tr_result {
	int status;		/* exit status; -1 when the remote sent none */
	char *signal;		/* "TERM" when killed by a signal, else NULL */
	char *out;		/* stdout, NUL-terminated (out[outlen] == 0) */
	size_t outlen;
	char *err;		/* stderr, NUL-terminated */
	size_t errlen;
	double seconds;		/* wall time from channel open to close */
};

void tr_result_clear(struct tr_result *r);

/*
 * The command line that runs script (a POSIX sh script) with /bin/sh
 * whatever the login shell of the account: sshd hands the line to that
 * shell (`zsh -c LINE` on a Mac, fish, bash, csh ...), and each parses it
 * its own way (zsh aborts on a glob that matches nothing, fish reads \\ and
 * \' inside single quotes). The line is
 *   exec /bin/sh -c 'exec /bin/sh -c "$(printf "FORMAT")"'
 * where FORMAT is script with '%' doubled, a newline as \n and every byte
 * that any of those shells could read differently (quotes, backslash, '$',
 * '`', '!', control and non-ASCII bytes) as a three-digit octal escape: one
 * single-quoted word without a quote or a backslash that a shell would
 * read, so each passes it unchanged to /bin/sh, whose printf rebuilds the
 * script byte for byte and hands it to a /bin/sh -c of its own (standard
 * input untouched; the script's last command is exec'd as before). New
 * string. Every command the SSH transport runs goes through it.
 */
char *tr_sh_command(const char *script);

/*
 * Run command (a POSIX sh script, as tr_sh_command() sends it) with in/inlen on its
 * standard input (in == NULL: empty input, EOF at once). Waits at most
 * timeout seconds (<= 0: no bound) and collects at most cap bytes of
 * stdout + stderr (0: TR_DEFAULT_CAP). Returns 0 when the command ran to its
 * end, whatever its exit status (r filled, free with tr_result_clear()), or
 * TR_ECHANNEL / TR_ETIMEOUT / TR_ETOOBIG with err filled ("output larger
 * than 16 MiB") and r empty. After an error the session may still be used.
 */
int tr_run(struct tr_session *s, const char *command, const char *in, size_t inlen,
    double timeout, size_t cap, struct tr_result *r, struct jc_err *err);

/*
 * Streaming: for long-running remote processes (the launcher's ranks).
 * tr_stream_start() opens a channel and starts command; tr_stream_wait()
 * then runs in one thread, delivering output chunks to the callbacks as
 * they arrive, until the command exits, the timeout passes or someone
 * calls tr_stream_stop(). tr_stream_write(), tr_stream_close_stdin() and
 * tr_stream_stop() may be called from any thread (they queue; the waiting
 * thread acts on them within about 50 ms) and from the callbacks.
 */
struct tr_stream;

struct tr_stream_cbs {
	/*
	 * A chunk of stdout (fd 1) or stderr (fd 2). Called in the thread of
	 * tr_stream_wait(). Return 0 to go on, non-zero to stop the command
	 * (as tr_stream_stop()).
	 */
	int (*on_data)(void *arg, int fd, const char *data, size_t len);
	/* Optional: called at least every 50 ms while waiting. */
	void (*on_tick)(void *arg);
	/*
	 * Optional: asked at least every 50 ms while waiting; non-zero stops
	 * the command (as tr_stream_stop()), even when no output comes.
	 */
	int (*should_stop)(void *arg);
};

/*
 * Start command on s. Returns 0 with *out set, or TR_ECHANNEL with err
 * filled. The stream borrows s until tr_stream_free().
 */
int tr_stream_start(struct tr_session *s, const char *command, const struct tr_stream_cbs *cbs,
    void *arg, struct tr_stream **out, struct jc_err *err);

/* Queue bytes for the remote standard input (copied). */
void tr_stream_write(struct tr_stream *st, const void *data, size_t len);

/* Queue an end of file for the remote standard input. */
void tr_stream_close_stdin(struct tr_stream *st);

/*
 * Ask the command to stop: the remote process gets SIGTERM (when the server
 * supports signals) and the channel is closed. Thread-safe.
 */
void tr_stream_stop(struct tr_stream *st);

/*
 * Deliver output until the command ends. timeout <= 0 waits without bound.
 * Returns 0 when it exited by itself (*status, *signal set as in struct
 * tr_result; *signal is owned by the caller; either pointer may be NULL),
 * TR_ESTOPPED after a stop, TR_ETIMEOUT, or TR_ECHANNEL, with err filled.
 */
int tr_stream_wait(struct tr_stream *st, double timeout, int *status, char **signal,
    struct jc_err *err);

/* Close the channel (stopping the command if it still runs) and free. */
void tr_stream_free(struct tr_stream *st);

/*
 * Transport ops: how commands reach a host, behind one table so that the
 * pipeline (probe, apply, restore, doctor) does not know which one runs.
 * "ssh" is the libssh transport above; "replay" serves a saved probe bundle
 * (it reaches no host: connect fails, saved_raw gives the outputs); tests
 * add a scripted stand-in. Every function returns 0 or a negative TR_E*
 * (or -errno) code with err filled, as tr_run() does.
 */
struct jc_raw;
struct jc_transport;

/* One host reached through a transport. */
struct jc_conn {
	struct jc_transport *t;
	const char *host;	/* the name given to connect (owned by the backend) */
	void *priv;
};

/* The callbacks of a dialog (see jc_transport_ops.dialog). */
struct tp_dialog_cbs {
	/* A chunk of stdout (fd 1) or stderr (fd 2); non-zero: stop. */
	int (*on_data)(void *arg, int fd, const char *data, size_t len, struct jc_buf *reply);
	/* Optional; non-zero: stop. */
	int (*on_tick)(void *arg);
};

struct jc_transport_ops {
	const char *name;	/* "ssh", "replay", ... */
	/* Reach host (user NULL and port 0: from the configuration). */
	int (*connect)(struct jc_transport *t, const char *host, const char *user, int port,
	    struct jc_conn **out, struct jc_err *err);
	/* Run a command to its end, as tr_run(). */
	int (*run)(struct jc_conn *c, const char *command, const char *in, size_t inlen,
	    double timeout, size_t cap, struct tr_result *r, struct jc_err *err);
	/*
	 * Run a command with in on its standard input (then EOF), delivering
	 * its output to cbs as it comes, until it ends (*status set as in
	 * struct tr_result), a callback asks to stop (TR_ESTOPPED) or timeout
	 * passes (TR_ETIMEOUT).
	 */
	int (*stream)(struct jc_conn *c, const char *command, const char *in, size_t inlen,
	    const struct tr_stream_cbs *cbs, void *arg, double timeout, int *status,
	    struct jc_err *err);
	/*
	 * Optional (NULL: the transport cannot): run a command and talk with
	 * it. in[0..inlen) goes to its standard input first, which then stays
	 * open; each chunk of its output goes to cbs->on_data, which may
	 * append to reply what is to be written to the command's standard
	 * input next; cbs->on_tick (optional) is called at least every 50 ms
	 * while the command runs. Ends when the command ends (*status set),
	 * a callback returns non-zero (TR_ESTOPPED) or timeout (<= 0: none)
	 * passes (TR_ETIMEOUT).
	 */
	int (*dialog)(struct jc_conn *c, const char *command, const char *in, size_t inlen,
	    const struct tp_dialog_cbs *cbs, void *arg, double timeout, int *status,
	    struct jc_err *err);
	void (*close)(struct jc_conn *c);
	/*
	 * Transports that hold saved probe outputs instead of reaching hosts
	 * (replay): the raw outputs of host. NULL for the others.
	 */
	int (*saved_raw)(struct jc_transport *t, const char *host, struct jc_raw *raw,
	    struct jc_err *err);
	void (*free)(struct jc_transport *t);
};

struct jc_transport {
	const struct jc_transport_ops *ops;
	void *priv;
};

/* The libssh transport with o (copied; tr_global_init() is the caller's). */
struct jc_transport *transport_ssh_new(const struct tr_opts *o);

/* The replay transport of the bundle in dir (copied). */
struct jc_transport *transport_replay_new(const char *dir);

/* transport_replay_new(from) when from is set, else transport_ssh_new(o). */
struct jc_transport *transport_default(const struct tr_opts *o, const char *from);

void transport_free(struct jc_transport *t);

/* Shorthands for the ops (close accepts NULL). */
int tp_connect(struct jc_transport *t, const char *host, const char *user, int port,
    struct jc_conn **out, struct jc_err *err);
int tp_run(struct jc_conn *c, const char *command, const char *in, size_t inlen, double timeout,
    size_t cap, struct tr_result *r, struct jc_err *err);
int tp_stream(struct jc_conn *c, const char *command, const char *in, size_t inlen,
    const struct tr_stream_cbs *cbs, void *arg, double timeout, int *status,
    struct jc_err *err);
/* The dialog op, or -ENOTSUP with err filled when the transport has none. */
int tp_dialog(struct jc_conn *c, const char *command, const char *in, size_t inlen,
    const struct tp_dialog_cbs *cbs, void *arg, double timeout, int *status,
    struct jc_err *err);
void tp_close(struct jc_conn *c);

/*
 * The hint for a connection from this client to addr (an IP literal) that
 * failed with EHOSTUNREACH ("No route to host"), or NULL when none applies.
 * macOS 15 and later (Darwin 24) give a program started from an app that
 * was not allowed Local Network access that error for every address of the
 * local network, so the hint applies only when sysname is "Darwin", the
 * major of release is 24 or more and addr is private or link-local (IPv4
 * 10/8, 172.16/12, 192.168/16, 169.254/16; IPv6 fe80::/10, fc00::/7). It
 * names the app to allow, from term_program (the terminal's TERM_PROGRAM:
 * iTerm.app, ghostty, vscode ...; NULL when unset); Terminal.app
 * ("Apple_Terminal") needs no permission, so then there is none. Pure:
 * the text is written to buf (len bytes) and buf returned.
 */
const char *tr_lan_hint(const char *addr, const char *sysname, const char *release,
    const char *term_program, char *buf, size_t len);

#endif
