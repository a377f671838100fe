/* SPDX-License-Identifier: MIT */
/*
 * pingpong: a two-host UC ping-pong over a verbs device, in the manner of
 * ibv_rc_pingpong but set up the way JACCL sets up its queue pairs (UC,
 * INIT -> RTR with the peer's IPv4-mapped GID and sgid_index 1 -> RTS,
 * psn 7). The verbs library is loaded with dlopen (svload.h). The two ends
 * exchange QP number and GID over a TCP connection on the management
 * network; the server is the end without -c.
 *
 *   pingpong -a MGMT_ADDR [-c] [-d DEVICE] [-p PORT] [-n ITERS]
 *            [-s MIN] [-S MAX] [-w DIR]
 *
 * Phase 1 exchanges messages of MIN, 2*MIN, ... MAX bytes, ITERS round
 * trips each, and checks every byte. With -w DIR it goes on: each end
 * creates DIR/ready1.ROLE and waits for DIR/go1.ROLE (the caller takes the
 * cable down in between), checks the port is down, the client sends and the
 * server must see no completion; then ready2/go2 (cable back up), and one
 * more message must arrive intact. Prints one line per check; exits 0 when
 * all passed, 1 otherwise.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "svload.h"

#define PSN		7
#define MSG_LEN		52	/* "SV1 qpn psn gid\n", fixed size */

static struct svl sv;
static const char *role = "server";

struct pp {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq;
	struct ibv_qp		*qp;
	struct ibv_mr		*smr, *rmr;
	unsigned char		*sbuf, *rbuf;
	size_t			max;
	int			sock;
	int			sends, recvs;	/* completions seen */
	int			want_s, want_r;	/* completions expected */
	struct ibv_wc		last_recv;
};

static void __attribute__((format(printf, 1, 2), noreturn))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "pingpong: %s: error: ", role);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	exit(1);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static long
num(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		die("bad number '%s'", s);
	return v;
}

static void
xwrite(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t r = write(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("side channel write: %s", strerror(errno));
		c += r;
		n -= (size_t)r;
	}
}

static void
xread(int fd, void *p, size_t n)
{
	char *c = p;

	while (n > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, 60000) != 1)
			die("side channel: peer silent for 60 s");
		r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("side channel closed by the peer");
		c += r;
		n -= (size_t)r;
	}
}

/* Both ends call it with the same tag; returns when both got there. */
static void
sync_peer(struct pp *p, const char *tag)
{
	char mine[8] = { 0 }, theirs[8];

	snprintf(mine, sizeof(mine), "%s", tag);
	xwrite(p->sock, mine, sizeof(mine));
	xread(p->sock, theirs, sizeof(theirs));
	if (memcmp(mine, theirs, sizeof(mine)) != 0)
		die("side channel out of step at '%s'", tag);
}

static int
side_channel(const char *addr, int port, int client)
{
	struct sockaddr_in sin;
	double end = now_s() + 30;
	int fd, one = 1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		die("bad address '%s'", addr);
	if (client) {
		for (;;) {
			if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
				die("socket: %s", strerror(errno));
			if (connect(fd, (struct sockaddr *)&sin,
			    sizeof(sin)) == 0)
				return fd;
			close(fd);
			if (now_s() > end)
				die("cannot connect to %s:%d: %s", addr, port,
				    strerror(errno));
			sleep_ms(50);
		}
	}
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(fd, 1) != 0)
		die("listen on %s:%d: %s", addr, port, strerror(errno));
	{
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int c;

		if (poll(&pfd, 1, 30000) != 1)
			die("no client within 30 s");
		if ((c = accept(fd, NULL, NULL)) < 0)
			die("accept: %s", strerror(errno));
		close(fd);
		return c;
	}
}

static unsigned char
pattern(size_t k, unsigned iter, size_t size, int who)
{
	uint32_t x = (uint32_t)k * 2654435761u + iter * 40503u +
	    (uint32_t)size + (uint32_t)who * 977u;

	return (unsigned char)(x >> 13);
}

static void
fill(unsigned char *b, size_t n, unsigned iter, int who)
{
	size_t k;

	for (k = 0; k < n; k++)
		b[k] = pattern(k, iter, n, who);
}

