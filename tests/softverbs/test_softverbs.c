/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the softverbs library, loaded with dlopen as the runtime
 * loads a verbs library: device list and environment, port and GID table,
 * Apple's limits (UC only, 10 QPs, 100 MRs, 63 of 64 sends, 63 of 128 receives), QP
 * state transitions, and the data path between two QPs over the loopback
 * interface, including sends held until the far end has a receive and
 * the drop of a message longer than the receive. With the argument "limits", the
 * limits are changed through the environment and checked instead. Needs
 * only "lo" up with 127.0.0.1, so it runs without root.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "svload.h"
#include "../tap.h"

static struct svl sv;
static enum ibv_mtu path_mtu = IBV_MTU_1024;
static uint32_t qp_depth = 32;

struct end {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq;
	struct ibv_qp		*qp;
	struct ibv_mr		*mr;
	unsigned char		*buf;
	size_t			size;
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct ibv_qp *
make_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type,
    uint32_t max_send, uint32_t max_recv)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = type;
	a.cap.max_send_wr = max_send;
	a.cap.max_recv_wr = max_recv;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	return sv.create_qp(pd, &a);
}

static int
to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
	    IBV_ACCESS_REMOTE_WRITE;
	return sv.modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
	    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* RTR the way JACCL does it: GRH with the peer's GID, sgid_index 1. */
static int
to_rtr(struct ibv_qp *qp, uint32_t dqpn, const union ibv_gid *dgid,
    int is_global, int sgid_index)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = path_mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = 7;
	a.ah_attr.port_num = 1;
	if (is_global) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.grh.dgid = *dgid;
		a.ah_attr.grh.sgid_index = (uint8_t)sgid_index;
	}
	return sv.modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
	    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
}

static int
to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 7;
	return sv.modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int
end_open(struct end *e, size_t size)
{
	memset(e, 0, sizeof(*e));
	e->size = size;
	if ((e->ctx = svl_open_by_name(&sv, "rdma_lo")) == NULL ||
	    (e->pd = sv.alloc_pd(e->ctx)) == NULL ||
	    (e->cq = sv.create_cq(e->ctx, 64, NULL, NULL, 0)) == NULL ||
	    (e->qp = make_qp(e->pd, e->cq, IBV_QPT_UC, qp_depth,
	    qp_depth)) == NULL ||
	    (e->buf = calloc(1, size)) == NULL ||
	    (e->mr = sv.reg_mr(e->pd, e->buf, size, IBV_ACCESS_LOCAL_WRITE |
	    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)) == NULL)
		return -1;
	return to_init(e->qp);
}

static void
end_close(struct end *e)
{
	if (e->qp != NULL)
		sv.destroy_qp(e->qp);
	if (e->mr != NULL)
		sv.dereg_mr(e->mr);
	if (e->cq != NULL)
		sv.destroy_cq(e->cq);
	if (e->pd != NULL)
		sv.dealloc_pd(e->pd);
	if (e->ctx != NULL)
		sv.close_device(e->ctx);
	free(e->buf);
}

static int
connect_ends(struct end *a, struct end *b)
{
	union ibv_gid ga, gb;

	if (sv.query_gid(a->ctx, 1, 1, &ga) != 0 ||
	    sv.query_gid(b->ctx, 1, 1, &gb) != 0)
		return -1;
	if (to_rtr(a->qp, b->qp->qp_num, &gb, 1, 1) != 0 ||
	    to_rtr(b->qp, a->qp->qp_num, &ga, 1, 1) != 0 ||
	    to_rts(a->qp) != 0 || to_rts(b->qp) != 0)
		return -1;
	return 0;
}

static int
post_recv(struct end *e, size_t off, size_t len, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e->buf + off), .length = (uint32_t)len,
		.lkey = e->mr->lkey
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

static int
post_send(struct end *e, size_t off, size_t len, uint64_t id, int signaled)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e->buf + off), .length = (uint32_t)len,
		.lkey = e->mr->lkey
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(e->qp, &wr, &bad);
}

