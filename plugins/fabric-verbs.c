/* SPDX-License-Identifier: MIT */
/*
 * The verbs fabric: JACCL's RDMA setup, with flow control added. The verbs
 * library is opened at run time (libibverbs.so.1 on Linux, librdma.dylib
 * on macOS, or $JACCL_IBVERBS_LIB) and exactly JACCL's entry points are
 * resolved; post_send, post_recv and poll_cq are the header's inline
 * operations through the context. Each link gets what JACCL gives a
 * connection: its own context on the named device, a PD, one CQ of 64
 * entries, one UC queue pair (32 WRs, 1 SGE, no inline), port 1, MTU 1024,
 * PSN 7, the first IPv4-mapped GID published in a 32-byte record,
 * sgid_index 1, receives posted before the record leaves the rank.
 *
 * UC drops a message that finds no posted receive, so senders here only
 * send into buffers the receiver has announced: every 4 KiB frame starts
 * with a small header that returns credits (receive buffers re-posted
 * since the last report); a credit-only frame is sent when credits pile
 * up or the peer is about to run dry, and one credit is kept for it.
 * Nothing spins forever: a link with no completion for the timeout is
 * declared down, by name.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rt_group.h"
#include "util.h"

#ifdef __APPLE__
#define VERBS_LIB "librdma.dylib"
#else
#define VERBS_LIB "libibverbs.so.1"
#endif

#define FRAME 4096
#define HDR 16
#define PAYLOAD (FRAME - HDR)
#define NRX 32			/* receives kept posted per link (max_recv_wr) */
#define NTX 32			/* send frames per link (max_send_wr) */
#define PSN 7
#define WR_SEND 1
#define WR_RECV 2

/* Exactly the symbols JACCL resolves (plus query_device, for messages). */
static struct {
	void *dl;
	int users;
	struct ibv_device **(*get_device_list)(int *);
	void (*free_device_list)(struct ibv_device **);
	const char *(*get_device_name)(struct ibv_device *);
	struct ibv_context *(*open_device)(struct ibv_device *);
	int (*close_device)(struct ibv_context *);
	int (*query_device)(struct ibv_context *, struct ibv_device_attr *);
	int (*query_port)(struct ibv_context *, uint8_t, void *);
	int (*query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *);
	int (*dealloc_pd)(struct ibv_pd *);
	struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *,
	    struct ibv_comp_channel *, int);
	int (*destroy_cq)(struct ibv_cq *);
	struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
	int (*destroy_qp)(struct ibv_qp *);
	int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
	int (*dereg_mr)(struct ibv_mr *);
} V;

struct vrec {			/* JACCL's Destination, 32 bytes */
	int32_t lid, qpn, psn, pad;
	uint8_t gid[16];
};

struct fhdr {			/* at the start of every frame */
	uint32_t len;		/* payload bytes; 0: credits only */
	uint32_t credits;	/* receive buffers re-posted for the peer */
	uint32_t left;		/* the sender's credits after this frame */
	uint32_t magic;
};

#define FHDR_MAGIC 0x4a435631u	/* "JCV1" */

struct vlink {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *smr, *rmr;
	char *sbuf, *rbuf;
	struct vrec me;
	int credits;		/* frames we may send */
	int pending;		/* receives re-posted, not yet reported */
	int peer_left;		/* the peer's credits, as last heard */
	int txfree[NTX], ntxfree;
	int rxq[NRX], rxlen[NRX], rxhead, rxn;	/* arrived, not consumed */
	size_t rxoff;		/* consumed bytes of the head frame */
};

static void rt_verbs_unload(void);

