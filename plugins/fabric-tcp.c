/* SPDX-License-Identifier: MIT */
/*
 * The tcp fabric: one TCP connection per link, bound to the cable's own
 * addresses. A device "rdma_en2" is the interface "en2" (the naming
 * convention of macOS's Thunderbolt RDMA devices), whose IPv4 address is
 * the local end. Like JACCL's verbs records, each link publishes a 32-byte
 * record (magic, IPv4, port, rank, link) through the side channel; the end
 * marked active (mesh: lower rank; ring: the right-hand connection)
 * connects to the other's listener and says which link it is. It serves
 * the ring backend's TB4 links, Linux hosts without RDMA and CI.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_group.h"
#include "rt_io.h"
#include "util.h"

#define TCP_MAGIC 0x3154434au	/* "JCT1" */

struct tcp_rec {
	uint32_t magic;
	uint32_t addr;		/* network order */
	uint16_t port;		/* network order */
	uint16_t pad;
	int32_t rank;
	int32_t link;
	uint8_t zero[12];
};

struct tcp_link {
	int fd, lfd;
	struct sockaddr_in local;
};

static const char *
iface_of(const char *dev)
{
	return strncmp(dev, "rdma_", 5) == 0 ? dev + 5 : dev;
}

static int
iface_addr(const char *ifname, struct in_addr *out)
{
	struct ifaddrs *ifa, *i;
	int rc = -ENOENT;

	if (getifaddrs(&ifa) < 0)
		return -errno;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    strcmp(i->ifa_name, ifname) != 0)
			continue;
		*out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		rc = 0;
		break;
	}
	freeifaddrs(ifa);
	return rc;
}

static int
link_fail(struct rt_link *l, struct jc_err *err, int code, const char *why)
{
	l->dead = true;
	return jc_fail(err, code, "link to rank %d over %s (rank %d's %s): %s",
	    l->peer, l->device, l->peer, l->peer_device, why);
}

static int
tcp_prepare(struct rt_group *g, unsigned char *rec, struct jc_err *err)
{
	for (size_t i = 0; i < g->nlinks; i++) {
		struct rt_link *l = &g->links[i];
		struct tcp_link *t = xcalloc(1, sizeof(*t));
		struct tcp_rec r = { .magic = TCP_MAGIC, .rank = g->rank, .link = (int32_t)i };
		socklen_t len = sizeof(t->local);
		int one = 1;

		t->fd = t->lfd = -1;
		l->priv = t;
		t->local.sin_family = AF_INET;
		if (iface_addr(iface_of(l->device), &t->local.sin_addr) < 0)
			return jc_fail(err, -EADDRNOTAVAIL, "%s: the interface %s has no "
			    "IPv4 address (give each cable its own /30, as jaccl-config "
			    "configure does)", l->device, iface_of(l->device));
		if (!l->active) {
			if ((t->lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
			    setsockopt(t->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
			    bind(t->lfd, (struct sockaddr *)&t->local, sizeof(t->local)) < 0 ||
			    listen(t->lfd, 4) < 0 ||
			    getsockname(t->lfd, (struct sockaddr *)&t->local, &len) < 0)
				return jc_fail(err, -errno, "%s: cannot listen on %s: %s",
				    l->device, inet_ntoa(t->local.sin_addr), strerror(errno));
			rt_io_nonblock(t->lfd, 1);
		}
		r.addr = t->local.sin_addr.s_addr;
		r.port = t->local.sin_port;
		t->local.sin_port = 0;
		memcpy(rec + i * RT_RECORD_SIZE, &r, sizeof(r));
	}
	return 0;
}

static int
tcp_connect(struct rt_group *g, const unsigned char *peer, struct jc_err *err)
{
	double deadline = jc_now() + g->timeout;
	int32_t hello[3];
	int r;

	/* every active end first: the listeners exist since prepare */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < g->nlinks; i++) {
			struct rt_link *l = &g->links[i];
			struct tcp_link *t = l->priv;
			struct tcp_rec pr;
			struct sockaddr_in to = { .sin_family = AF_INET };

			if (l->active != (pass == 0))
				continue;
			memcpy(&pr, peer + i * RT_RECORD_SIZE, sizeof(pr));
			if (pr.magic != TCP_MAGIC || pr.rank != l->peer)
				return link_fail(l, err, -EPROTO, "the peer's record is "
				    "not a tcp fabric record (is it running another fabric?)");
			if (l->active) {
				to.sin_addr.s_addr = pr.addr;
				to.sin_port = pr.port;
				r = rt_io_connect((struct sockaddr *)&to, sizeof(to),
				    (struct sockaddr *)&t->local, sizeof(t->local), deadline);
				if (r < 0)
					return link_fail(l, err, r, r == -ETIMEDOUT ?
					    "cannot connect: no answer (cable down?)" :
					    strerror(-r));
				t->fd = r;
				hello[0] = (int32_t)TCP_MAGIC;
				hello[1] = g->rank;
				hello[2] = l->peer_index;
				if ((r = rt_io_write_all(t->fd, hello, sizeof(hello), deadline)) < 0)
					return link_fail(l, err, r, strerror(-r));
			} else {
				r = rt_io_accept(t->lfd, deadline);
				if (r < 0)
					return link_fail(l, err, r, r == -ETIMEDOUT ?
					    "the peer did not connect (cable down?)" :
					    strerror(-r));
				t->fd = r;
				r = rt_io_read_all(t->fd, hello, sizeof(hello), deadline);
				if (r < 0 || hello[0] != (int32_t)TCP_MAGIC ||
				    hello[1] != l->peer || hello[2] != (int32_t)i)
					return link_fail(l, err, -EPROTO, "the connection "
					    "came from another rank or link");
				close(t->lfd);
				t->lfd = -1;
			}
		}
	}
	return 0;
}

