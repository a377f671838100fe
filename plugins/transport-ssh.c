/* SPDX-License-Identifier: MIT */
/*
 * The SSH transport, on libssh: configuration as ssh reads it, host key
 * checking against known_hosts (accept-new on request, changed keys always
 * refused), public key authentication through the agent and the identity
 * files, and commands run on channels with their stdout, stderr and exit
 * status kept apart. One session per host, one thread per session at a time.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include "transport.h"
#include "util.h"

#define TR_SLICE_MS 50

struct tr_session {
	ssh_session ssh;
	char *host;
	/*
	 * Channel callbacks live in the session, not in a stream: libssh keeps
	 * a channel we closed until the server's close arrives and may call
	 * them then, after the stream is gone.
	 */
	struct ssh_channel_callbacks_struct chcb;
	ssh_channel current;	/* the stream's channel, or NULL */
	char *exit_signal;	/* its exit signal, if one came */
};

/*
 * How long a server that accepted the login may take to open a channel
 * (seconds): far more than a loaded host needs, unlike the connect timeout
 * a user may set low.
 */
#define OPEN_TIMEOUT 60

struct tr_stream {
	struct tr_session *s;
	ssh_channel ch;
	struct tr_stream_cbs cbs;
	void *arg;
	double started;

	pthread_mutex_t mu;	/* guards the fields below */
	struct jc_buf inq;	/* bytes queued for the remote stdin */
	bool eof_requested;
	bool stop_requested;
	bool eof_sent;
};

/* known_hosts is one file that several hosts' threads may append to */
static pthread_mutex_t known_hosts_mu = PTHREAD_MUTEX_INITIALIZER;

int
tr_global_init(void)
{
	return ssh_init() == 0 ? 0 : -1;
}

void
tr_global_cleanup(void)
{
	ssh_finalize();
}

bool
tr_unreachable(int code)
{
	return code == TR_ECONNECT || code == TR_EHOSTKEY || code == TR_EAUTH;
}

const char *
tr_host(const struct tr_session *s)
{
	return s->host;
}

static void on_exit_signal(ssh_session session, ssh_channel channel, const char *signal,
    int core, const char *errmsg, const char *lang, void *userdata);

static char *
server_fingerprint(ssh_session ssh)
{
	ssh_key key = NULL;
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *fp, *ret;

	if (ssh_get_server_publickey(ssh, &key) != SSH_OK)
		return xstrdup("unknown fingerprint");
	if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) != 0) {
		ssh_key_free(key);
		return xstrdup("unknown fingerprint");
	}
	fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
	ret = xasprintf("%s %s", ssh_key_type_to_char(ssh_key_type(key)), fp ? fp : "?");
	ssh_string_free_char(fp);
	ssh_clean_pubkey_hash(&hash);
	ssh_key_free(key);
	return ret;
}

static int
check_host_key(ssh_session ssh, const char *host, const struct tr_opts *o, struct jc_err *err)
{
	enum ssh_known_hosts_e state = ssh_session_is_known_server(ssh);
	char *fp;
	int r;

	switch (state) {
	case SSH_KNOWN_HOSTS_OK:
		return 0;
	case SSH_KNOWN_HOSTS_CHANGED:
	case SSH_KNOWN_HOSTS_OTHER:
		fp = server_fingerprint(ssh);
		r = jc_fail(err, TR_EHOSTKEY,
		    "host key for %s has %s (now %s); refusing to connect: if the change is expected, "
		    "remove the old key from known_hosts (ssh-keygen -R %s)", host,
		    state == SSH_KNOWN_HOSTS_CHANGED ? "changed" : "changed type", fp, host);
		free(fp);
		return r;
	case SSH_KNOWN_HOSTS_NOT_FOUND:
	case SSH_KNOWN_HOSTS_UNKNOWN:
		if (!o->accept_new)
			return jc_fail(err, TR_EHOSTKEY,
			    "host key for %s is not known; add it to known_hosts or pass --accept-new",
			    host);
		pthread_mutex_lock(&known_hosts_mu);
		r = ssh_session_update_known_hosts(ssh);
		pthread_mutex_unlock(&known_hosts_mu);
		if (r != SSH_OK)
			return jc_fail(err, TR_EHOSTKEY, "cannot record the host key of %s: %s",
			    host, ssh_get_error(ssh));
		return 0;
	case SSH_KNOWN_HOSTS_ERROR:
	default:
		return jc_fail(err, TR_EHOSTKEY, "cannot check the host key of %s: %s", host,
		    ssh_get_error(ssh));
	}
}