/* Polls until one completion of the given opcode (10 s guard). */
static int
wait_wc(struct end *e, enum ibv_wc_opcode op, struct ibv_wc *out)
{
	double end = now_s() + 10;
	struct ibv_wc wc;

	while (now_s() < end) {
		int n = ibv_poll_cq(e->cq, 1, &wc);

		if (n < 0)
			return -1;
		if (n == 1 && wc.opcode == op) {
			*out = wc;
			return 0;
		}
		if (n == 1)
			diag("unexpected completion opcode %d", wc.opcode);
	}
	return -1;
}

static int
drain(struct end *e)
{
	struct ibv_wc wc[16];
	int n, total = 0;

	while ((n = ibv_poll_cq(e->cq, 16, wc)) > 0)
		total += n;
	return total;
}

static void
fill(unsigned char *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)((i * 31 + seed * 7 + (i >> 10)) & 0xff);
}

static void
test_devices(void)
{
	struct ibv_device **list;
	int n = -1, i, lo = 0, mgmt = 0;

	unsetenv("SOFTVERBS_IFACES");
	unsetenv("SOFTVERBS_MGMT_IFACE");
	list = sv.get_device_list(&n);
	ok(list != NULL && n >= 0, "default device list (%d devices)", n);
	for (i = 0; list != NULL && i < n; i++) {
		const char *name = sv.get_device_name(list[i]);

		if (strcmp(name, "rdma_lo") == 0)
			lo = 1;
		if (strcmp(name, "rdma_en0") == 0 ||
		    strcmp(name, "rdma_eth0") == 0)
			mgmt = 1;
	}
	ok(!lo && !mgmt, "default list leaves out lo, en0 and eth0");
	if (list != NULL)
		sv.free_device_list(list);

	setenv("SOFTVERBS_IFACES", "lo,svnosuch0", 1);
	list = sv.get_device_list(&n);
	ok(list != NULL && n == 1 && list[1] == NULL,
	    "SOFTVERBS_IFACES=lo,svnosuch0 gives one device");
	if (list != NULL && n == 1)
		is_str(sv.get_device_name(list[0]), "rdma_lo",
		    "device is named rdma_<iface>");
	else
		ok(0, "device is named rdma_<iface>");
	if (list != NULL)
		sv.free_device_list(list);
	setenv("SOFTVERBS_IFACES", "lo", 1);
}

static void
test_port_gid(void)
{
	struct ibv_context *ctx = svl_open_by_name(&sv, "rdma_lo");
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid g;
	static const unsigned char v4[16] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1
	};
	static const unsigned char zero[16];

	ok(ctx != NULL, "open rdma_lo");
	if (ctx == NULL)
		return;
	ok(sv.query_device(ctx, &da) == 0 && da.phys_port_cnt == 1 &&
	    da.max_qp == 10 && da.max_mr == 100, "query_device: 1 port, "
	    "max_qp 10, max_mr 100");
	memset(&pa, 0, sizeof(pa));
	ok(sv.query_port(ctx, 1, &pa) == 0, "query_port 1");
	is_int(pa.state, IBV_PORT_ACTIVE, "port is active while lo is up");
	is_int(pa.active_mtu, IBV_MTU_1024, "active_mtu is 1024");
	is_int(pa.gid_tbl_len, 4, "gid_tbl_len");
	is_int(sv.query_port(ctx, 2, &pa), EINVAL, "port 2 does not exist");
	ok(sv.query_gid(ctx, 1, 0, &g) == 0 && g.raw[0] == 0xfe &&
	    g.raw[1] == 0x80 && g.raw[11] == 0xff && g.raw[12] == 0xfe,
	    "GID[0] is link-local EUI-64");
	ok(sv.query_gid(ctx, 1, 1, &g) == 0 && memcmp(g.raw, v4, 16) == 0,
	    "GID[1] is ::ffff:127.0.0.1");
	ok(sv.query_gid(ctx, 1, 2, &g) == 0 && memcmp(g.raw, zero, 16) == 0,
	    "GID[2] is empty");
	ok(sv.query_gid(ctx, 1, 4, &g) == -1 && errno == EINVAL,
	    "GID index past the table fails EINVAL");
	sv.close_device(ctx);
}

