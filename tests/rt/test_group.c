/* SPDX-License-Identifier: MIT */
/*
 * Group operations over the tcp fabric with N real processes on the
 * loopback interface (every cable is "rdma_lo"): mesh and ring groups,
 * all-gather, all-reduce of float32 and int32 at several sizes, barrier,
 * send/recv on a link and between ranks (over the wires, neighbours only
 * on a ring), and a peer that stops.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tap.h"
#include "rt_group.h"
#include "util.h"

static char *
matrix(int n, bool ring, int k)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "[");
	for (int r = 0; r < n; r++) {
		buf_puts(&b, r ? ", [" : "[");
		for (int p = 0; p < n; p++) {
			bool nb = p == (r + 1) % n || p == (r + n - 1) % n;

			buf_puts(&b, p ? ", " : "");
			if (p == r || (ring && !nb)) {
				buf_puts(&b, "null");
				continue;
			}
			buf_puts(&b, "[");
			for (int w = 0; w < k; w++)
				buf_puts(&b, w ? ", \"rdma_lo\"" : "\"rdma_lo\"");
			buf_puts(&b, "]");
		}
		buf_puts(&b, "]");
	}
	buf_puts(&b, "]");
	return buf_steal(&b);
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

static int
check_reduce(struct rt_group *g, size_t count, enum rt_dtype t, struct jc_err *err)
{
	size_t es = rt_dtype_size(t);
	char *buf = xmalloc(count * es + 1);
	int bad = 0, n = g->size;

	for (size_t i = 0; i < count; i++) {
		if (t == RT_FLOAT32)
			((float *)buf)[i] = (float)((g->rank + 1) * (int)(i % 7 + 1));
		else
			((int32_t *)buf)[i] = (g->rank + 1) * (int32_t)(i % 1000 + 1);
	}
	if (rt_group_all_reduce(g, buf, count, t, err) < 0) {
		free(buf);
		return -1;
	}
	for (size_t i = 0; i < count; i++) {
		long want = (long)n * (n + 1) / 2 * (long)(t == RT_FLOAT32 ? i % 7 + 1 : i % 1000 + 1);

		if (t == RT_FLOAT32)
			bad += ((float *)buf)[i] != (float)want;
		else
			bad += ((int32_t *)buf)[i] != (int32_t)want;
	}
	free(buf);
	return bad;
}

static int
rank_main(const char *devjson, const char *coord, int rank, bool prefer_ring, int stop)
{
	struct rt_config c = { 0 };
	struct rt_sc *sc = NULL;
	struct rt_group *g = NULL;
	struct jc_err err = { 0 };
	static const size_t counts[] = { 1, 3, 7, 1000, 8191, 1 << 20 };
	enum rt_kind kind;
	int wires, bad = 0;

	c.rank = rank;
	c.prefer_ring = prefer_ring;
	if (rt_config_parse_devices(&c, devjson, strlen(devjson), &err) < 0 ||
	    rt_config_select(&c, false, &kind, &wires, &err) < 0 ||
	    rt_sc_open(&sc, "tcp", coord, rank, c.size, 10, &err) < 0 ||
	    rt_group_open(&g, &c, kind, wires, &rt_fabric_tcp, sc, 2, &err) < 0)
		goto fail;
	if (rank == stop)
		_exit(0);	/* leaves without a word */
	{
		size_t n = 100003;
		unsigned char *src = xmalloc(n), *dst = xmalloc(n * (size_t)c.size);

		for (size_t i = 0; i < n; i++)
			src[i] = (unsigned char)(rank * 13 + i);
		if (rt_group_all_gather(g, src, n, dst, &err) < 0) {
			free(src);
			free(dst);
			goto fail;
		}
		for (int r = 0; r < c.size; r++)
			for (size_t i = 0; i < n; i++)
				bad += dst[(size_t)r * n + i] != (unsigned char)(r * 13 + i);
		free(src);
		free(dst);
	}
	for (size_t i = 0; i < JC_ARRAY_LEN(counts); i++) {
		int b1 = check_reduce(g, counts[i], RT_FLOAT32, &err);
		int b2 = check_reduce(g, counts[i], RT_INT32, &err);

		if (b1 < 0 || b2 < 0)
			goto fail;
		bad += b1 + b2;
	}
	if (rt_group_barrier(g, &err) < 0)
		goto fail;
	{
		/* point to point: rank 0 sends 1 MiB on its last link */
		int peer = g->kind == RT_MESH ? c.size - 1 : 1;
		int pidx = g->kind == RT_MESH ? 0 : 2 * g->wires - 1 - g->wires;
		size_t n = 1 << 20;
		char *buf = xcalloc(1, n);

		if (rank == 0) {
			memset(buf, 0x5a, n);
			if (rt_group_send(g, &g->links[g->nlinks - 1], buf, n, &err) < 0)
				bad++;
		} else if (rank == peer) {
			if (g->kind == RT_RING)
				pidx = g->wires - 1;	/* rank 0's right[k-1] meets our left[k-1] */
			if (rt_group_recv(g, &g->links[pidx], buf, n, &err) < 0 ||
			    buf[0] != 0x5a || buf[n - 1] != 0x5a)
				bad++;
		}
		free(buf);
		if (rt_group_barrier(g, &err) < 0)
			goto fail;
	}
	{
		/*
		 * send/recv as JACCL's: every rank to rank + 1 and from rank - 1
		 * at once, an odd size cut unevenly over the wires; then the
		 * peers it cannot reach (itself; on a ring of 4 or more, the
		 * rank opposite) are refused without a transfer
		 */
		size_t n = 100003;
		int to = (rank + 1) % c.size, from = (rank + c.size - 1) % c.size;
		unsigned char *src = xmalloc(n), *dst = xcalloc(1, n);
		struct jc_err e2 = { 0 };

		for (size_t i = 0; i < n; i++)
			src[i] = (unsigned char)(rank * 7 + i * 3);
		if (rt_group_sendrecv(g, src, n, to, dst, n, from, &err) < 0) {
			free(src);
			free(dst);
			goto fail;
		}
		for (size_t i = 0; i < n; i++)
			bad += dst[i] != (unsigned char)(from * 7 + i * 3);
		bad += rt_group_sendrecv(g, src, n, rank, NULL, 0, -1, &e2) != -EINVAL ||
		    strstr(e2.msg, "not a peer") == NULL;
		if (g->kind == RT_RING && c.size >= 4)
			bad += rt_group_sendrecv(g, NULL, 0, -1, dst, n, (rank + 2) % c.size,
			    &e2) != -EINVAL || strstr(e2.msg, "only the neighbours") == NULL;
		free(src);
		free(dst);
		if (rt_group_barrier(g, &err) < 0)
			goto fail;
	}
	rt_group_close(g);
	rt_sc_close(sc);
	rt_config_clear(&c);
	return bad ? 3 : 0;
