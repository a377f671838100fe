/* SPDX-License-Identifier: MIT */
/*
 * The verbs fabric: JACCL's RDMA setup and JACCL's data path. The verbs
 * library is opened at run time (libibverbs.so.1 on Linux, librdma.dylib
 * on macOS, or $JACCL_IBVERBS_LIB) and exactly JACCL's entry points are
 * resolved; post_send, post_recv and poll_cq are the header's inline
 * operations through the context. Each link gets what JACCL gives a
 * connection: its own context on the named device, a PD, one CQ of 64
 * entries, one UC queue pair (32 WRs, 1 SGE, no inline), port 1, MTU 1024,
 * PSN 7, the first IPv4-mapped GID published in a 32-byte record,
 * sgid_index 1.
 *
 * Data moves as JACCL moves it, so that what verify measures is what a
 * JACCL job gets: every transfer is cut in frames of JACCL's size for that
 * many bytes (4 KiB; from macOS 26.3 on, the largest of 8 KiB .. 512 KiB
 * that the transfer fills, see frame_for()), each frame a signaled SEND of
 * the whole frame into a whole-frame receive, two frames in flight per
 * link and direction (JACCL's pipeline of two buffers), receives posted
 * just before they are needed, with no header, no credit and no handshake:
 * like JACCL, it relies on the device holding a send until the far end has
 * a receive for it (Apple's link does; see tests/softverbs/sv.h). Nothing
 * spins forever: a link with no completion for the timeout is declared
 * down, by name.
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
#ifdef __APPLE__
#include <sys/sysctl.h>
#endif

#include <infiniband/verbs.h>

#include "rt_group.h"
#include "util.h"

#ifdef __APPLE__
#define VERBS_LIB "librdma.dylib"
#else
#define VERBS_LIB "libibverbs.so.1"
#endif

#define FRAME 4096		/* JACCL's FRAME_SIZE */
#define FRAME_CLASSES 8		/* 4 KiB << 0..7, as JACCL's BUFFER_SIZES */
#define MAX_FRAME (FRAME << (FRAME_CLASSES - 1))
#define PIPE 2			/* frames in flight per direction (NUM_BUFFERS) */
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

struct vlink {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *smr, *rmr;
	char *sbuf, *rbuf;	/* PIPE frames of the largest size each */
	size_t fmax;		/* largest frame this fabric uses */
	struct vrec me;
	/* the send and receive in progress on this link */
	struct rt_xfer *sx, *rx;
	size_t sframe, rframe;	/* their frame sizes */
	size_t soff, roff;	/* bytes handed to the device */
	size_t slen[PIPE];	/* payload of the frame in each send slot */
	int sbusy[PIPE], rbusy[PIPE];
	int rq[PIPE], rqn, rqh;	/* receive slots, in the order posted */
};

/* Frame classes in use: 1 (always 4 KiB, macOS 26.2) or 8 (26.3 on). */
static int frame_classes = 1;

/*
 * JACCL's frame for a message of len bytes: 4 KiB, or with the large
 * frames of macOS 26.3 and later the largest 4 KiB << k (k = 7 .. 1) the
 * message fills.
 */
static size_t
frame_for(size_t len)
{
	for (int k = frame_classes - 1; k > 0; k--)
		if (len >= ((size_t)FRAME << k))
			return (size_t)FRAME << k;
	return FRAME;
}

/*
 * Which frames JACCL uses on this host: large from macOS 26.3 on (JACCL
 * asks the OS at run time), small before and elsewhere; the environment
 * (JACCL_VERIFY_FRAMES=small|large) says it for hosts that are not Macs.
 * Every rank must decide the same, as with JACCL.
 */