/*
 * EHOSTUNREACH: the hint of tr_lan_hint() for the address ssh tried (its
 * HostName, resolved when it is a name), this system and its terminal.
 */
static const char *
lan_hint(ssh_session ssh, char *buf, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	char addr[INET6_ADDRSTRLEN] = "", *name = NULL;
	const char *h = NULL;
	struct utsname u;

	if (uname(&u) != 0 || ssh_options_get(ssh, SSH_OPTIONS_HOST, &name) != SSH_OK)
		return NULL;
	if (getaddrinfo(name, NULL, &hints, &ai) == 0 && ai != NULL)
		getnameinfo(ai->ai_addr, ai->ai_addrlen, addr, sizeof(addr), NULL, 0,
		    NI_NUMERICHOST);
	if (ai != NULL)
		freeaddrinfo(ai);
	ssh_string_free_char(name);
	if (addr[0] != '\0')
		h = tr_lan_hint(addr, u.sysname, u.release, getenv("TERM_PROGRAM"), buf, len);
	return h;
}

int
tr_connect(const char *host, const char *user, int port, const struct tr_opts *o,
    struct tr_session **out, struct jc_err *err)
{
	ssh_session ssh;
	double t = o->connect_timeout > 0 ? o->connect_timeout : 5;
	long sec = (long)t, usec = (long)((t - (double)sec) * 1e6);
	int nodelay = 1, r;

	*out = NULL;
	if (o->ssh_config != NULL && access(o->ssh_config, R_OK) != 0)
		return jc_fail(err, TR_ECONFIG, "cannot read ssh configuration %s: %s",
		    o->ssh_config, strerror(errno));
	ssh = ssh_new();
	if (ssh == NULL)
		return jc_fail(err, TR_ECONNECT, "%s: cannot create an ssh session", host);
	if (ssh_options_set(ssh, SSH_OPTIONS_HOST, host) < 0 ||
	    ssh_options_parse_config(ssh, o->ssh_config) < 0) {
		r = jc_fail(err, TR_ECONFIG, "ssh configuration for %s: %s", host,
		    ssh_get_error(ssh));
		ssh_free(ssh);
		return r;
	}
	/* the command line wins over the configuration, as with ssh */
	if (user != NULL)
		ssh_options_set(ssh, SSH_OPTIONS_USER, user);
	if (port > 0) {
		unsigned int p = (unsigned int)port;

		ssh_options_set(ssh, SSH_OPTIONS_PORT, &p);
	}
	ssh_options_set(ssh, SSH_OPTIONS_TIMEOUT, &sec);
	ssh_options_set(ssh, SSH_OPTIONS_TIMEOUT_USEC, &usec);
	/*
	 * Without TCP_NODELAY, two small packets in a row (KEXINIT then
	 * the key exchange, NEWKEYS then the service request) leave the
	 * second one waiting for the peer's delayed ACK: ~40 ms each, most
	 * of a connection's time on a fast network.
	 */
	ssh_options_set(ssh, SSH_OPTIONS_NODELAY, &nodelay);