static int
rt_verbs_load(struct jc_err *err)
{
	const char *lib = getenv("JACCL_IBVERBS_LIB");
	const char *e;

	if (V.users++ > 0)
		return 0;
	if (lib == NULL || *lib == '\0')
		lib = VERBS_LIB;
	V.dl = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	if (V.dl == NULL) {
		V.users = 0;
		e = dlerror();
		return jc_fail(err, -ENOENT, "cannot load the verbs library: %s",
		    e ? e : lib);
	}
#define SYM(f) do { \
		*(void **)&V.f = dlsym(V.dl, "ibv_" #f); \
		if (V.f == NULL) { \
			rt_verbs_unload(); \
			return jc_fail(err, -ENOENT, "%s: missing symbol ibv_" #f, lib); \
		} \
	} while (0)
	SYM(get_device_list);
	SYM(free_device_list);
	SYM(get_device_name);
	SYM(open_device);
	SYM(close_device);
	SYM(query_device);
	SYM(query_port);
	SYM(query_gid);
	SYM(alloc_pd);
	SYM(dealloc_pd);
	SYM(create_cq);
	SYM(destroy_cq);
	SYM(create_qp);
	SYM(destroy_qp);
	SYM(modify_qp);
	SYM(reg_mr);
	SYM(dereg_mr);
#undef SYM
	return 0;
}

static void
rt_verbs_unload(void)
{
	if (V.users > 0 && --V.users > 0)
		return;
	if (V.dl != NULL)
		dlclose(V.dl);
	memset(&V, 0, sizeof(V));
}

static int JC_PRINTF(4, 5)
link_fail(struct rt_link *l, struct jc_err *err, int code, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	l->dead = true;
	return jc_fail(err, code, "link to rank %d over %s (rank %d's %s): %s",
	    l->peer, l->device, l->peer, l->peer_device, why);
}

static int
post_recv(struct vlink *v, int slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(v->rbuf + (size_t)slot * FRAME),
	    .length = FRAME, .lkey = v->rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = ((uint64_t)WR_RECV << 16) | (uint64_t)slot,
	    .sg_list = &sge, .num_sge = 1 }, *bad;

	return v->qp->context->ops.post_recv(v->qp, &wr, &bad);
}

static int
open_link(struct rt_link *l, struct vlink *v, struct jc_err *err)
{
	struct ibv_device **list;
	struct ibv_qp_init_attr qia = { 0 };
	struct ibv_qp_attr qa = { 0 };
	struct ibv_port_attr pa;
	int n = 0, found = -1, access = IBV_ACCESS_LOCAL_WRITE |
	    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	char num[16];

	list = V.get_device_list(&n);
	for (int i = 0; list != NULL && i < n; i++)
		if (strcmp(V.get_device_name(list[i]), l->device) == 0)
			found = i;
	if (found < 0) {
		if (list)
			V.free_device_list(list);
		snprintf(num, sizeof(num), "%d", n);
		return link_fail(l, err, -ENODEV, "Could not find device "
		    "(%s available)", num);
	}
	v->ctx = V.open_device(list[found]);
	V.free_device_list(list);
	if (v->ctx == NULL)
		return link_fail(l, err, -ENODEV, "Could not open device%s", "");
	if ((v->pd = V.alloc_pd(v->ctx)) == NULL)
		return link_fail(l, err, -ENOMEM, "Couldn't allocate protection domain "
		    "(is the port down?)%s", "");
	if ((v->cq = V.create_cq(v->ctx, 64, NULL, NULL, 0)) == NULL)
		return link_fail(l, err, -ENOMEM, "Couldn't create completion queue%s", "");
	qia.send_cq = qia.recv_cq = v->cq;
	qia.qp_type = IBV_QPT_UC;
	qia.cap.max_send_wr = 32;
	qia.cap.max_recv_wr = 32;
	qia.cap.max_send_sge = qia.cap.max_recv_sge = 1;
	qia.cap.max_inline_data = 0;
	qia.sq_sig_all = 0;
	if ((v->qp = V.create_qp(v->pd, &qia)) == NULL) {
		int e = errno;

		/* Apple's driver allows 10 queue pairs per device; the next is EBUSY. */
		return link_fail(l, err, -e, "Creating the queue pair failed with "
		    "'%s (%d)'%s", strerror(e), e, e == EBUSY ?
		    ": the device has no queue pair left (Thunderbolt RDMA devices allow 10)" : "");
	}
	if (posix_memalign((void **)&v->sbuf, 4096, NTX * FRAME) != 0 ||
	    posix_memalign((void **)&v->rbuf, 4096, NRX * FRAME) != 0)
		return link_fail(l, err, -ENOMEM, "out of memory%s", "");
	memset(v->sbuf, 0, NTX * FRAME);
	memset(v->rbuf, 0, NRX * FRAME);
	if ((v->smr = V.reg_mr(v->pd, v->sbuf, NTX * FRAME, access)) == NULL ||
	    (v->rmr = V.reg_mr(v->pd, v->rbuf, NRX * FRAME, access)) == NULL)
		return link_fail(l, err, -ENOMEM, "Register memory region failed%s", "");
	qa.qp_state = IBV_QPS_INIT;
	qa.pkey_index = 0;
	qa.port_num = 1;
	qa.qp_access_flags = (unsigned)access;
	if (V.modify_qp(v->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	    IBV_QP_ACCESS_FLAGS) != 0)
		return link_fail(l, err, -EINVAL, "Changing the queue pair to INIT "
		    "failed%s", "");
	memset(&pa, 0, sizeof(pa));
	if (V.query_port(v->ctx, 1, &pa) != 0)
		return link_fail(l, err, -EIO, "Couldn't query port 1%s", "");
	v->me.lid = pa.lid;
	v->me.qpn = (int32_t)v->qp->qp_num;
	v->me.psn = PSN;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid g;
		static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

		if (V.query_gid(v->ctx, 1, i, &g) == 0 && memcmp(g.raw, pfx, 12) == 0) {
			memcpy(v->me.gid, g.raw, 16);
			found = -2;
			break;
		}
	}
	if (found != -2)
		return link_fail(l, err, -EADDRNOTAVAIL, "No IPv4-mapped GID for this "
		    "device. Thunderbolt RDMA ports only publish one once the "
		    "interface has an IPv4 address; assign one to %s", l->device + 5);
	/* receives first: nothing may arrive before they are posted */
	for (int i = 0; i < NRX; i++)
		if (post_recv(v, i) != 0)
			return link_fail(l, err, -EIO, "Recv failed%s", "");
	for (int i = 0; i < NTX; i++)
		v->txfree[v->ntxfree++] = i;
	v->credits = NRX;
	v->peer_left = NRX;
	return 0;
}