static int
pick_frames(struct jc_err *err)
{
	const char *e = getenv("JACCL_VERIFY_FRAMES");

	frame_classes = 1;
	if (e != NULL && *e != '\0') {
		if (strcmp(e, "large") == 0)
			frame_classes = FRAME_CLASSES;
		else if (strcmp(e, "small") != 0)
			return jc_fail(err, -EINVAL, "JACCL_VERIFY_FRAMES='%.40s': "
			    "want small or large", e);
		return 0;
	}
#ifdef __APPLE__
	{
		char v[32] = "";
		size_t n = sizeof(v) - 1;
		int major = 0, minor = 0;

		if (sysctlbyname("kern.osproductversion", v, &n, NULL, 0) == 0 &&
		    sscanf(v, "%d.%d", &major, &minor) >= 1 &&
		    (major > 26 || (major == 26 && minor >= 3)))
			frame_classes = FRAME_CLASSES;
	}
#endif
	return 0;
}

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

/* A whole-frame receive into slot (JACCL: post_recv of the frame buffer). */
static int
post_recv(struct vlink *v, int slot, size_t frame)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(v->rbuf + (size_t)slot * v->fmax),
	    .length = (uint32_t)frame, .lkey = v->rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = ((uint64_t)WR_RECV << 16) |
	    ((uint64_t)slot << 8), .sg_list = &sge, .num_sge = 1 }, *bad;

	return v->qp->context->ops.post_recv(v->qp, &wr, &bad);
}

/* A whole-frame signaled SEND from slot (JACCL: post_send). */
static int
post_send(struct vlink *v, int slot, size_t frame)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(v->sbuf + (size_t)slot * v->fmax),
	    .length = (uint32_t)frame, .lkey = v->smr->lkey };
	struct ibv_send_wr wr = { .wr_id = ((uint64_t)WR_SEND << 16) |
	    ((uint64_t)slot << 8), .sg_list = &sge, .num_sge = 1,
	    .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	return v->qp->context->ops.post_send(v->qp, &wr, &bad);
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
	v->fmax = frame_for(SIZE_MAX);
	if (posix_memalign((void **)&v->sbuf, 4096, PIPE * v->fmax) != 0 ||
	    posix_memalign((void **)&v->rbuf, 4096, PIPE * v->fmax) != 0)
		return link_fail(l, err, -ENOMEM, "out of memory%s", "");
	memset(v->sbuf, 0, PIPE * v->fmax);
	memset(v->rbuf, 0, PIPE * v->fmax);
	if ((v->smr = V.reg_mr(v->pd, v->sbuf, PIPE * v->fmax, access)) == NULL ||
	    (v->rmr = V.reg_mr(v->pd, v->rbuf, PIPE * v->fmax, access)) == NULL)
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
	return 0;
}