static void
test_limits(void)
{
	struct ibv_context *c1 = svl_open_by_name(&sv, "rdma_lo");
	struct ibv_context *c2 = svl_open_by_name(&sv, "rdma_lo");
	struct ibv_pd *p1 = NULL, *p2 = NULL;
	struct ibv_cq *q1 = NULL, *q2 = NULL;
	struct ibv_qp *qps[11], *qp;
	struct ibv_mr *mrs[101], *mr;
	struct ibv_qp_init_attr a;
	unsigned char *buf = malloc(4096);
	int i, n;

	if (c1 != NULL && c2 != NULL) {
		p1 = sv.alloc_pd(c1);
		p2 = sv.alloc_pd(c2);
		q1 = sv.create_cq(c1, 64, NULL, NULL, 0);
		q2 = sv.create_cq(c2, 64, NULL, NULL, 0);
	}
	if (!ok(p1 && p2 && q1 && q2 && buf, "two contexts on one device")) {
		free(buf);
		return;
	}
	errno = 0;
	qp = make_qp(p1, q1, IBV_QPT_RC, 32, 32);
	ok(qp == NULL && errno == EOPNOTSUPP,
	    "RC queue pair refused with EOPNOTSUPP (Apple's errno 102)");
	qp = make_qp(p1, q1, IBV_QPT_UD, 32, 32);
	ok(qp == NULL, "UD queue pair refused");
	qp = make_qp(p1, q1, IBV_QPT_UC, 65, 32);
	ok(qp == NULL && errno == EINVAL, "max_send_wr 65 refused");
	qp = make_qp(p1, q1, IBV_QPT_UC, 32, 129);
	ok(qp == NULL && errno == EINVAL, "max_recv_wr 129 refused");
	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = q1;
	a.qp_type = IBV_QPT_UC;
	a.cap.max_send_wr = 32;
	a.cap.max_recv_wr = 32;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	qp = sv.create_qp(p1, &a);
	ok(qp != NULL && a.cap.max_send_wr == 64 && a.cap.max_recv_wr == 128,
	    "UC queue pair, caps reported 64 send / 128 receive (as Apple's)");
	ok(qp != NULL && qp->qp_num > 0 && qp->qp_num < (1u << 24),
	    "QP number is a 24-bit number");
	if (qp != NULL)
		sv.destroy_qp(qp);

	for (n = 0; n < 11; n++) {
		errno = 0;
		qps[n] = make_qp(n % 2 ? p2 : p1, n % 2 ? q2 : q1, IBV_QPT_UC,
		    32, 32);
		if (qps[n] == NULL)
			break;
	}
	ok(n == 10 && errno == EBUSY,
	    "10 QPs per device across contexts, the 11th fails EBUSY");
	ok(sv.dealloc_pd(p1) == EBUSY, "dealloc_pd with QPs fails EBUSY");
	ok(sv.destroy_cq(q1) == EBUSY, "destroy_cq with QPs fails EBUSY");
	if (n > 0) {
		sv.destroy_qp(qps[--n]);
		qps[n] = make_qp(p1, q1, IBV_QPT_UC, 32, 32);
		ok(qps[n] != NULL, "after destroying one, a QP can be created");
		if (qps[n] != NULL)
			n++;
	}
	for (i = 0; i < n; i++)
		sv.destroy_qp(qps[i]);

	for (n = 0; n < 101; n++) {
		errno = 0;
		mrs[n] = sv.reg_mr(n % 2 ? p2 : p1, buf, 4096,
		    IBV_ACCESS_LOCAL_WRITE);
		if (mrs[n] == NULL)
			break;
	}
	ok(n == 100 && errno == ENOMEM,
	    "100 MRs per device, the 101st fails ENOMEM");
	ok(n > 1 && mrs[0]->lkey != mrs[1]->lkey, "MRs have distinct lkeys");
	if (n > 0) {
		sv.dereg_mr(mrs[--n]);
		mrs[n] = sv.reg_mr(p1, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
		ok(mrs[n] != NULL, "after deregistering one, an MR can be "
		    "registered");
		if (mrs[n] != NULL)
			n++;
	}
	for (i = 0; i < n; i++)
		sv.dereg_mr(mrs[i]);
	mr = sv.reg_mr(p1, buf, 4096, IBV_ACCESS_REMOTE_WRITE);
	ok(mr == NULL && errno == EINVAL,
	    "REMOTE_WRITE without LOCAL_WRITE fails EINVAL");
	ok(sv.dealloc_pd(p1) == 0 && sv.destroy_cq(q1) == 0,
	    "PD and CQ released once unused");
	/* c2's PD and CQ are left for close_device to clean up. */
	sv.close_device(c1);
	sv.close_device(c2);
	free(buf);
}

static void
test_states(void)
{
	struct end e;
	union ibv_gid g0, g1;
	struct ibv_qp_attr a;

	if (!ok(end_open(&e, 4096) == 0, "QP for states")) {
		end_close(&e);
		return;
	}
	/* end_open took the QP to INIT; start again from RESET */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	ok(sv.modify_qp(e.qp, &a, IBV_QP_STATE) == 0 &&
	    e.qp->state == IBV_QPS_RESET, "any state -> RESET");
	sv.query_gid(e.ctx, 1, 0, &g0);
	sv.query_gid(e.ctx, 1, 1, &g1);
	is_int(to_rtr(e.qp, 1000, &g1, 1, 1), EINVAL, "RESET -> RTR refused");
	is_int(post_recv(&e, 0, 64, 1), EINVAL, "post_recv in RESET refused");
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	is_int(sv.modify_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_PORT |
	    IBV_QP_PKEY_INDEX), EINVAL, "INIT without access flags refused");
	a.port_num = 2;
	is_int(sv.modify_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_PORT |
	    IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS), EINVAL,
	    "INIT on port 2 refused");
	is_int(to_init(e.qp), 0, "RESET -> INIT with JACCL's attributes");
	is_int(e.qp->state, IBV_QPS_INIT, "state is INIT");
	is_int(post_send(&e, 0, 64, 1, 1), EINVAL, "post_send in INIT refused");
	is_int(to_rtr(e.qp, 1000, &g1, 0, 1), EINVAL,
	    "RTR without a GRH refused");
	is_int(to_rtr(e.qp, 1000, &g0, 1, 1), EINVAL,
	    "RTR to a dgid that is not IPv4-mapped refused");
	is_int(to_rtr(e.qp, 1000, &g1, 1, 0), EINVAL,
	    "RTR with sgid_index 0 (not IPv4-mapped) refused");
	is_int(to_rts(e.qp), EINVAL, "INIT -> RTS refused");
	is_int(to_rtr(e.qp, 1000, &g1, 1, 1), 0, "INIT -> RTR");
	is_int(post_send(&e, 0, 64, 1, 1), EINVAL, "post_send in RTR refused");
	is_int(to_rts(e.qp), 0, "RTR -> RTS");
	is_int(e.qp->state, IBV_QPS_RTS, "state is RTS");
	end_close(&e);
}