static int
verbs_prepare(struct rt_group *g, unsigned char *rec, struct jc_err *err)
{
	int rc;

	if ((rc = rt_verbs_load(err)) < 0)
		return rc;
	g->fctx = &V;
	for (size_t i = 0; i < g->nlinks; i++) {
		struct vlink *v = xcalloc(1, sizeof(*v));

		g->links[i].priv = v;
		if ((rc = open_link(&g->links[i], v, err)) < 0)
			return rc;
		memcpy(rec + i * RT_RECORD_SIZE, &v->me, sizeof(v->me));
	}
	return 0;
}

static int
verbs_connect(struct rt_group *g, const unsigned char *peer, struct jc_err *err)
{
	for (size_t i = 0; i < g->nlinks; i++) {
		struct rt_link *l = &g->links[i];
		struct vlink *v = l->priv;
		struct vrec pr;
		struct ibv_qp_attr qa = { 0 };
		uint64_t iid;
		int rc;

		memcpy(&pr, peer + i * RT_RECORD_SIZE, sizeof(pr));
		if (pr.psn != PSN)
			return link_fail(l, err, -EPROTO, "the peer's record is not a "
			    "verbs record (is it running another fabric?)%s", "");
		memcpy(&iid, pr.gid + 8, 8);
		qa.qp_state = IBV_QPS_RTR;
		qa.path_mtu = IBV_MTU_1024;
		qa.rq_psn = (uint32_t)pr.psn;
		qa.dest_qp_num = (uint32_t)pr.qpn;
		qa.ah_attr.dlid = (uint16_t)pr.lid;
		qa.ah_attr.sl = 0;
		qa.ah_attr.src_path_bits = 0;
		qa.ah_attr.port_num = 1;
		if (iid != 0) {
			qa.ah_attr.is_global = 1;
			qa.ah_attr.grh.hop_limit = 1;
			memcpy(qa.ah_attr.grh.dgid.raw, pr.gid, 16);
			qa.ah_attr.grh.sgid_index = 1;	/* JACCL's fixed index */
		}
		rc = V.modify_qp(v->qp, &qa, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
		if (rc != 0)
			return link_fail(l, err, -EIO, "Changing the queue pair to RTR "
			    "failed with errno %s", strerror(rc));
		memset(&qa, 0, sizeof(qa));
		qa.qp_state = IBV_QPS_RTS;
		qa.sq_psn = PSN;
		if ((rc = V.modify_qp(v->qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN)) != 0)
			return link_fail(l, err, -EIO, "Changing the queue pair to RTS "
			    "failed with errno %s", strerror(rc));
	}
	return 0;
}

/* Post one frame: payload (len bytes, may be 0) with the credits we owe. */
static int
send_frame(struct vlink *v, const void *p, size_t len)
{
	int slot = v->txfree[--v->ntxfree];
	char *f = v->sbuf + (size_t)slot * FRAME;
	struct fhdr h = { .len = (uint32_t)len, .credits = (uint32_t)v->pending,
	    .left = (uint32_t)(v->credits - 1), .magic = FHDR_MAGIC };
	struct ibv_sge sge = { .addr = (uintptr_t)f, .length = FRAME, .lkey = v->smr->lkey };
	struct ibv_send_wr wr = { .wr_id = ((uint64_t)WR_SEND << 16) | (uint64_t)slot,
	    .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
	    .send_flags = IBV_SEND_SIGNALED }, *bad;

	memcpy(f, &h, sizeof(h));
	if (len)
		memcpy(f + HDR, p, len);
	if (v->qp->context->ops.post_send(v->qp, &wr, &bad) != 0) {
		v->txfree[v->ntxfree++] = slot;
		return -EIO;
	}
	v->peer_left += v->pending;
	v->pending = 0;
	v->credits--;
	return 0;
}

/* Drain the CQ; returns completions seen or -EIO. */
static int
poll_link(struct rt_link *l, struct vlink *v, struct jc_err *err)
{
	struct ibv_wc wc[16];
	int n, seen = 0;

	while ((n = v->cq->context->ops.poll_cq(v->cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			int slot = (int)(wc[i].wr_id & 0xff), type = (int)(wc[i].wr_id >> 16);

			if (wc[i].status != IBV_WC_SUCCESS) {
				char s[16];

				snprintf(s, sizeof(s), "%d", (int)wc[i].status);
				return link_fail(l, err, -EIO, "completion with error "
				    "status %s", s);
			}
			if (type == WR_SEND) {
				v->txfree[v->ntxfree++] = slot;
				continue;
			}
			struct fhdr h;

			memcpy(&h, v->rbuf + (size_t)slot * FRAME, sizeof(h));
			if (h.magic != FHDR_MAGIC || h.len > PAYLOAD)
				return link_fail(l, err, -EPROTO, "malformed frame%s", "");
			v->credits += (int)h.credits;
			v->peer_left = (int)h.left;
			if (h.len == 0) {
				if (post_recv(v, slot) != 0)
					return link_fail(l, err, -EIO, "Recv failed%s", "");
				v->pending++;
			} else {
				int at = (v->rxhead + v->rxn++) % NRX;

				v->rxq[at] = slot;
				v->rxlen[at] = (int)h.len;
			}
		}
		seen += n;
	}
	if (n < 0)
		return link_fail(l, err, -EIO, "polling the completion queue failed%s", "");
	return seen;
}

static int
verbs_run(struct rt_group *g, struct rt_xfer *x, size_t n, struct jc_err *err)
{
	double last = jc_now();
	unsigned idle = 0;
	int rc;

	for (;;) {
		bool moved = false, open = false;

		for (size_t i = 0; i < n; i++) {
			struct rt_link *l = x[i].link;
			struct vlink *v = l->priv;

			if ((rc = poll_link(l, v, err)) < 0)
				return rc;
			moved |= rc > 0;
			/* only the first unfinished transfer of a kind per link moves */
			bool first = true;

			for (size_t j = 0; j < i; j++)
				if (x[j].link == l && x[j].send == x[i].send &&
				    x[j].done < x[j].len)
					first = false;
			if (!first || x[i].done >= x[i].len) {
				open |= x[i].done < x[i].len;
				continue;
			}
			if (x[i].send) {
				while (x[i].done < x[i].len && v->credits > 1 && v->ntxfree > 0) {
					size_t k = x[i].len - x[i].done;

					if (k > PAYLOAD)
						k = PAYLOAD;
					if (send_frame(v, (char *)x[i].buf + x[i].done, k) < 0)
						return link_fail(l, err, -EIO, "Send failed%s", "");
					x[i].done += k;
					moved = true;
				}
			} else {
				while (x[i].done < x[i].len && v->rxn > 0) {
					int at = v->rxhead, slot = v->rxq[at];
					size_t k = (size_t)v->rxlen[at] - v->rxoff;

					if (k > x[i].len - x[i].done)
						k = x[i].len - x[i].done;
					memcpy((char *)x[i].buf + x[i].done, v->rbuf +
					    (size_t)slot * FRAME + HDR + v->rxoff, k);
					x[i].done += k;
					v->rxoff += k;
					moved = true;
					if (v->rxoff < (size_t)v->rxlen[at])
						continue;
					v->rxoff = 0;
					v->rxhead = (v->rxhead + 1) % NRX;
					v->rxn--;
					if (post_recv(v, slot) != 0)
						return link_fail(l, err, -EIO, "Recv failed%s", "");
					v->pending++;
				}
			}
			open |= x[i].done < x[i].len;
		}
		/* return credits: in bulk, or at once when the peer runs dry */
		for (size_t i = 0; i < n; i++) {
			struct vlink *v = x[i].link->priv;

			if ((v->pending >= NRX / 2 || (v->pending >= 2 && v->peer_left <= 2)) &&
			    v->credits >= 1 && v->ntxfree > 0) {
				if (send_frame(v, NULL, 0) < 0)
					return link_fail(x[i].link, err, -EIO, "Send failed%s", "");
				moved = true;
			}
		}
		if (!open)
			return 0;
		if (moved) {
			last = jc_now();
			idle = 0;
		} else if (++idle > 256) {
			if (jc_now() - last >= g->timeout) {
				char t[32];

				snprintf(t, sizeof(t), "%g", g->timeout);
				for (size_t i = 0; i < n; i++)
					if (x[i].done < x[i].len)
						return link_fail(x[i].link, err, -ETIMEDOUT,
						    "no completion for %s s: the cable is down "
						    "or the peer stopped", t);
			}
			if (idle > 65536)
				usleep(100);
			else
				sched_yield();
		}
	}
}

static void
verbs_close(struct rt_group *g)
{
	for (size_t i = 0; i < g->nlinks; i++) {
		struct vlink *v = g->links[i].priv;

		if (v == NULL)
			continue;
		if (v->qp)
			V.destroy_qp(v->qp);
		if (v->smr)
			V.dereg_mr(v->smr);
		if (v->rmr)
			V.dereg_mr(v->rmr);
		if (v->cq)
			V.destroy_cq(v->cq);
		if (v->pd)
			V.dealloc_pd(v->pd);
		if (v->ctx)
			V.close_device(v->ctx);
		free(v->sbuf);
		free(v->rbuf);
		free(v);
		g->links[i].priv = NULL;
	}
	if (g->fctx != NULL)
		rt_verbs_unload();
	g->fctx = NULL;
}

bool
rt_fabric_verbs_available(const struct rt_group *g)
{
	struct jc_err err;
	struct ibv_device **list;
	int n = 0;
	size_t have = 0;

	if (rt_verbs_load(&err) < 0)
		return false;
	list = V.get_device_list(&n);
	for (size_t i = 0; i < g->nlinks; i++)
		for (int k = 0; list != NULL && k < n; k++)
			if (strcmp(V.get_device_name(list[k]), g->links[i].device) == 0) {
				have++;
				break;
			}
	if (list)
		V.free_device_list(list);
	rt_verbs_unload();
	return have == g->nlinks;
}

const struct rt_fabric_ops rt_fabric_verbs = {
	.name = "verbs",
	.prepare = verbs_prepare,
	.connect = verbs_connect,
	.run = verbs_run,
	.close = verbs_close,
};