static int
verbs_prepare(struct rt_group *g, unsigned char *rec, struct jc_err *err)
{
	int rc;

	if ((rc = pick_frames(err)) < 0)
		return rc;
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

/* Completions of one link; returns how many, or a negative errno. */
static int
poll_link(struct rt_link *l, struct vlink *v, struct jc_err *err)
{
	struct ibv_wc wc[4 * PIPE];
	int n, seen = 0;

	/*
	 * One poll, as JACCL's loop does (at most 2 * PIPE can be pending):
	 * polling again until empty would wait in the device for traffic
	 * that only comes once the next frames are posted.
	 */
	if ((n = v->cq->context->ops.poll_cq(v->cq, 4 * PIPE, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			int slot = (int)((wc[i].wr_id >> 8) & 0xff);
			int type = (int)(wc[i].wr_id >> 16);

			if (wc[i].status != IBV_WC_SUCCESS) {
				char s[16];

				snprintf(s, sizeof(s), "%d", (int)wc[i].status);
				return link_fail(l, err, -EIO, "completion with error "
				    "status %s", s);
			}
			if (slot >= PIPE)
				return link_fail(l, err, -EPROTO, "completion of an "
				    "unknown work request%s", "");
			if (type == WR_SEND) {
				v->sbusy[slot] = 0;
				v->sx->done += v->slen[slot];
				continue;
			}
			/* receives complete in the order they were posted */
			if (v->rqn == 0 || v->rq[v->rqh] != slot)
				return link_fail(l, err, -EPROTO, "receive completed "
				    "out of order%s", "");
			{
				struct rt_xfer *x = v->rx;
				size_t k = x->len - x->done;

				if (k > v->rframe)
					k = v->rframe;
				memcpy((char *)x->buf + x->done,
				    v->rbuf + (size_t)slot * v->fmax, k);
				x->done += k;
			}
			v->rbusy[slot] = 0;
			v->rqh = (v->rqh + 1) % PIPE;
			v->rqn--;
		}
		seen += n;
	}
	if (n < 0)
		return link_fail(l, err, -EIO, "polling the completion queue failed%s", "");
	return seen;
}

/*
 * Hands the device what the link's current transfers allow: receives for
 * the next frames (at most PIPE posted), then sends of the next frames (at
 * most PIPE in flight). Returns 1 if something was posted, 0, or -EIO.
 */
static int
feed_link(struct vlink *v)
{
	int moved = 0;

	while (v->rx != NULL && v->roff < v->rx->len && v->rqn < PIPE) {
		int slot = v->rbusy[0] ? 1 : 0;

		if (post_recv(v, slot, v->rframe) != 0)
			return -EIO;
		v->rbusy[slot] = 1;
		v->rq[(v->rqh + v->rqn) % PIPE] = slot;
		v->rqn++;
		v->roff += v->rframe;
		moved = 1;
	}
	while (v->sx != NULL && v->soff < v->sx->len && (!v->sbusy[0] || !v->sbusy[1])) {
		int slot = v->sbusy[0] ? 1 : 0;
		size_t k = v->sx->len - v->soff;

		if (k > v->sframe)
			k = v->sframe;
		memcpy(v->sbuf + (size_t)slot * v->fmax, (const char *)v->sx->buf + v->soff, k);
		if (post_send(v, slot, v->sframe) != 0)
			return -EIO;
		v->sbusy[slot] = 1;
		v->slen[slot] = k;
		v->soff += k;
		moved = 1;
	}
	return moved;
}

/* The link's next unfinished transfer of a kind becomes its current one. */
static void
take_next(struct vlink *v, struct rt_link *l, struct rt_xfer *x, size_t n)
{
	if (v->sx != NULL && v->sx->done >= v->sx->len)
		v->sx = NULL;
	if (v->rx != NULL && v->rx->done >= v->rx->len)
		v->rx = NULL;
	for (size_t i = 0; i < n && (v->sx == NULL || v->rx == NULL); i++) {
		if (x[i].link != l || x[i].done >= x[i].len)
			continue;
		if (x[i].send && v->sx == NULL && &x[i] != v->rx) {
			v->sx = &x[i];
			v->sframe = frame_for(x[i].len);
			v->soff = x[i].done;
		} else if (!x[i].send && v->rx == NULL && &x[i] != v->sx) {
			v->rx = &x[i];
			v->rframe = frame_for(x[i].len);
			v->roff = x[i].done;
		}
	}
}

static int
verbs_run(struct rt_group *g, struct rt_xfer *x, size_t n, struct jc_err *err)
{
	double last = jc_now();
	unsigned idle = 0;
	int rc;

	for (size_t i = 0; i < g->nlinks; i++) {
		struct vlink *v = g->links[i].priv;

		v->sx = v->rx = NULL;
	}
	for (;;) {
		bool moved = false, open = false;

		for (size_t i = 0; i < n; i++) {
			struct rt_link *l = x[i].link;
			struct vlink *v = l->priv;

			/* each link once per round, at its first transfer */
			bool first = true;

			for (size_t j = 0; j < i && first; j++)
				first = x[j].link != l;
			if (!first)
				continue;
			if ((rc = poll_link(l, v, err)) < 0)
				return rc;
			moved |= rc > 0;
			take_next(v, l, x, n);
			if ((rc = feed_link(v)) < 0)
				return link_fail(l, err, -EIO, "%s failed",
				    v->sx != NULL ? "Send" : "Recv");
			moved |= rc > 0;
			open |= v->sx != NULL || v->rx != NULL;
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
						    "or loses data, or the peer stopped", t);
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