/*
 * The far end's first credit is lost (it was sent while this end was not
 * yet ready to receive): a blocked sender asks again and gets it.
 */
static void
test_credit_ask(void)
{
	struct end a, b;
	struct ibv_wc wc;
	union ibv_gid ga, gb;
	int good;

	if (!ok(end_open(&a, 4096) == 0 && end_open(&b, 4096) == 0 &&
	    sv.query_gid(a.ctx, 1, 1, &ga) == 0 &&
	    sv.query_gid(b.ctx, 1, 1, &gb) == 0, "two UC QPs in INIT")) {
		end_close(&a);
		end_close(&b);
		return;
	}
	fill(a.buf, 1000, 5);
	/* b announces its receive while a is in INIT: a drops it at RTR */
	good = post_recv(&b, 0, 4096, 3) == 0 &&
	    to_rtr(b.qp, a.qp->qp_num, &ga, 1, 1) == 0 &&
	    to_rtr(a.qp, b.qp->qp_num, &gb, 1, 1) == 0 &&
	    to_rts(a.qp) == 0 && to_rts(b.qp) == 0 &&
	    post_send(&a, 0, 1000, 4, 1) == 0 && drain(&a) == 0;
	ok(good, "the credit sent before the sender was ready is lost: the "
	    "send waits");
	/* b answers the request when it polls; a sends on its next poll */
	good = drain(&b) == 0 && wait_wc(&a, IBV_WC_SEND, &wc) == 0 &&
	    wc.wr_id == 4 && wait_wc(&b, IBV_WC_RECV, &wc) == 0 &&
	    wc.wr_id == 3 && wc.byte_len == 1000 &&
	    memcmp(a.buf, b.buf, 1000) == 0;
	ok(good, "the waiting sender asks for credit and the message goes");
	end_close(&a);
	end_close(&b);
}