static size_t
check(const unsigned char *b, size_t n, unsigned iter, int who)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (b[k] != pattern(k, iter, n, who))
			return k;
	return n;
}

/*
 * A receive for a message of len bytes: whole 4 KiB frames, as many as the
 * message spans (Apple's link loses a SEND whose frames differ from its
 * RECV's).
 */
static void
post_recv(struct pp *p, size_t len)
{
	size_t frames = len == 0 ? 1 : (len + 4095) / 4096;
	struct ibv_sge sge = { .addr = (uintptr_t)p->rbuf,
		.length = (uint32_t)(frames * 4096 < p->max ? frames * 4096 : p->max),
		.lkey = p->rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int r;

	if ((r = ibv_post_recv(p->qp, &wr, &bad)) != 0)
		die("post_recv: %s", strerror(r));
}

static void
post_send(struct pp *p, size_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->sbuf,
		.length = (uint32_t)len, .lkey = p->smr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	int r;

	if ((r = ibv_post_send(p->qp, &wr, &bad)) != 0)
		die("post_send: %s", strerror(r));
}

/*
 * Polls for a while; returns 0 once the completions seen reach the totals
 * expected (a completion may come before we wait for it).
 */
static int
poll_until(struct pp *p, double seconds)
{
	double end = now_s() + seconds;

	while (p->sends < p->want_s || p->recvs < p->want_r) {
		struct ibv_wc wc[8];
		int i, n = ibv_poll_cq(p->cq, 8, wc);

		if (n < 0)
			die("poll_cq failed");
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				die("completion status %d (%s)", wc[i].status,
				    wc[i].opcode == IBV_WC_SEND ? "send" :
				    "recv");
			if (wc[i].opcode == IBV_WC_SEND) {
				p->sends++;
			} else {
				p->recvs++;
				p->last_recv = wc[i];
			}
		}
		if (n == 0 && now_s() > end)
			return -1;
	}
	return 0;
}

/* Expects sends and recvs more completions, and waits for them. */
static void
wait_for(struct pp *p, int sends, int recvs, const char *what)
{
	p->want_s += sends;
	p->want_r += recvs;
	if (poll_until(p, 20) != 0)
		die("no completion for %s within 20 s", what);
}

static int
port_state(struct pp *p)
{
	struct ibv_port_attr pa;

	memset(&pa, 0, sizeof(pa));
	if (sv.query_port(p->ctx, 1, &pa) != 0)
		die("query_port failed");
	return pa.state;
}

