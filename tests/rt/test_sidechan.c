/* SPDX-License-Identifier: MIT */
/*
 * Side channels with real processes: N ranks on 127.0.0.1 (tcp), in a
 * temporary directory (file, and the same channel loaded as a plugin) and
 * over pipes through the relay (ssh); plus the failures: a rank that never
 * starts, a plugin with the wrong ABI or without the symbol.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tap.h"
#include "rt_relay.h"
#include "rt_sc.h"
#include "util.h"

static const size_t sizes[] = { 4, 1, 1000, 1 << 20, 0, 32 };

static unsigned char
pat(int rank, size_t round, size_t i)
{
	return (unsigned char)(rank * 31 + round * 7 + i);
}

/* One rank: gather blocks of several sizes and check them. Exit status 0 when right. */
static int
rank_main(const char *spec, const char *coord, int rank, int size, double timeout,
    int rounds, int errfd)
{
	struct rt_sc *sc = NULL;
	struct jc_err err = { 0 };
	int bad = 0;

	if (rt_sc_open(&sc, spec, coord, rank, size, timeout, &err) < 0)
		goto fail;
	for (int k = 0; k < rounds; k++) {
		size_t n = sizes[k % JC_ARRAY_LEN(sizes)];
		unsigned char *src = xmalloc(n + 1), *dst = xmalloc(n * (size_t)size + 1);

		for (size_t i = 0; i < n; i++)
			src[i] = pat(rank, (size_t)k, i);
		if (rt_sc_all_gather(sc, src, n, dst, &err) < 0) {
			free(src);
			free(dst);
			goto fail;
		}
		for (int r = 0; r < size; r++)
			for (size_t i = 0; i < n; i++)
				bad += dst[(size_t)r * n + i] != pat(r, (size_t)k, i);
		free(src);
		free(dst);
	}
	if (rt_sc_barrier(sc, &err) < 0)
		goto fail;
	rt_sc_close(sc);
	return bad ? 3 : 0;
fail:
	if (errfd >= 0)
		(void)!write(errfd, err.msg, strlen(err.msg));
	rt_sc_close(sc);
	return 2;
}

struct run {
	pid_t pid[8];
	int errp[8][2];
	char msg[8][1024];
	int status[8];
};

static void
start(struct run *R, int r, const char *spec, const char *coord, int size,
    double timeout, int rounds)
{
	if (pipe(R->errp[r]) < 0)
		abort();
	R->pid[r] = fork();
	if (R->pid[r] == 0) {
		close(R->errp[r][0]);
		_exit(rank_main(spec, coord, r, size, timeout, rounds, R->errp[r][1]));
	}
	close(R->errp[r][1]);
}

static void
finish(struct run *R, int r)
{
	ssize_t k;
	int st;

	memset(R->msg[r], 0, sizeof(R->msg[r]));
	k = read(R->errp[r][0], R->msg[r], sizeof(R->msg[r]) - 1);
	(void)k;
	close(R->errp[r][0]);
	waitpid(R->pid[r], &st, 0);
	R->status[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int
free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		abort();
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static void
run_all(const char *what, const char *spec, const char *coord, int size)
{
	struct run R;
	int good = 1;

	for (int r = size - 1; r >= 0; r--)	/* the coordinator starts last */
		start(&R, r, spec, coord, size, 20, (int)JC_ARRAY_LEN(sizes));
	for (int r = 0; r < size; r++) {
		finish(&R, r);
		if (R.status[r] != 0) {
			good = 0;
			diag("%s rank %d: status %d: %s", what, r, R.status[r], R.msg[r]);
		}
	}
	ok(good, "%s: %d ranks gathered every size", what, size);
}

/*
 * A connection to the coordinator on 127.0.0.1:port that is not a rank:
 * it sends the n bytes of data (none: it only connects), then closes.
 * Retried until the coordinator listens (its listen is the event).
 */
static int
stray(int port, const void *data, size_t n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < 2000; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			int w = n == 0 || write(fd, data, n) == (ssize_t)n;

			close(fd);
			return w ? 0 : -1;
		}
		if (fd >= 0)
			close(fd);
		usleep(10000);
	}
	return -1;
}