static void
test_data(void)
{
	static const size_t sizes[] = { 1, 1024, 1025, 4096, 65536, 524288 };
	struct end a, b;
	struct ibv_wc wc;
	size_t i;
	int good, n, r;
	const size_t big = 524288;

	if (!ok(end_open(&a, 2 * big) == 0 && end_open(&b, 2 * big) == 0 &&
	    connect_ends(&a, &b) == 0, "two connected UC QPs on rdma_lo")) {
		end_close(&a);
		end_close(&b);
		return;
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = sizes[i];

		fill(a.buf, len, (unsigned)i);
		memset(b.buf, 0, len);
		/* the receive spans the send's 4 KiB frames, as Apple's needs */
		good = post_recv(&b, 0, (len + 4095) / 4096 * 4096, 100 + i) == 0 &&
		    post_send(&a, 0, len, 200 + i, 1) == 0 &&
		    wait_wc(&a, IBV_WC_SEND, &wc) == 0 &&
		    wc.status == IBV_WC_SUCCESS && wc.wr_id == 200 + i &&
		    wait_wc(&b, IBV_WC_RECV, &wc) == 0 &&
		    wc.status == IBV_WC_SUCCESS && wc.wr_id == 100 + i &&
		    wc.byte_len == len && wc.src_qp == a.qp->qp_num &&
		    wc.qp_num == b.qp->qp_num &&
		    memcmp(a.buf, b.buf, len) == 0;
		ok(good, "%zu bytes A -> B arrive intact", len);
	}
	fill(b.buf, big, 99);
	good = post_recv(&a, big, big, 1) == 0 &&
	    post_send(&b, 0, big, 2, 1) == 0 &&
	    wait_wc(&a, IBV_WC_RECV, &wc) == 0 && wc.byte_len == big &&
	    memcmp(a.buf + big, b.buf, big) == 0 && drain(&b) == 1;
	ok(good, "512 KiB B -> A arrive intact");

	/*
	 * Apple's link: a send waits at the sender until the far end has a
	 * receive for it (JACCL posts its sends with no handshake).
	 */
	fill(a.buf, 4096, 1);
	memset(b.buf, 0, 8192);
	good = post_send(&a, 0, 4096, 1, 1) == 0 && drain(&a) == 0 &&
	    drain(&b) == 0 && drain(&a) == 0;
	ok(good, "a send with no receive posted at the far end is held: "
	    "no completion on either side");
	good = post_recv(&b, 0, 4096, 7) == 0 &&
	    wait_wc(&a, IBV_WC_SEND, &wc) == 0 && wc.wr_id == 1 &&
	    wc.status == IBV_WC_SUCCESS &&
	    wait_wc(&b, IBV_WC_RECV, &wc) == 0 && wc.wr_id == 7 &&
	    wc.byte_len == 4096 && memcmp(b.buf, a.buf, 4096) == 0;
	ok(good, "once the receive is posted the held send goes and lands "
	    "intact");
	drain(&a);

	/* longer than the posted buffer -> dropped, receive stays posted */
	fill(a.buf, 8192, 3);
	good = post_recv(&b, 0, 1024, 8) == 0 &&
	    post_send(&a, 0, 4096, 3, 1) == 0 && drain(&b) == 0 &&
	    post_send(&a, 4096, 512, 4, 1) == 0 &&
	    wait_wc(&b, IBV_WC_RECV, &wc) == 0 && wc.wr_id == 8 &&
	    wc.byte_len == 512 && memcmp(b.buf, a.buf + 4096, 512) == 0;
	ok(good, "a message longer than the receive buffer is dropped");
	drain(&a);

	/*
	 * Apple's frames: a SEND spans as many 4 KiB frames as the RECV it
	 * lands in, or it is lost (the sender completes, the receive stays
	 * posted); one of 2 frames into a 2-frame receive then arrives
	 */
	fill(a.buf, 8192, 5);
	good = post_recv(&b, 0, 8192, 11) == 0 &&
	    post_send(&a, 0, 4096, 12, 1) == 0 && wait_wc(&a, IBV_WC_SEND, &wc) == 0 &&
	    wc.status == IBV_WC_SUCCESS && drain(&b) == 0;
	ok(good, "4096 bytes (1 frame) into a receive of 8192 (2 frames): lost, no receive completion");
	good = post_send(&a, 4096, 4097, 13, 1) == 0 &&
	    wait_wc(&b, IBV_WC_RECV, &wc) == 0 && wc.wr_id == 11 && wc.byte_len == 4097 &&
	    memcmp(b.buf, a.buf + 4096, 4097) == 0;
	ok(good, "then 4097 bytes (2 frames) land in that same receive");
	drain(&a);

	/* unsignaled sends make no completion */
	good = post_recv(&b, 0, 1024, 9) == 0 &&
	    post_send(&a, 0, 100, 5, 0) == 0 &&
	    wait_wc(&b, IBV_WC_RECV, &wc) == 0 && drain(&a) == 0;
	ok(good, "an unsignaled send is delivered with no send completion");

	/*
	 * 62 outstanding (one unsignaled above) + 1, then the 64th fails
	 * although the queue reports 64 (Apple's: 63 of 64 in flight)
	 */
	for (n = 0; n < 63; n++)
		post_recv(&b, 0, 64, 50 + (uint64_t)n);
	for (n = 0; n < 62; n++)
		if (post_send(&a, 0, 64, 10 + (uint64_t)n, 1) != 0)
			break;
	r = post_send(&a, 0, 64, 99, 1);
	ok(n == 62 && r == ENOMEM,
	    "63 outstanding sends, the 64th fails ENOMEM (the queue reports 64)");
	n = 0;
	for (r = 0; r < 62; r++)
		n += wait_wc(&a, IBV_WC_SEND, &wc) == 0;
	is_int(n, 62, "62 send completions");
	ok(post_send(&a, 0, 64, 100, 1) == 0 && drain(&a) == 1,
	    "polled completions free the send queue");
	drain(&b);

	/* 63 posted receives, the 64th fails (the queue reports 128); ERR flushes them */
	for (n = 0; n < 128; n++)
		if ((r = post_recv(&b, 0, 64, (uint64_t)n)) != 0)
			break;
	ok(n == 63 && r == ENOMEM, "63 receives can be posted, the 64th fails ENOMEM (the queue reports 128)");
	{
		struct ibv_qp_attr at;
		struct ibv_wc w[64];
		int k, flushed = 0;

		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_ERR;
		ok(sv.modify_qp(b.qp, &at, IBV_QP_STATE) == 0, "QP to ERR");
		k = ibv_poll_cq(b.cq, 64, w);
		for (n = 0; n < k; n++)
			flushed += w[n].status == IBV_WC_WR_FLUSH_ERR;
		ok(k == 63 && flushed == 63,
		    "ERR flushes the 63 receives with WR_FLUSH_ERR");
	}
	{
		struct ibv_sge sge = { .addr = (uintptr_t)a.buf, .length = 64,
			.lkey = a.mr->lkey ^ 0x5000 };
		struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge,
			.num_sge = 1 };
		struct ibv_recv_wr *bad = NULL;

		ok(ibv_post_recv(a.qp, &wr, &bad) == EINVAL && bad == &wr,
		    "post_recv with a bad lkey fails EINVAL and names the WR");
	}
	end_close(&a);
	end_close(&b);
}