	if (ssh_connect(ssh) != SSH_OK) {
		char hint[512];
		const char *h = strstr(ssh_get_error(ssh), "No route to host") != NULL ?
		    lan_hint(ssh, hint, sizeof(hint)) : NULL;

		r = jc_fail(err, TR_ECONNECT, "cannot connect to %s: %s%s%s", host,
		    ssh_get_error(ssh), h ? ": " : "", h ? h : "");
		ssh_free(ssh);
		return r;
	}
	if ((r = check_host_key(ssh, host, o, err)) != 0) {
		ssh_disconnect(ssh);
		ssh_free(ssh);
		return r;
	}
	if (ssh_userauth_publickey_auto(ssh, NULL, NULL) != SSH_AUTH_SUCCESS) {
		char *u = NULL;

		ssh_options_get(ssh, SSH_OPTIONS_USER, &u);
		r = jc_fail(err, TR_EAUTH,
		    "permission denied for %s@%s: no key of the agent or the identity files was accepted",
		    u ? u : "?", host);
		ssh_string_free_char(u);
		ssh_disconnect(ssh);
		ssh_free(ssh);
		return r;
	}
	*out = xcalloc(1, sizeof(**out));
	(*out)->ssh = ssh;
	(*out)->host = xstrdup(host);
	(*out)->chcb.userdata = *out;
	(*out)->chcb.channel_exit_signal_function = on_exit_signal;
	ssh_callbacks_init(&(*out)->chcb);
	return 0;
}

void
tr_close(struct tr_session *s)
{
	if (s == NULL)
		return;
	ssh_disconnect(s->ssh);
	ssh_free(s->ssh);
	free(s->host);
	free(s->exit_signal);
	free(s);
}

