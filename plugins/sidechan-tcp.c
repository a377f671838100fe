/* SPDX-License-Identifier: MIT */
/*
 * JACCL's TCP star side channel, byte for byte: rank 0 listens on the
 * coordinator address, every other rank connects (retrying after 1, 2, 4
 * and 8 seconds) and sends its rank as a 4-byte native int; an all-gather
 * is n bytes from each rank to rank 0, then size * n bytes back to each.
 * Unlike JACCL every step is bounded by the timeout, and a rank that never
 * connects or stops answering is named.
 *
 * Rank 0 waits for the connections half as long again as a rank tries to
 * connect: ranks start over SSH, seconds apart on a loaded host, and a rank
 * started after rank 0 must still report its own failure (the coordinator
 * that "did not accept": a firewall's drop) before rank 0 gives up and the
 * launcher stops it.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_io.h"
#include "rt_sc.h"
#include "util.h"

void (*rt_sc_tcp_log)(const char *msg);

#define LISTEN_BOUND(t)	((t) * 1.5)

struct tcp_ctx {
	int rank, size;
	double timeout;
	int *fds;		/* rank 0: fds[r] for r >= 1; others: fds[0] */
};

static void
tcp_close(void *p)
{
	struct tcp_ctx *c = p;

	if (c == NULL)
		return;
	for (int i = 0; i < c->size; i++)
		if (c->fds[i] >= 0)
			close(c->fds[i]);
	free(c->fds);
	free(c);
}

static int
tcp_listen(struct tcp_ctx *c, const struct sockaddr_storage *ss, socklen_t len,
    char *eb, size_t el)
{
	double bound = LISTEN_BOUND(c->timeout), deadline = jc_now() + bound;
	int lfd, one = 1, r, strays = 0;
	int32_t rank;

	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0) {
		snprintf(eb, el, "Couldn't create socket (error: %d)", errno);
		return -errno;
	}
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) {
		r = -errno;
		snprintf(eb, el, "Couldn't enable reuseaddr (error: %d)", errno);
		goto out;
	}
	if (bind(lfd, (const struct sockaddr *)ss, len) < 0) {
		r = -errno;
		snprintf(eb, el, "Couldn't bind socket (error: %d, %s)", errno,
		    strerror(errno));
		goto out;
	}
	if (listen(lfd, c->size) < 0) {
		r = -errno;
		snprintf(eb, el, "Couldn't listen (error: %d)", errno);
		goto out;
	}
	rt_io_nonblock(lfd, 1);
	for (int i = 1; i < c->size;) {
		int fd = rt_io_accept(lfd, deadline);
		double rd = jc_now() + 5;

		if (fd < 0) {
			char list[256] = "";
			size_t used = 0;
			int missing = 0;

			r = fd;
			for (int k = 1; k < c->size; k++) {
				if (c->fds[k] >= 0 || used >= sizeof(list) - 16)
					continue;
				missing++;
				used += (size_t)snprintf(list + used, sizeof(list) - used,
				    "%s%d", missing > 1 ? ", " : "", k);
			}
			if (r == -ETIMEDOUT)
				snprintf(eb, el, "%d rank(s) did not connect to the "
				    "coordinator within %g s (missing: rank %s)%s", missing,
				    bound, list, strays ? "; connections that sent no "
				    "valid rank were ignored" : "");
			else
				snprintf(eb, el, "Accept failed (error: %d)", -r);
			goto out;
		}
		/*
		 * A rank sends its number at once. A connection that does not (a
		 * port scan, another program's late connection attempt, a rank of
		 * an earlier run) is closed and ignored: the coordinator waits on
		 * for the ranks until its deadline.
		 */
		r = rt_io_read_all(fd, &rank, sizeof(rank), rd < deadline ? rd : deadline);
		if (r < 0 || rank < 1 || rank >= c->size || c->fds[rank] >= 0) {
			close(fd);
			strays++;
			continue;
		}
		c->fds[rank] = fd;
		i++;
	}
	r = 0;
out:
	close(lfd);
	return r;
}

