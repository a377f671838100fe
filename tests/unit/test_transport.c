/* SPDX-License-Identifier: MIT */
/*
 * The SSH transport against a real sshd (a simulated host): exit statuses,
 * stdout and stderr kept apart, standard input, a timeout that leaves the
 * session usable, the output cap, a remote signal, streaming with writes and
 * a stop, two sessions in two threads, connect errors. Run by
 * tests/probe/transport.sh, which brings the host up and sets JC_SSH_CONFIG
 * and JC_HOST; skips without them.
 */
#include "config.h"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../tap.h"
#include "launch.h"
#include "transport.h"
#include "util.h"

static struct tr_opts topts;
static const char *host;

struct streamer {
	struct tr_stream *st;
	struct jc_buf got;
	int ticks;
	bool stop_at_ack;
};

static int
stream_data(void *arg, int fd, const char *data, size_t len)
{
	struct streamer *s = arg;

	if (fd == 1)
		buf_append(&s->got, data, len);
	return 0;
}

static void
stream_tick(void *arg)
{
	struct streamer *s = arg;

	s->ticks++;
	if (s->ticks == 1)
		tr_stream_write(s->st, "one\n", 4);
	else if (s->ticks == 2)
		tr_stream_write(s->st, "two\n", 4);
	else if (s->ticks == 3 && !s->stop_at_ack)
		tr_stream_close_stdin(s->st);
	else if (s->stop_at_ack && s->got.len >= 8)
		tr_stream_stop(s->st);
}

struct worker {
	struct tr_session *s;
	int r;
	size_t len;
};

static void *
run_seq(void *arg)
{
	struct worker *w = arg;
	struct tr_result res;
	struct jc_err err;

	w->r = tr_run(w->s, "seq 1 200000", NULL, 0, 30, 0, &res, &err);
	w->len = res.outlen;
	tr_result_clear(&res);
	return NULL;
}

/*
 * The kernel's word on this process's TCP connections to port 22 (the
 * session's socket is libssh's own): how many there are, and how many of
 * them have TCP_NODELAY set.
 */
static void
ssh_sockets(int *n, int *nodelay)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	*n = *nodelay = 0;
	while (d != NULL && (e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name), v = 0;
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss), vl = sizeof(v);

		if (e->d_name[0] == '.' || fd == dirfd(d) ||
		    getpeername(fd, (struct sockaddr *)&ss, &sl) != 0 || ss.ss_family != AF_INET ||
		    ntohs(((struct sockaddr_in *)&ss)->sin_port) != 22)
			continue;
		(*n)++;
		if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &vl) == 0 && v != 0)
			(*nodelay)++;
	}
	if (d != NULL)
		closedir(d);
}