void
tr_result_clear(struct tr_result *r)
{
	free(r->signal);
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

/* streams */

static void
on_exit_signal(ssh_session session, ssh_channel channel, const char *signal, int core,
    const char *errmsg, const char *lang, void *userdata)
{
	struct tr_session *s = userdata;

	if (channel != s->current)
		return;
	free(s->exit_signal);
	s->exit_signal = xstrdup(signal);
}

/*
 * Ask the kernel to acknowledge what arrives at once (Linux; a no-op where
 * there is no TCP_QUICKACK). OpenSSH's sshd writes what follows a request
 * (after authentication: host keys, debug lines, then the channel's
 * confirmation) one small write at a time with Nagle's algorithm on: each
 * write waits until we acknowledge the one before, and a client that only
 * waits delays its acknowledgements (~40 ms each on Linux). The kernel
 * leaves quick-ack mode by itself, so this is asked again before each wait.
 */
static void
ack_at_once(struct tr_session *s)
{
#ifdef TCP_QUICKACK
	int one = 1;

	(void)setsockopt(ssh_get_fd(s->ssh), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
#else
	(void)s;
#endif
}

/*
 * Open a session channel: libssh's own wait, in steps, so that each wait
 * acknowledges at once. Returns NULL, or why it failed.
 */
static const char *
open_session(struct tr_session *s, ssh_channel ch)
{
	const char *why = NULL;
	double deadline = jc_now() + OPEN_TIMEOUT;
	int r;

	ssh_set_blocking(s->ssh, 0);
	while ((r = ssh_channel_open_session(ch)) == SSH_AGAIN) {
		struct pollfd p = { .fd = ssh_get_fd(s->ssh), .events = POLLIN };
		double left = deadline - jc_now();

		if (left <= 0) {
			why = "the server did not open a channel in time";
			break;
		}
		ack_at_once(s);
		if (poll(&p, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR) {
			why = strerror(errno);
			break;
		}
		ack_at_once(s);
	}
	ssh_set_blocking(s->ssh, 1);
	if (why == NULL && r != SSH_OK)
		why = ssh_get_error(s->ssh);
	return why;
}

int
tr_stream_start(struct tr_session *s, const char *command, const struct tr_stream_cbs *cbs,
    void *arg, struct tr_stream **out, struct jc_err *err)
{
	struct tr_stream *st;
	const char *why = NULL;
	char *line;
	int r;

	*out = NULL;
	st = xcalloc(1, sizeof(*st));
	st->s = s;
	if (cbs != NULL)
		st->cbs = *cbs;
	st->arg = arg;
	pthread_mutex_init(&st->mu, NULL);
	st->started = jc_now();
	st->ch = ssh_channel_new(s->ssh);
	if (st->ch == NULL)
		goto fail;
	s->current = st->ch;
	free(s->exit_signal);
	s->exit_signal = NULL;
	ssh_set_channel_callbacks(st->ch, &s->chcb);
	if ((why = open_session(s, st->ch)) != NULL)
		goto fail;
	/* whatever the login shell, /bin/sh runs the script */
	line = tr_sh_command(command);
	r = ssh_channel_request_exec(st->ch, line);
	free(line);
	if (r != SSH_OK)
		goto fail;
	*out = st;
	return 0;
fail:
	jc_fail(err, TR_ECHANNEL, "%s: cannot start a remote command: %s", s->host,
	    why != NULL ? why : ssh_get_error(s->ssh));
	tr_stream_free(st);
	return TR_ECHANNEL;
}

void
tr_stream_write(struct tr_stream *st, const void *data, size_t len)
{
	pthread_mutex_lock(&st->mu);
	buf_append(&st->inq, data, len);
	pthread_mutex_unlock(&st->mu);
}

void
tr_stream_close_stdin(struct tr_stream *st)
{
	pthread_mutex_lock(&st->mu);
	st->eof_requested = true;
	pthread_mutex_unlock(&st->mu);
}

void
tr_stream_stop(struct tr_stream *st)
{
	pthread_mutex_lock(&st->mu);
	st->stop_requested = true;
	pthread_mutex_unlock(&st->mu);
}

/* Send what is queued for stdin. Returns 0 or TR_ECHANNEL. */
static int
flush_stdin(struct tr_stream *st, struct jc_err *err)
{
	struct jc_buf b = { 0 };
	bool eof;

	pthread_mutex_lock(&st->mu);
	if (st->inq.len > 0) {
		b = st->inq;
		memset(&st->inq, 0, sizeof(st->inq));
	}
	eof = st->eof_requested && !st->eof_sent;
	pthread_mutex_unlock(&st->mu);

	for (size_t off = 0; off < b.len;) {
		size_t chunk = b.len - off > 32768 ? 32768 : b.len - off;
		int n = ssh_channel_write(st->ch, b.data + off, (uint32_t)chunk);

		if (n <= 0) {
			buf_free(&b);
			return jc_fail(err, TR_ECHANNEL, "%s: cannot write to the remote command: %s",
			    st->s->host, ssh_get_error(st->s->ssh));
		}
		off += (size_t)n;
	}
	buf_free(&b);
	if (eof) {
		ssh_channel_send_eof(st->ch);
		st->eof_sent = true;
	}
	return 0;
}

/* Deliver everything buffered. Returns 1 when a callback asked to stop. */
static int
drain(struct tr_stream *st, int *failed)
{
	char buf[32768];
	int stop = 0;

	for (int is_stderr = 0; is_stderr <= 1; is_stderr++) {
		int n;

		while ((n = ssh_channel_read_nonblocking(st->ch, buf, sizeof(buf), is_stderr)) > 0)
			if (st->cbs.on_data != NULL &&
			    st->cbs.on_data(st->arg, is_stderr ? 2 : 1, buf, (size_t)n) != 0)
				stop = 1;
		if (n == SSH_ERROR)
			*failed = 1;
	}
	return stop;
}

static void
kill_remote(struct tr_stream *st)
{
	if (st->ch == NULL)
		return;
	if (ssh_channel_is_open(st->ch)) {
		ssh_channel_request_send_signal(st->ch, "TERM");
		ssh_channel_close(st->ch);
	}
}

int
tr_stream_wait(struct tr_stream *st, double timeout, int *status, char **signal,
    struct jc_err *err)
{
	double deadline = timeout > 0 ? jc_now() + timeout : 0;
	int failed = 0, r;

	if (status)
		*status = -1;
	if (signal)
		*signal = NULL;
	for (;;) {
		bool stop;

		if ((r = flush_stdin(st, err)) != 0) {
			kill_remote(st);
			return r;
		}
		pthread_mutex_lock(&st->mu);
		stop = st->stop_requested;
		pthread_mutex_unlock(&st->mu);
		if (stop) {
			kill_remote(st);
			return jc_fail(err, TR_ESTOPPED, "%s: remote command stopped", st->s->host);
		}
		r = ssh_channel_poll_timeout(st->ch, TR_SLICE_MS, 0);
		if (r == SSH_ERROR)
			failed = 1;
		if (drain(st, &failed))
			tr_stream_stop(st);
		if (failed) {
			kill_remote(st);
			return jc_fail(err, TR_ECHANNEL, "%s: connection lost: %s", st->s->host,
			    ssh_get_error(st->s->ssh));
		}
		if (ssh_channel_is_eof(st->ch) || ssh_channel_is_closed(st->ch))
			break;
		if (st->cbs.on_tick != NULL)
			st->cbs.on_tick(st->arg);
		if (st->cbs.should_stop != NULL && st->cbs.should_stop(st->arg))
			tr_stream_stop(st);
		if (deadline > 0 && jc_now() > deadline) {
			kill_remote(st);
			return jc_fail(err, TR_ETIMEOUT, "%s: remote command timed out after %g s",
			    st->s->host, timeout);
		}
	}
	r = ssh_channel_get_exit_status(st->ch);
	/* what came with the end of the command may still be refused (over a cap) */
	if (drain(st, &failed))
		return jc_fail(err, TR_ESTOPPED, "%s: remote command stopped", st->s->host);
	if (status)
		*status = r;
	if (signal && st->s->exit_signal) {
		*signal = st->s->exit_signal;
		st->s->exit_signal = NULL;
	}
	return 0;
}

void
tr_stream_free(struct tr_stream *st)
{
	if (st == NULL)
		return;
	if (st->ch != NULL) {
		if (ssh_channel_is_open(st->ch) && !ssh_channel_is_eof(st->ch))
			ssh_channel_request_send_signal(st->ch, "TERM");
		ssh_channel_close(st->ch);
		ssh_channel_free(st->ch);
	}
	if (st->s->current == st->ch)
		st->s->current = NULL;
	buf_free(&st->inq);
	pthread_mutex_destroy(&st->mu);
	free(st);
}

/* tr_run: a stream whose output is collected */

struct collect {
	struct jc_buf out, err;
	size_t cap;
	bool over;
};

static int
collect_data(void *arg, int fd, const char *data, size_t len)
{
	struct collect *c = arg;

	if (c->out.len + c->err.len + len > c->cap) {
		c->over = true;
		return 1;
	}
	buf_append(fd == 2 ? &c->err : &c->out, data, len);
	return 0;
}

static void
human_size(char *buf, size_t n, size_t bytes)
{
	if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0)
		snprintf(buf, n, "%zu MiB", bytes / (1024 * 1024));
	else if (bytes >= 1024 && bytes % 1024 == 0)
		snprintf(buf, n, "%zu KiB", bytes / 1024);
	else
		snprintf(buf, n, "%zu bytes", bytes);
}

int
tr_run(struct tr_session *s, const char *command, const char *in, size_t inlen,
    double timeout, size_t cap, struct tr_result *res, struct jc_err *err)
{
	static const struct tr_stream_cbs cbs = { collect_data, NULL, NULL };
	struct collect c = { .cap = cap ? cap : TR_DEFAULT_CAP };
	struct tr_stream *st;
	double t0 = jc_now();
	int r;

	memset(res, 0, sizeof(*res));
	if ((r = tr_stream_start(s, command, &cbs, &c, &st, err)) != 0)
		return r;
	if (in != NULL && inlen > 0)
		tr_stream_write(st, in, inlen);
	tr_stream_close_stdin(st);
	r = tr_stream_wait(st, timeout, &res->status, &res->signal, err);
	tr_stream_free(st);
	if (r == TR_ESTOPPED && c.over) {
		char size[32];

		human_size(size, sizeof(size), c.cap);
		r = jc_fail(err, TR_ETOOBIG, "%s: output larger than %s: refused", s->host, size);
	}
	if (r != 0) {
		buf_free(&c.out);
		buf_free(&c.err);
		free(res->signal);
		memset(res, 0, sizeof(*res));
		return r;
	}
	if (c.out.data == NULL)
		buf_puts(&c.out, "");
	if (c.err.data == NULL)
		buf_puts(&c.err, "");
	res->outlen = c.out.len;
	res->out = buf_steal(&c.out);
	res->errlen = c.err.len;
	res->err = buf_steal(&c.err);
	res->seconds = jc_now() - t0;
	return 0;
}

/* ---- the transport ops of ssh ---- */

static int
ssh_op_connect(struct jc_transport *t, const char *host, const char *user, int port,
    struct jc_conn **out, struct jc_err *err)
{
	struct tr_session *s = NULL;
	int r = tr_connect(host, user, port, t->priv, &s, err);

	*out = NULL;
	if (r != 0)
		return r;
	*out = xcalloc(1, sizeof(**out));
	(*out)->t = t;
	(*out)->host = tr_host(s);
	(*out)->priv = s;
	return 0;
}

static int
ssh_op_run(struct jc_conn *c, const char *command, const char *in, size_t inlen, double timeout,
    size_t cap, struct tr_result *r, struct jc_err *err)
{
	return tr_run(c->priv, command, in, inlen, timeout, cap, r, err);
}

static int
ssh_op_stream(struct jc_conn *c, const char *command, const char *in, size_t inlen,
    const struct tr_stream_cbs *cbs, void *arg, double timeout, int *status,
    struct jc_err *err)
{
	struct tr_stream *st = NULL;
	int r = tr_stream_start(c->priv, command, cbs, arg, &st, err);

	if (r == 0) {
		if (inlen > 0)
			tr_stream_write(st, in, inlen);
		tr_stream_close_stdin(st);
		r = tr_stream_wait(st, timeout, status, NULL, err);
	}
	tr_stream_free(st);
	return r;
}

/* A dialog: the stream's callbacks, with what they reply written to stdin. */
struct ssh_dialog {
	const struct tp_dialog_cbs *cbs;
	void *arg;
	struct tr_stream *st;
};

static int
dialog_data(void *arg, int fd, const char *data, size_t len)
{
	struct ssh_dialog *d = arg;
	struct jc_buf reply = { 0 };
	int r = d->cbs->on_data(d->arg, fd, data, len, &reply);

	if (reply.len > 0)
		tr_stream_write(d->st, reply.data, reply.len);
	buf_free(&reply);
	return r;
}

static void
dialog_tick(void *arg)
{
	struct ssh_dialog *d = arg;

	if (d->cbs->on_tick != NULL && d->cbs->on_tick(d->arg) != 0)
		tr_stream_stop(d->st);
}

static int
ssh_op_dialog(struct jc_conn *c, const char *command, const char *in, size_t inlen,
    const struct tp_dialog_cbs *cbs, void *arg, double timeout, int *status,
    struct jc_err *err)
{
	static const struct tr_stream_cbs scbs = { dialog_data, dialog_tick, NULL };
	struct ssh_dialog d = { cbs, arg, NULL };
	int r = tr_stream_start(c->priv, command, &scbs, &d, &d.st, err);

	if (r == 0) {
		if (inlen > 0)
			tr_stream_write(d.st, in, inlen);
		r = tr_stream_wait(d.st, timeout, status, NULL, err);
	}
	tr_stream_free(d.st);
	return r;
}

static void
ssh_op_close(struct jc_conn *c)
{
	tr_close(c->priv);
	free(c);
}

static void
ssh_op_free(struct jc_transport *t)
{
	free(t->priv);
	free(t);
}

static const struct jc_transport_ops ssh_ops = {
	.name = "ssh",
	.connect = ssh_op_connect,
	.run = ssh_op_run,
	.stream = ssh_op_stream,
	.dialog = ssh_op_dialog,
	.close = ssh_op_close,
	.free = ssh_op_free,
};

struct jc_transport *
transport_ssh_new(const struct tr_opts *o)
{
	struct jc_transport *t = xcalloc(1, sizeof(*t));
	struct tr_opts *copy = xcalloc(1, sizeof(*copy));

	*copy = *o;
	t->ops = &ssh_ops;
	t->priv = copy;
	return t;
}
