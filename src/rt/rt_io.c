/* SPDX-License-Identifier: MIT */
/*
 * Deadline-bounded I/O helpers shared by the side channels, the relay and
 * the tcp fabric.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rt_io.h"
#include "util.h"

int
rt_io_ms(double deadline)
{
	double left = deadline - jc_now();

	if (left <= 0)
		return 0;
	if (left > 1.0)
		return 1000;
	return (int)(left * 1000.0) + 1;
}

int
rt_io_wait(int fd, short events, double deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int r;

	for (;;) {
		r = poll(&pfd, 1, rt_io_ms(deadline));
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0)
			return 1;
		if (jc_now() >= deadline)
			return 0;
	}
}

int
rt_io_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	if (fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK) < 0)
		return -errno;
	return fl;
}

int
rt_io_writev_all(int fd, struct iovec *iov, int n, double deadline)
{
	ssize_t w;
	int r;

	while (n > 0) {
		if ((r = rt_io_wait(fd, POLLOUT, deadline)) <= 0)
			return r == 0 ? -ETIMEDOUT : r;
		w = writev(fd, iov, n);
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			if (errno == ECONNRESET || errno == EPIPE)
				return -EPIPE;
			return -errno;
		}
		/* past the buffers written whole, into the one written in part */
		for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--)
			w -= (ssize_t)iov->iov_len;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

int
rt_io_write_all(int fd, const void *p, size_t n, double deadline)
{
	struct iovec v = { (void *)p, n };

	return n == 0 ? 0 : rt_io_writev_all(fd, &v, 1, deadline);
}

int
rt_io_read_all(int fd, void *p, size_t n, double deadline)
{
	char *c = p;
	ssize_t got;
	int r;

	while (n > 0) {
		if ((r = rt_io_wait(fd, POLLIN, deadline)) <= 0)
			return r == 0 ? -ETIMEDOUT : r;
		got = read(fd, c, n);
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			if (errno == ECONNRESET)
				return -EPIPE;
			return -errno;
		}
		if (got == 0)
			return -EPIPE;
		c += got;
		n -= (size_t)got;
	}
	return 0;
}

int
rt_io_connect(const struct sockaddr *addr, socklen_t alen,
    const struct sockaddr *local, socklen_t llen, double deadline)
{
	int fd, r, e, one = 1;
	socklen_t el = sizeof(e);

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -errno;
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (local != NULL && bind(fd, local, llen) < 0) {
		e = -errno;
		close(fd);
		return e;
	}
	rt_io_nonblock(fd, 1);
	if (connect(fd, addr, alen) < 0 && errno != EINPROGRESS) {
		e = -errno;
		close(fd);
		return e;
	}
	r = rt_io_wait(fd, POLLOUT, deadline);
	if (r <= 0) {
		close(fd);
		return r == 0 ? -ETIMEDOUT : r;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
		e = errno;
	if (e != 0) {
		close(fd);
		return -e;
	}
	return fd;
}

int
rt_io_accept(int lfd, double deadline)
{
	int r, fd, one = 1;

	for (;;) {
		if ((r = rt_io_wait(lfd, POLLIN, deadline)) <= 0)
			return r == 0 ? -ETIMEDOUT : r;
		fd = accept(lfd, NULL, NULL);
		if (fd >= 0)
			break;
		if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != ECONNABORTED)
			return -errno;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	rt_io_nonblock(fd, 1);
	return fd;
}

int
rt_io_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	const char *colon = strchr(s, ':');
	char *host;
	int r;

	if (colon == NULL || colon == s || colon[1] == '\0')
		return -EINVAL;
	host = xstrndup(s, (size_t)(colon - s));
	hints.ai_flags = AI_NUMERICSERV;
	r = getaddrinfo(host, colon + 1, &hints, &res);
	free(host);
	if (r != 0 || res == NULL)
		return -EINVAL;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}