/* The same checks with every limit changed through the environment. */
static void
test_env_limits(void)
{
	struct end a, b;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_qp *qp, *rc;
	struct ibv_mr *mr[2];
	struct ibv_wc wc;
	int n, r;

	if (!ok(end_open(&a, 8192) == 0 && end_open(&b, 8192) == 0,
	    "two QPs with SOFTVERBS_MAX_QP=3")) {
		end_close(&a);
		end_close(&b);
		return;
	}
	ok(sv.query_device(a.ctx, &da) == 0 && da.max_qp == 3 &&
	    da.max_mr == 3, "query_device reports max_qp 3, max_mr 3");
	memset(&pa, 0, sizeof(pa));
	ok(sv.query_port(a.ctx, 1, &pa) == 0 &&
	    pa.active_mtu == IBV_MTU_2048, "SOFTVERBS_MTU=2048");
	rc = make_qp(a.pd, a.cq, IBV_QPT_RC, 4, 4);
	ok(rc != NULL, "SOFTVERBS_ALLOW_RC=1 accepts an RC QP");
	errno = 0;
	qp = make_qp(a.pd, a.cq, IBV_QPT_UC, 4, 4);
	ok(qp == NULL && errno == EBUSY, "the 4th QP fails EBUSY");
	if (rc != NULL)
		sv.destroy_qp(rc);
	mr[0] = sv.reg_mr(a.pd, a.buf, 64, IBV_ACCESS_LOCAL_WRITE);
	errno = 0;
	mr[1] = sv.reg_mr(a.pd, a.buf, 64, IBV_ACCESS_LOCAL_WRITE);
	ok(mr[0] != NULL && mr[1] == NULL && errno == ENOMEM,
	    "the 4th MR fails ENOMEM");
	if (mr[0] != NULL)
		sv.dereg_mr(mr[0]);
	ok(connect_ends(&a, &b) == 0, "connected");
	fill(a.buf, 8192, 5);
	ok(post_recv(&b, 0, 8192, 1) == 0 && post_send(&a, 0, 5000, 2, 1) == 0 &&
	    wait_wc(&b, IBV_WC_RECV, &wc) == 0 && wc.byte_len == 5000 &&
	    memcmp(a.buf, b.buf, 5000) == 0, "5000 bytes in 2048-byte datagrams");
	drain(&a);
	for (n = 0; n < 4; n++)
		if (post_send(&a, 0, 8, (uint64_t)n, 1) != 0)
			break;
	r = post_send(&a, 0, 8, 9, 1);
	ok(n == 4 && r == ENOMEM, "SOFTVERBS_MAX_SEND_WR=4: the 5th send fails");
	drain(&a);
	drain(&b);
	for (n = 0; n < 6; n++)
		if (post_recv(&b, 0, 64, (uint64_t)n) != 0)
			break;
	is_int(n, 5, "SOFTVERBS_MAX_RECV_WR=5: the 6th receive fails");
	end_close(&a);
	end_close(&b);
}