static void
setup(struct pp *p, const char *dev)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_port_attr pa;
	union ibv_gid gid, peer_gid;
	char msg[MSG_LEN + 1], peer[MSG_LEN + 1], hex[33];
	unsigned peer_qpn, peer_psn;
	int i, r, gid_idx = -1;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
	    IBV_ACCESS_REMOTE_WRITE;

	if ((p->ctx = svl_open_by_name(&sv, dev)) == NULL)
		die("could not open device %s", dev);
	if ((p->pd = sv.alloc_pd(p->ctx)) == NULL)
		die("could not allocate a protection domain");
	if ((p->cq = sv.create_cq(p->ctx, 64, NULL, NULL, 0)) == NULL)
		die("could not create a completion queue");
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = p->cq;
	ia.qp_type = IBV_QPT_UC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 32;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	if ((p->qp = sv.create_qp(p->pd, &ia)) == NULL)
		die("create_qp: %s", strerror(errno));
	if (posix_memalign((void **)&p->sbuf, 4096, p->max) != 0 ||
	    posix_memalign((void **)&p->rbuf, 4096, p->max) != 0)
		die("out of memory");
	if ((p->smr = sv.reg_mr(p->pd, p->sbuf, p->max, access)) == NULL ||
	    (p->rmr = sv.reg_mr(p->pd, p->rbuf, p->max, access)) == NULL)
		die("reg_mr failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = (unsigned)access;
	if ((r = sv.modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
	    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) != 0)
		die("INIT: %s", strerror(r));

	/* the first IPv4-mapped GID, as JACCL picks it */
	memset(&pa, 0, sizeof(pa));
	if (sv.query_port(p->ctx, 1, &pa) != 0)
		die("query_port failed");
	for (i = 0; i < pa.gid_tbl_len && gid_idx < 0; i++) {
		static const unsigned char pre[12] = {
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
		};

		if (sv.query_gid(p->ctx, 1, i, &gid) == 0 &&
		    memcmp(gid.raw, pre, sizeof(pre)) == 0)
			gid_idx = i;
	}
	if (gid_idx < 0)
		die("no IPv4-mapped GID on %s", dev);
	for (i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", gid.raw[i]);
	snprintf(msg, sizeof(msg), "SV1 %06x %06x %s\n", p->qp->qp_num, PSN,
	    hex);
	xwrite(p->sock, msg, MSG_LEN);
	xread(p->sock, peer, MSG_LEN);
	peer[MSG_LEN] = '\0';
	if (sscanf(peer, "SV1 %6x %6x %32s", &peer_qpn, &peer_psn, hex) != 3 ||
	    strlen(hex) != 32)
		die("bad peer record '%s'", peer);
	for (i = 0; i < 16; i++) {
		unsigned b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			die("bad peer GID");
		peer_gid.raw[i] = (unsigned char)b;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer_qpn;
	a.rq_psn = peer_psn;
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.grh.dgid = peer_gid;
	a.ah_attr.grh.sgid_index = 1;
	if ((r = sv.modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_AV |
	    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)) != 0)
		die("RTR failed with errno %d", r);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = PSN;
	if ((r = sv.modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) != 0)
		die("RTS failed with errno %d", r);
	printf("pingpong: %s: QP %u <-> QP %u ready\n", role, p->qp->qp_num,
	    peer_qpn);
}

static void
teardown(struct pp *p)
{
	sv.destroy_qp(p->qp);
	sv.dereg_mr(p->smr);
	sv.dereg_mr(p->rmr);
	sv.destroy_cq(p->cq);
	sv.dealloc_pd(p->pd);
	sv.close_device(p->ctx);
	free(p->sbuf);
	free(p->rbuf);
	close(p->sock);
}

static void
pingpong(struct pp *p, int client, size_t min, size_t max, int iters)
{
	size_t size, bad;
	unsigned i;

	/* the server keeps exactly one receive posted from here on */
	if (!client)
		post_recv(p, min);
	sync_peer(p, "ready");
	for (size = min; size <= max; size *= 2) {
		double t0 = now_s(), dt;

		for (i = 0; i < (unsigned)iters; i++) {
			uint32_t got;

			if (client) {
				post_recv(p, size);
				fill(p->sbuf, size, i, 'c');
				post_send(p, size);
				wait_for(p, 1, 1, "pong");
				got = p->last_recv.byte_len;
				bad = check(p->rbuf, size, i, 's');
			} else {
				wait_for(p, 0, 1, "ping");
				got = p->last_recv.byte_len;
				bad = check(p->rbuf, size, i, 'c');
				/* the next ping may land from now on: this size
				 * again, the next, or the 4 KiB of the cable test */
				post_recv(p, i + 1 < (unsigned)iters ? size :
				    size * 2 <= max ? size * 2 : 4096);
				fill(p->sbuf, size, i, 's');
				post_send(p, size);
				wait_for(p, 1, 0, "send");
			}
			if (got != size)
				die("%zu bytes: round trip %u got %u bytes",
				    size, i, got);
			if (bad != size)
				die("%zu bytes: round trip %u: byte %zu differs",
				    size, i, bad);
		}
		dt = now_s() - t0;
		printf("pingpong: %s: %zu bytes: %d round trips ok, "
		    "%.1f MB/s, %.0f us per round trip\n", role, size, iters,
		    dt > 0 ? 2.0 * (double)size * iters / dt / 1e6 : 0.0,
		    dt * 1e6 / iters);
		fflush(stdout);
	}
}

/* Creates DIR/NAME.ROLE, then waits for DIR/go-NAME.ROLE. */
static void
pause_for(const char *dir, const char *name)
{
	char path[4096];
	double end = now_s() + 60;
	int fd;

	fflush(stdout);
	snprintf(path, sizeof(path), "%s/ready%s.%s", dir, name, role);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
		die("%s: %s", path, strerror(errno));
	close(fd);
	snprintf(path, sizeof(path), "%s/go%s.%s", dir, name, role);
	while (access(path, F_OK) != 0) {
		if (now_s() > end)
			die("nobody created %s within 60 s", path);
		sleep_ms(10);
	}
}

static void
cable_test(struct pp *p, int client, const char *dir)
{
	int k, before;
	size_t bad;

	sync_peer(p, "down?");
	pause_for(dir, "1");
	{
		double end = now_s() + 10;

		while (port_state(p) != IBV_PORT_DOWN) {
			if (now_s() > end)
				die("the port is not down after the cable "
				    "went down");
			sleep_ms(10);
		}
	}
	printf("pingpong: %s: port down: ok\n", role);
	if (client) {
		for (k = 0; k < 4; k++) {
			fill(p->sbuf, 4096, 1000 + (unsigned)k, 'c');
			post_send(p, 4096);
			wait_for(p, 1, 0, "send");
		}
		printf("pingpong: %s: 4 sends completed while down: ok\n", role);
	}
	sync_peer(p, "sent");
	if (!client) {
		before = p->recvs;
		p->want_r++;	/* the message that must not come */
		if (poll_until(p, 1.0) == 0)
			die("a message arrived over a cable that is down");
		if (p->recvs != before)
			die("completions while the cable is down");
		printf("pingpong: %s: no completion while down: ok\n", role);
	}
	sync_peer(p, "up?");
	pause_for(dir, "2");
	{
		double end = now_s() + 20;

		while (port_state(p) != IBV_PORT_ACTIVE) {
			if (now_s() > end)
				die("the port did not come back");
			sleep_ms(10);
		}
	}
	printf("pingpong: %s: port active again: ok\n", role);
	sync_peer(p, "up");
	if (client) {
		fill(p->sbuf, 4096, 2000, 'c');
		post_send(p, 4096);
		wait_for(p, 1, 0, "send");
	} else {
		/* the receive posted before the cable went down is still there */
		/* counted already, above */
		wait_for(p, 0, 0, "message after the cable came back");
		bad = check(p->rbuf, 4096, 2000, 'c');
		if (p->last_recv.byte_len != 4096 || bad != 4096)
			die("the message after the cable came back is wrong");
		printf("pingpong: %s: traffic after link up: ok\n", role);
	}
	sync_peer(p, "bye");
}

int
main(int argc, char **argv)
{
	struct pp p;
	const char *addr = NULL, *dev = "rdma_en2", *dir = NULL;
	char err[512];
	size_t min = 1024, max = 524288;
	int c, client = 0, port = 18515, iters = 20;

	memset(&p, 0, sizeof(p));
	while ((c = getopt(argc, argv, "a:cd:n:p:s:S:w:")) != -1) {
		switch (c) {
		case 'a': addr = optarg; break;
		case 'c': client = 1; role = "client"; break;
		case 'd': dev = optarg; break;
		case 'n': iters = (int)num(optarg, 1, 100000); break;
		case 'p': port = (int)num(optarg, 1, 65535); break;
		case 's': min = (size_t)num(optarg, 1, 1 << 30); break;
		case 'S': max = (size_t)num(optarg, 1, 1 << 30); break;
		case 'w': dir = optarg; break;
		default:
			die("usage: pingpong -a ADDR [-c] [-d DEV] [-p PORT] "
			    "[-n ITERS] [-s MIN] [-S MAX] [-w DIR]");
		}
	}
	if (addr == NULL || min > max)
		die("usage: pingpong -a ADDR [-c] [-d DEV] [-p PORT] "
		    "[-n ITERS] [-s MIN] [-S MAX] [-w DIR]");
	p.max = max < 4096 ? 4096 : max;
	if (svl_open(&sv, err, sizeof(err)) != 0)
		die("%s", err);
	p.sock = side_channel(addr, port, client);
	setup(&p, dev);
	pingpong(&p, client, min, max, iters);
	if (dir != NULL)
		cable_test(&p, client, dir);
	teardown(&p);
	dlclose(sv.handle);
	printf("pingpong: %s: done\n", role);
	return 0;
}