static char *
make_dir(void)
{
	char tmpl[] = "/tmp/rtscXXXXXX";

	if (mkdtemp(tmpl) == NULL)
		abort();
	return xstrdup(tmpl);
}

static void
rm_dir(char *d)
{
	char *cmd[] = { "rm", "-rf", d, NULL };
	pid_t p = fork();

	if (p == 0) {
		execvp("rm", cmd);
		_exit(127);
	}
	waitpid(p, NULL, 0);
	free(d);
}

/* ---- ssh: ranks talk through pipes, the relay runs here ---- */

struct text {
	struct jc_buf b[4];
};

static void
collect(void *arg, size_t rank, const char *data, size_t len)
{
	struct text *t = arg;

	buf_append(&t->b[rank], data, len);
}

static int
relay_ranks(int size, int quitter, struct text *t, struct jc_err *err, int *status)
{
	int from[4], to[4], rc;
	pid_t pid[4];

	for (int r = 0; r < size; r++) {
		int in[2], out[2];

		if (pipe(in) < 0 || pipe(out) < 0)
			abort();
		pid[r] = fork();
		if (pid[r] == 0) {
			for (int q = 0; q < r; q++) {
				close(from[q]);
				close(to[q]);
			}
			dup2(in[0], 0);
			dup2(out[1], 1);
			close(in[0]);
			close(in[1]);
			close(out[0]);
			close(out[1]);
			printf("hello from %d\n", r);
			if (r == quitter)
				_exit(0);
			rc = rank_main("ssh", NULL, r, size, 5, (int)JC_ARRAY_LEN(sizes), 2);
			printf("bye from %d\n", r);
			fflush(stdout);
			_exit(rc);
		}
		close(in[0]);
		close(out[1]);
		to[r] = in[1];
		from[r] = out[0];
	}
	rc = rt_relay_run((size_t)size, from, to, collect, t, 3, err);
	for (int r = 0; r < size; r++) {
		int st;

		close(from[r]);
		close(to[r]);
		waitpid(pid[r], &st, 0);
		status[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	return rc;
}

int
main(void)
{
	char coord[64], *dir, *spec;
	const char *top = getenv("top_builddir");
	struct run R;
	struct jc_err err = { 0 };
	struct rt_sc *sc;
	struct text t;
	int status[4], rc;

	signal(SIGPIPE, SIG_IGN);
	/* tcp star on loopback */
	snprintf(coord, sizeof(coord), "127.0.0.1:%d", free_port());
	run_all("tcp", "tcp", coord, 3);
	snprintf(coord, sizeof(coord), "127.0.0.1:%d", free_port());
	spec = xasprintf("tcp=%s", coord);
	run_all("tcp=ADDR", spec, NULL, 4);
	free(spec);

	/*
	 * Connections to the coordinator that are not ranks (a port scan, a
	 * connection attempt of another program that arrives late): closed and
	 * ignored, the ranks still gather.
	 */
	{
		int port = free_port();
		int32_t bad = 99;
		int good = 1;

		snprintf(coord, sizeof(coord), "127.0.0.1:%d", port);
		start(&R, 0, "tcp", coord, 3, 20, 1);
		ok(stray(port, NULL, 0) == 0 && stray(port, &bad, sizeof(bad)) == 0 &&
		    stray(port, "x", 1) == 0, "tcp: three stray connections reach the coordinator");
		start(&R, 1, "tcp", coord, 3, 20, 1);
		start(&R, 2, "tcp", coord, 3, 20, 1);
		for (int r = 0; r < 3; r++) {
			finish(&R, r);
			if (R.status[r] != 0) {
				good = 0;
				diag("rank %d: status %d: %s", r, R.status[r], R.msg[r]);
			}
		}
		ok(good, "tcp: ... they are ignored and the three ranks gather");
	}

	/* rank 2 never starts: rank 0 says so within 1.5 times the bound, rank 1 fails too */
	snprintf(coord, sizeof(coord), "127.0.0.1:%d", free_port());
	start(&R, 0, "tcp", coord, 3, 1.5, 1);
	start(&R, 1, "tcp", coord, 3, 1.5, 1);
	finish(&R, 0);
	finish(&R, 1);
	ok(R.status[0] == 2 && strstr(R.msg[0], "1 rank(s) did not connect to the "
	    "coordinator within 2.25 s") != NULL, "tcp: missing rank reported by rank 0");
	diag("%s", R.msg[0]);
	ok(R.status[1] == 2 && strstr(R.msg[1], "rank 0") != NULL,
	    "tcp: rank 1 fails when the coordinator gives up");
	diag("%s", R.msg[1]);
	ok(rt_sc_open(&sc, "tcp", NULL, 1, 2, 1, &err) < 0 && sc == NULL &&
	    strstr(err.msg, "MLX_JACCL_COORDINATOR") && strstr(err.msg, "--side-channel"),
	    "tcp without a coordinator: both fixes named");
	ok(rt_sc_open(&sc, "tcp", "fe80::1:80", 1, 2, 1, &err) < 0 &&
	    strstr(err.msg, "Can't parse address fe80::1:80"), "IPv6 rejected as JACCL does");
	ok(rt_sc_open(&sc, "smoke", NULL, 1, 2, 1, &err) < 0 &&
	    strstr(err.msg, "unknown side channel"), "unknown channel");

	/* file */
	dir = make_dir();
	spec = xasprintf("file=%s", dir);
	run_all("file", spec, NULL, 3);
	free(spec);
	rm_dir(dir);
	ok(rt_sc_open(&sc, "file", NULL, 1, 2, 1, &err) < 0 &&
	    strstr(err.msg, "needs a directory"), "file without a directory");
	dir = make_dir();
	spec = xasprintf("file=%s", dir);
	start(&R, 0, spec, NULL, 2, 1, 1);
	finish(&R, 0);
	ok(R.status[0] == 2 && strstr(R.msg[0], "rank 1 did not write its block of "
	    "round 0"), "file: missing rank named");
	free(spec);
	rm_dir(dir);

	/* plugins */
	if (top == NULL) {
		ok(1, "# SKIP top_builddir not set");
		ok(1, "# SKIP top_builddir not set");
		ok(1, "# SKIP top_builddir not set");
	} else {
		dir = make_dir();
		spec = xasprintf("%s/tests/rt/.libs/sidechan-file.so=%s", top, dir);
		run_all("plugin", spec, NULL, 3);
		free(spec);
		rm_dir(dir);
		spec = xasprintf("%s/tests/rt/.libs/sidechan-badabi.so=/tmp", top);
		ok(rt_sc_open(&sc, spec, NULL, 0, 2, 1, &err) < 0 &&
		    strstr(err.msg, "has ABI version 999 but this jaccl-config needs "
		    "version 1"), "plugin ABI mismatch");
		diag("%s", err.msg);
		free(spec);
		spec = xasprintf("%s/tests/rt/.libs/sidechan-nosym.so", top);
		ok(rt_sc_open(&sc, spec, NULL, 0, 2, 1, &err) < 0 &&
		    strstr(err.msg, "does not export the symbol jc_sidechan_plugin"),
		    "plugin without the symbol");
		free(spec);
	}
	ok(rt_sc_open(&sc, "/nonexistent/x.so", NULL, 0, 2, 1, &err) < 0 &&
	    strstr(err.msg, "/nonexistent/x.so"), "missing plugin file");

	/* ssh: the relay over pipes */
	memset(&t, 0, sizeof(t));
	rc = relay_ranks(3, -1, &t, &err, status);
	ok(rc == 0 && status[0] == 0 && status[1] == 0 && status[2] == 0,
	    "ssh: 3 ranks gathered every size through the relay");
	if (rc)
		diag("%s", err.msg);
	ok(t.b[1].data && strcmp(t.b[1].data, "hello from 1\nbye from 1\n") == 0,
	    "ssh: ordinary output passes through");
	for (int r = 0; r < 4; r++)
		buf_free(&t.b[r]);
	memset(&t, 0, sizeof(t));
	rc = relay_ranks(3, 2, &t, &err, status);
	ok(rc < 0 && strstr(err.msg, "rank 2") && status[0] == 2 && status[1] == 2,
	    "ssh: a rank that leaves is named, the others fail");
	diag("%s", err.msg);
	for (int r = 0; r < 4; r++)
		buf_free(&t.b[r]);
	return done_testing();
}