int
main(int argc, char **argv)
{
	char err[512];
	const char *p;
	int limits = argc > 1 && strcmp(argv[1], "limits") == 0;

	(void)plan;	/* the count is printed at the end */
	setenv("SOFTVERBS_IFACES", "lo", 1);
	unsetenv("SOFTVERBS_MAX_QP");
	unsetenv("SOFTVERBS_MAX_MR");
	unsetenv("SOFTVERBS_MAX_SEND_WR");
	unsetenv("SOFTVERBS_MAX_RECV_WR");
	unsetenv("SOFTVERBS_MTU");
	unsetenv("SOFTVERBS_ALLOW_RC");
	unsetenv("SOFTVERBS_DGRAM");
	if (limits) {
		setenv("SOFTVERBS_MAX_QP", "3", 1);
		setenv("SOFTVERBS_MAX_MR", "3", 1);
		setenv("SOFTVERBS_MAX_SEND_WR", "4", 1);
		setenv("SOFTVERBS_MAX_RECV_WR", "5", 1);
		setenv("SOFTVERBS_MTU", "2048", 1);
		setenv("SOFTVERBS_ALLOW_RC", "1", 1);
		path_mtu = IBV_MTU_2048;
		qp_depth = 4;
	}
	if (svl_open(&sv, err, sizeof(err)) != 0) {
		printf("not ok 1 - load %s: %s\n1..1\n", svl_path(), err);
		return 1;
	}
	{
		struct ibv_context *ctx = svl_open_by_name(&sv, "rdma_lo");
		struct ibv_port_attr pa;
		union ibv_gid g;
		int usable = ctx != NULL && sv.query_port(ctx, 1, &pa) == 0 &&
		    pa.state == IBV_PORT_ACTIVE &&
		    sv.query_gid(ctx, 1, 1, &g) == 0 && g.raw[12] == 127;

		if (ctx != NULL)
			sv.close_device(ctx);
		if (!usable) {
			dlclose(sv.handle);
			skip_all("the loopback interface is not up with "
			    "127.0.0.1");
		}
	}
	p = svl_path();
	diag("library %s", p);
	if (limits) {
		test_env_limits();
		dlclose(sv.handle);
		return done_testing();
	}
	test_devices();
	test_port_gid();
	test_limits();
	test_states();
	test_data();
	test_credit_ask();
	dlclose(sv.handle);
	return done_testing();
}