static int
tcp_connect(struct tcp_ctx *c, const struct sockaddr_storage *ss, socklen_t len,
    const char *addr, char *eb, size_t el)
{
	double deadline = jc_now() + c->timeout;
	int32_t rank = c->rank;
	int fd, wait = 1000, attempt = 0, r;
	char msg[96];

	for (;;) {
		fd = rt_io_connect((const struct sockaddr *)ss, len, NULL, 0, deadline);
		if (fd >= 0)
			break;
		attempt++;
		if (jc_now() + wait / 1000.0 > deadline) {
			snprintf(eb, el, "Couldn't connect (error: %d): the coordinator "
			    "%s did not accept within %g s", -fd, addr, c->timeout);
			return fd == -ETIMEDOUT ? -ETIMEDOUT : -ECONNREFUSED;
		}
		snprintf(msg, sizeof(msg), "[jaccl] Connection attempt %d waiting %d ms",
		    attempt, wait);
		if (rt_sc_tcp_log)
			rt_sc_tcp_log(msg);
		usleep((useconds_t)wait * 1000);
		if (wait < 8000)
			wait *= 2;
	}
	if ((r = rt_io_write_all(fd, &rank, sizeof(rank), deadline)) < 0) {
		close(fd);
		snprintf(eb, el, "Send failed with errno=%d", -r);
		return r;
	}
	c->fds[0] = fd;
	return 0;
}

static int
tcp_open(void **ctx, int rank, int size, const char *params, double timeout,
    char *eb, size_t el)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct tcp_ctx *c;
	int r;

	*ctx = NULL;
	if (rt_io_parse_addr(params, &ss, &len) < 0) {
		snprintf(eb, el, "Can't parse address %s", params);
		return -EINVAL;
	}
	c = xcalloc(1, sizeof(*c));
	c->rank = rank;
	c->size = size;
	c->timeout = timeout;
	c->fds = xcalloc((size_t)size, sizeof(int));
	for (int i = 0; i < size; i++)
		c->fds[i] = -1;
	r = rank == 0 ? tcp_listen(c, &ss, len, eb, el) :
	    tcp_connect(c, &ss, len, params, eb, el);
	if (r < 0) {
		tcp_close(c);
		return r;
	}
	*ctx = c;
	return 0;
}

static int
io_error(int r, int peer, const char *what, double timeout, char *eb, size_t el)
{
	if (r == -ETIMEDOUT)
		snprintf(eb, el, "%s rank %d: no answer within %g s", what, peer, timeout);
	else if (r == -EPIPE)
		snprintf(eb, el, "%s rank %d: the connection was closed (rank %d "
		    "stopped)", what, peer, peer);
	else
		snprintf(eb, el, "%s rank %d failed with errno=%d", what, peer, -r);
	return r;
}

static int
tcp_all_gather(void *p, const void *src, size_t n, void *dst, char *eb, size_t el)
{
	struct tcp_ctx *c = p;
	double deadline = jc_now() + c->timeout;
	char *d = dst;
	int r;

	if (c->rank != 0) {
		if ((r = rt_io_write_all(c->fds[0], src, n, deadline)) < 0)
			return io_error(r, 0, "Send to", c->timeout, eb, el);
		if ((r = rt_io_read_all(c->fds[0], dst, n * (size_t)c->size, deadline)) < 0)
			return io_error(r, 0, "Recv from", c->timeout, eb, el);
		return 0;
	}
	memcpy(d, src, n);
	for (int i = 1; i < c->size; i++)
		if ((r = rt_io_read_all(c->fds[i], d + (size_t)i * n, n, deadline)) < 0)
			return io_error(r, i, "Recv from", c->timeout, eb, el);
	for (int i = 1; i < c->size; i++)
		if ((r = rt_io_write_all(c->fds[i], d, n * (size_t)c->size, deadline)) < 0)
			return io_error(r, i, "Send to", c->timeout, eb, el);
	return 0;
}

static int
tcp_barrier(void *p, char *eb, size_t el)
{
	struct tcp_ctx *c = p;
	int32_t zero = 0, *all = xcalloc((size_t)c->size, sizeof(*all));
	int r;

	/* JACCL's barrier: two all-gathers of an int 0 */
	r = tcp_all_gather(p, &zero, sizeof(zero), all, eb, el);
	if (r == 0)
		r = tcp_all_gather(p, &zero, sizeof(zero), all, eb, el);
	free(all);
	return r;
}

const struct jc_sidechan_ops rt_sc_tcp_ops = {
	.abi_version = JC_SIDECHAN_ABI_VERSION,
	.name = "tcp",
	.open = tcp_open,
	.all_gather = tcp_all_gather,
	.barrier = tcp_barrier,
	.close = tcp_close,
};