static int
tcp_run(struct rt_group *g, struct rt_xfer *x, size_t n, struct jc_err *err)
{
	struct pollfd *pfd = xcalloc(n, sizeof(*pfd));
	double last = jc_now();
	int rc = 0;

	for (;;) {
		size_t open = 0;
		bool moved = false;

		for (size_t i = 0; i < n; i++) {
			struct tcp_link *t = x[i].link->priv;

			pfd[i].fd = x[i].done < x[i].len ? t->fd : -1;
			pfd[i].events = x[i].send ? POLLOUT : POLLIN;
			pfd[i].revents = 0;
			open += x[i].done < x[i].len;
		}
		if (open == 0)
			break;
		if (poll(pfd, n, rt_io_ms(last + g->timeout)) < 0 && errno != EINTR) {
			rc = jc_fail(err, -errno, "poll: %s", strerror(errno));
			break;
		}
		for (size_t i = 0; i < n && rc == 0; i++) {
			ssize_t k;

			if (pfd[i].fd < 0 || pfd[i].revents == 0)
				continue;
			for (int burst = 0; burst < 4 && x[i].done < x[i].len; burst++) {
				char *p = (char *)x[i].buf + x[i].done;

				if (x[i].send)
					k = write(pfd[i].fd, p, x[i].len - x[i].done);
				else
					k = read(pfd[i].fd, p, x[i].len - x[i].done);
				if (k > 0) {
					x[i].done += (size_t)k;
					moved = true;
					continue;
				}
				if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
				    errno == EINTR))
					break;
				rc = link_fail(x[i].link, err, -EPIPE, k == 0 ?
				    "the peer closed the connection (it stopped?)" :
				    errno == ECONNRESET || errno == EPIPE ?
				    "the connection was reset (the peer stopped?)" :
				    strerror(errno));
				break;
			}
		}
		if (rc < 0)
			break;
		if (moved) {
			last = jc_now();
		} else if (jc_now() - last >= g->timeout) {
			char why[96];

			snprintf(why, sizeof(why), "no data moved for %g s: the cable "
			    "is down or the peer stopped", g->timeout);
			for (size_t i = 0; i < n; i++)
				if (x[i].done < x[i].len) {
					rc = link_fail(x[i].link, err, -ETIMEDOUT, why);
					break;
				}
			for (size_t i = 0; i < n; i++)
				if (x[i].done < x[i].len)
					x[i].link->dead = true;
			break;
		}
	}
	free(pfd);
	return rc;
}

static void
tcp_close(struct rt_group *g)
{
	for (size_t i = 0; i < g->nlinks; i++) {
		struct tcp_link *t = g->links[i].priv;

		if (t == NULL)
			continue;
		if (t->fd >= 0)
			close(t->fd);
		if (t->lfd >= 0)
			close(t->lfd);
		free(t);
		g->links[i].priv = NULL;
	}
}

const struct rt_fabric_ops rt_fabric_tcp = {
	.name = "tcp",
	.prepare = tcp_prepare,
	.connect = tcp_connect,
	.run = tcp_run,
	.close = tcp_close,
};