fail:
	fprintf(stderr, "rank %d: %s\n", rank, err.msg);
	rt_group_close(g);
	rt_sc_close(sc);
	rt_config_clear(&c);
	return 2;
}

static void
run(const char *what, int n, bool ring, int k, bool prefer_ring, int stop)
{
	char *dev = matrix(n, ring, k), coord[64];
	pid_t pid[8];
	int good = 1;

	snprintf(coord, sizeof(coord), "127.0.0.1:%d", free_port());
	for (int r = 0; r < n; r++)
		if ((pid[r] = fork()) == 0)
			_exit(rank_main(dev, coord, r, prefer_ring, stop));
	for (int r = 0; r < n; r++) {
		int st;

		waitpid(pid[r], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != (stop < 0 || r == stop ? 0 : 2)) {
			good = 0;
			diag("%s: rank %d status %d", what, r, st);
		}
	}
	if (stop < 0)
		ok(good, "%s: all-gather, all-reduce float32/int32, barrier, send/recv", what);
	else
		ok(good, "%s: rank %d stops, the others fail", what, stop);
	free(dev);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	run("mesh of 2", 2, false, 1, false, -1);
	run("mesh of 3", 3, false, 1, false, -1);
	run("mesh of 4", 4, false, 1, false, -1);
	run("ring of 2, 1 wire", 2, true, 1, true, -1);
	run("ring of 3, 2 wires", 3, true, 2, true, -1);
	run("ring of 4, 2 wires", 4, true, 2, false, -1);
	run("mesh of 3", 3, false, 1, false, 2);
	run("ring of 4", 4, true, 1, false, 3);
	return done_testing();
}