int
main(void)
{
	struct tr_session *s = NULL, *s2 = NULL, *bad = NULL;
	struct tr_result res;
	struct jc_err err = { 0 };
	struct jc_buf in = { 0 };
	int r;

	(void)plan;
	(void)is_int;
	host = getenv("JC_HOST");
	topts.ssh_config = getenv("JC_SSH_CONFIG");
	topts.connect_timeout = 5;
	if (host == NULL || topts.ssh_config == NULL)
		skip_all("needs a simulated host (run by tests/probe/transport.sh)");
	if (tr_global_init() != 0)
		skip_all("libssh does not initialise");

	r = tr_connect(host, NULL, 0, &topts, &s, &err);
	if (!ok(r == 0, "connect to %s", host)) {
		diag("%s", err.msg);
		return done_testing();
	}
	is_str(tr_host(s), host, "the session names its host");
	{
		int n, nd;

		/* Nagle's algorithm off: small packets in a row are not held back */
		ssh_sockets(&n, &nd);
		ok(n == 1 && nd == 1, "the session's TCP connection has TCP_NODELAY (%d of %d)",
		    nd, n);
	}

	r = tr_run(s, "echo out; echo err >&2; exit 3", NULL, 0, 10, 0, &res, &err);
	ok(r == 0 && res.status == 3, "a command that exits 3: run, status 3");
	is_str(res.out, "out\n", "its stdout");
	is_str(res.err, "err\n", "its stderr, apart");
	tr_result_clear(&res);

	for (int i = 0; i < 100000; i++)
		buf_printf(&in, "line %d\n", i);
	r = tr_run(s, "cat", in.data, in.len, 20, 0, &res, &err);
	ok(r == 0 && res.status == 0 && res.outlen == in.len && memcmp(res.out, in.data, in.len) == 0,
	    "standard input of %zu bytes comes back through cat", in.len);
	tr_result_clear(&res);

	r = tr_run(s, "sleep 20", NULL, 0, 0.5, 0, &res, &err);
	ok(r == TR_ETIMEOUT && strstr(err.msg, "timed out") != NULL, "a timeout: %s", err.msg);
	r = tr_run(s, "echo again", NULL, 0, 10, 0, &res, &err);
	ok(r == 0 && strcmp(res.out, "again\n") == 0, "the session still works after a timeout");
	tr_result_clear(&res);

	r = tr_run(s, "head -c 200000 /dev/zero", NULL, 0, 10, 1024, &res, &err);
	ok(r == TR_ETOOBIG && strstr(err.msg, "output larger than 1 KiB") != NULL,
	    "output over the cap is refused: %s", err.msg);
	r = tr_run(s, "kill -TERM $$", NULL, 0, 10, 0, &res, &err);
	if (!ok(r == 0 && res.signal != NULL && strcmp(res.signal, "TERM") == 0,
	    "a command killed by SIGTERM reports the signal"))
		diag("r=%d status=%d signal=%s err=%s", r, res.status, res.signal ? res.signal : "-", r ? err.msg : "");
	tr_result_clear(&res);
	/* OpenSSH's sshd names only RFC 4254's signals; SIGBUS is not one */
	r = tr_run(s, "kill -BUS $$", NULL, 0, 10, 0, &res, &err);
	if (!ok(r == 0 && res.signal != NULL && strcmp(res.signal, "SIG@openssh.com") == 0,
	    "a command killed by SIGBUS: sshd says SIG@openssh.com"))
		diag("r=%d status=%d signal=%s", r, res.status, res.signal ? res.signal : "-");
	{
		struct launch_result lr = { .state = LAUNCH_KILLED, .signal = res.signal };
		char *txt = launch_result_text(&lr);

		ok(strstr(txt, "a signal sshd does not name") != NULL && strstr(txt, "SIGSIG") == NULL,
		    "launch's words for it: %s", txt);
		free(txt);
	}
	tr_result_clear(&res);

	{
		struct streamer sm = { 0 };
		static const struct tr_stream_cbs cbs = { stream_data, stream_tick, NULL };
		int status = -2;

		r = tr_stream_start(s, "cat; echo done", &cbs, &sm, &sm.st, &err);
		ok(r == 0, "a stream starts");
		if (r == 0) {
			r = tr_stream_wait(sm.st, 10, &status, NULL, &err);
			ok(r == 0 && status == 0, "it ends when its stdin is closed, status 0");
			is_str(sm.got.data, "one\ntwo\ndone\n", "the writes came back in order");
			tr_stream_free(sm.st);
		}
		buf_free(&sm.got);

		memset(&sm, 0, sizeof(sm));
		sm.stop_at_ack = true;
		r = tr_stream_start(s, "cat", &cbs, &sm, &sm.st, &err);
		if (r == 0) {
			r = tr_stream_wait(sm.st, 10, &status, NULL, &err);
			ok(r == TR_ESTOPPED, "tr_stream_stop() ends a stream that would run on");
			tr_stream_free(sm.st);
		} else {
			ok(0, "a second stream starts");
		}
		buf_free(&sm.got);
	}

	r = tr_connect(host, NULL, 0, &topts, &s2, &err);
	ok(r == 0, "a second session to the same host");
	if (r == 0) {
		struct worker w1 = { s, -1, 0 }, w2 = { s2, -1, 0 };
		pthread_t t1, t2;

		pthread_create(&t1, NULL, run_seq, &w1);
		pthread_create(&t2, NULL, run_seq, &w2);
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		ok(w1.r == 0 && w2.r == 0 && w1.len == 1288895 && w2.len == 1288895,
		    "two sessions used by two threads at once");
		tr_close(s2);
	}

	r = tr_connect(host, NULL, 1, &topts, &bad, &err);
	ok(r == TR_ECONNECT && tr_unreachable(r) && bad == NULL,
	    "a port where nothing listens: cannot connect (%s)", err.msg);
	r = tr_connect(host, "nosuchuser", 0, &topts, &bad, &err);
	ok(r == TR_EAUTH && tr_unreachable(r), "a user whose keys are not accepted: %s", err.msg);
	topts.ssh_config = "/nonexistent/ssh_config";
	r = tr_connect(host, NULL, 0, &topts, &bad, &err);
	ok(r == TR_ECONFIG && !tr_unreachable(r), "an unreadable -F file: %s", err.msg);

	buf_free(&in);
	tr_close(s);
	tr_global_cleanup();
	return done_testing();
}
