/* SPDX-License-Identifier: MIT */
/*
 * softverbs verbs API: the libibverbs entry points a JACCL-style runtime
 * resolves with dlsym (device list, contexts, PDs, CQs, QPs, MRs) and the
 * post_send/post_recv/poll_cq operations that <infiniband/verbs.h> inlines
 * call through ibv_context.ops. It behaves like Apple's Thunderbolt RDMA:
 * UC queue pairs only, queues that report 64 sends and 128 receives but take
 * at most 63 of each in flight, a SEND that must span as many 4 KiB frames
 * as the RECV it lands in (else it is lost, said on stderr), 10 QPs and
 * about 100 MRs per device, MTU 1024. A message is sent
 * as UDP datagrams (32-byte header + up to one MTU of payload) from the QP's
 * socket, which is bound to the interface; the QP number is the socket's
 * UDP port, so the peer's address comes from the destination GID
 * (::ffff:a.b.c.d) and its port from dest_qp_num. Receive progress happens
 * inside poll_cq, post_send and before each post_recv. Like Apple's link
 * (see sv.h for why), a send waits at the sender until the far end has a
 * receive posted for it: receivers announce their receives as credits and
 * senders queue what they have no credit for. A message longer than the
 * posted buffer, or with a lost datagram, is dropped as on UC and the
 * sender never learns about it (lost datagrams are reported on stderr). A
 * cable that is down carries nothing: sends on it are lost.
 *
 * Environment (read once, at the first call, except the interface lists):
 *   SOFTVERBS_IFACES       comma-separated interfaces that get a device
 *                          (default: all but lo and the management ones)
 *   SOFTVERBS_MGMT_IFACE   management interfaces left out (default en0,eth0)
 *   SOFTVERBS_MAX_QP       QPs per device (10; then EBUSY; 0: none at all)
 *   SOFTVERBS_MAX_MR       MRs per device (100; then ENOMEM)
 *   SOFTVERBS_MAX_SEND_WR  send queue size a QP reports and accepts (64); at
 *                          most 63 sends outstanding whatever it is, the next
 *                          post fails ENOMEM
 *   SOFTVERBS_MAX_RECV_WR  receive queue size reported and accepted (128); at
 *                          most 63 receives posted, the next fails ENOMEM
 *   SOFTVERBS_MTU          port MTU in bytes (1024)
 *   SOFTVERBS_ALLOW_RC     1: accept RC QPs (they behave like UC)
 *   SOFTVERBS_PD_NEEDS_LINK 0: allow ibv_alloc_pd on a port that is down
 *   SOFTVERBS_DGRAM        payload bytes per datagram (0: the path MTU);
 *                          must be the same on every host
 *   SOFTVERBS_RCVBUF       socket receive buffer per QP (8 MiB)
 *   SOFTVERBS_YIELD        0: do not sched_yield() in an empty poll_cq
 *   SOFTVERBS_WAIT_US      an empty poll_cq sleeps until a datagram comes
 *                          for any QP of the process, at most this long
 *                          (200; 0: yield at once, as a spinning CPU)
 *   SOFTVERBS_DEBUG        1: say on stderr why messages are dropped
 */
#include "config.h"
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "sv.h"

/* Both are function-like macros in verbs.h that wrap the real symbols. */
#undef ibv_query_port
#undef ibv_reg_mr

#define SV_MAGIC	0x53564231u	/* "SVB1" */
#define SV_HDR_IMM	0x1
#define SV_HDR_CREDIT	0x2	/* no payload: msn = the sender's limit */
#define SV_HDR_ASK	0x4	/* no payload: please send your limit */
#define SV_ASK_NS	1000000	/* a blocked sender asks again after 1 ms */

/* The datagram header, all fields big-endian. */
struct sv_hdr {
	uint32_t	magic;
	uint32_t	dst_qpn;
	uint32_t	src_qpn;
	uint32_t	msn;		/* message sequence number */
	uint32_t	len;		/* whole message */
	uint32_t	off;		/* of this fragment */
	uint32_t	imm;
	uint32_t	flags;
};
_Static_assert(sizeof(struct sv_hdr) == SV_HDR_LEN, "header size");

struct sv_limits sv_lim;

static pthread_once_t sv_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t sv_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sv_device **sv_devs;
static int sv_ndev;
static struct sv_context *sv_ctxs;	/* open contexts, under sv_reg_lock */

static int sv_post_send(struct ibv_qp *, struct ibv_send_wr *,
    struct ibv_send_wr **);
static int sv_post_recv(struct ibv_qp *, struct ibv_recv_wr *,
    struct ibv_recv_wr **);
static int sv_poll_cq(struct ibv_cq *, int, struct ibv_wc *);
static void push_sends(struct sv_qp *);
static void progress(struct sv_qp *);
static void send_ctl(struct sv_qp *, uint32_t, uint32_t);

void
sv_debug(const char *fmt, ...)
{
	va_list ap;

	if (!sv_lim.debug)
		return;
	va_start(ap, fmt);
	fputs("softverbs: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int
env_int(const char *name, int def, int min, int max)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "softverbs: ignoring %s='%s' (want %d..%d)\n",
		    name, s, min, max);
		return def;
	}
	return (int)v;
}

static void
sv_init(void)
{
	sv_lim.debug = env_int("SOFTVERBS_DEBUG", 0, 0, 1);
	sv_lim.max_qp = env_int("SOFTVERBS_MAX_QP", 10, 0, 1024);
	sv_lim.max_mr = env_int("SOFTVERBS_MAX_MR", 100, 1, 4095);
	sv_lim.max_send_wr = env_int("SOFTVERBS_MAX_SEND_WR", 64, 1, 4096);
	sv_lim.max_recv_wr = env_int("SOFTVERBS_MAX_RECV_WR", 128, 1, 4096);
	sv_lim.mtu = env_int("SOFTVERBS_MTU", 1024, 256, 4096);
	sv_lim.allow_rc = env_int("SOFTVERBS_ALLOW_RC", 0, 0, 1);
	sv_lim.yield = env_int("SOFTVERBS_YIELD", 1, 0, 1);
	sv_lim.wait_us = env_int("SOFTVERBS_WAIT_US", 200, 0, 1000000);
	sv_lim.dgram = env_int("SOFTVERBS_DGRAM", 0, 0, 65000);
	sv_lim.pd_needs_link = env_int("SOFTVERBS_PD_NEEDS_LINK", 1, 0, 1);
	sv_lim.rcvbuf = env_int("SOFTVERBS_RCVBUF", 8 << 20, 65536, 1 << 30);
	if (sv_lim.mtu & (sv_lim.mtu - 1))
		sv_lim.mtu = 1024;
}

static void
sv_start(void)
{
	pthread_once(&sv_once, sv_init);
}

__attribute__((destructor)) static void
sv_fini(void)
{
	int i;

	for (i = 0; i < sv_ndev; i++) {
		pthread_mutex_destroy(&sv_devs[i]->lock);
		free(sv_devs[i]->mrs);
		free(sv_devs[i]);
	}
	free(sv_devs);
	sv_devs = NULL;
	sv_ndev = 0;
}

static int64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static enum ibv_mtu
mtu_enum(int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return IBV_MTU_1024;
	}
}

static struct sv_device *
dev_of(struct ibv_context *ctx)
{
	return ((struct sv_context *)ctx)->dev;
}

/* Returns the device for an interface, creating it; NULL on ENOMEM. */
static struct sv_device *
device_for(const char *ifname)
{
	struct sv_device *d, **v;
	int i;

	for (i = 0; i < sv_ndev; i++)
		if (strcmp(sv_devs[i]->ifname, ifname) == 0)
			return sv_devs[i];
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	if ((d->mrs = calloc((size_t)sv_lim.max_mr, sizeof(*d->mrs))) == NULL ||
	    (v = realloc(sv_devs, (size_t)(sv_ndev + 1) * sizeof(*v))) == NULL) {
		free(d->mrs);
		free(d);
		return NULL;
	}
	sv_devs = v;
	snprintf(d->ifname, sizeof(d->ifname), "%s", ifname);
	d->index = sv_ndev;
	pthread_mutex_init(&d->lock, NULL);
	d->dev.node_type = IBV_NODE_CA;
	/* Apple's driver reports transport "Thunderbolt (100)". */
	d->dev.transport_type = (enum ibv_transport_type)100;
	snprintf(d->dev.name, sizeof(d->dev.name), "rdma_%s", ifname);
	snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "uverbs%d",
	    d->index);
	snprintf(d->dev.dev_path, sizeof(d->dev.dev_path),
	    "/sys/class/infiniband_verbs/uverbs%d", d->index);
	snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path),
	    "/sys/class/infiniband/rdma_%s", ifname);
	sv_devs[sv_ndev++] = d;
	return d;
}

SV_API struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;
	char **names;
	size_t n, i;

	sv_start();
	if ((names = sv_link_names()) == NULL)
		return NULL;
	for (n = 0; names[n] != NULL; n++)
		;
	if ((list = calloc(n + 1, sizeof(*list))) == NULL) {
		sv_names_free(names);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&sv_reg_lock);
	for (i = 0; i < n; i++) {
		struct sv_device *d = device_for(names[i]);

		if (d == NULL) {
			pthread_mutex_unlock(&sv_reg_lock);
			sv_names_free(names);
			free(list);
			errno = ENOMEM;
			return NULL;
		}
		list[i] = &d->dev;
	}
	pthread_mutex_unlock(&sv_reg_lock);
	sv_names_free(names);
	if (num_devices != NULL)
		*num_devices = (int)n;
	return list;
}

SV_API void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

SV_API const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device != NULL ? device->name : NULL;
}

static uint64_t
guid_of(const struct sv_link *l)
{
	union ibv_gid gid;
	uint64_t g;

	sv_gid(l, 0, &gid);
	memcpy(&g, &gid.raw[8], 8);	/* already in network order */
	return g;
}

SV_API __be64
ibv_get_device_guid(struct ibv_device *device)
{
	struct sv_device *d = (struct sv_device *)device;
	struct sv_link l;

	if (sv_link_get(d->ifname, &l) != 0)
		return 0;
	return guid_of(&l);
}

SV_API struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct sv_device *d = (struct sv_device *)device;
	struct sv_context *c;
	struct sv_link l;

	sv_start();
	if (device == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (sv_link_get(d->ifname, &l) != 0)
		return NULL;
	if (!l.exists) {
		errno = ENODEV;
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->dev = d;
	c->ctx.device = device;
	c->ctx.cmd_fd = -1;
	c->ctx.async_fd = -1;
	c->ctx.num_comp_vectors = 1;
	c->ctx.abi_compat = NULL;	/* not extended: inlines use ops */
	c->ctx.ops.poll_cq = sv_poll_cq;
	c->ctx.ops.post_send = sv_post_send;
	c->ctx.ops.post_recv = sv_post_recv;
	pthread_mutex_init(&c->ctx.mutex, NULL);
	pthread_mutex_lock(&sv_reg_lock);
	c->next_ctx = sv_ctxs;
	sv_ctxs = c;
	pthread_mutex_unlock(&sv_reg_lock);
	return &c->ctx;
}

static void qp_free(struct sv_context *, struct sv_qp *);

SV_API int
ibv_close_device(struct ibv_context *context)
{
	struct sv_context *c = (struct sv_context *)context;
	struct sv_device *d;
	int i;

	if (c == NULL)
		return EINVAL;
	d = c->dev;
	pthread_mutex_lock(&sv_reg_lock);
	for (struct sv_context **pp = &sv_ctxs; *pp != NULL; pp = &(*pp)->next_ctx) {
		if (*pp == c) {
			*pp = c->next_ctx;
			break;
		}
	}
	pthread_mutex_unlock(&sv_reg_lock);
	/* Whatever the caller left behind goes with the context. */
	while (c->qps != NULL)
		qp_free(c, c->qps);
	pthread_mutex_lock(&d->lock);
	for (i = 0; i < sv_lim.max_mr; i++) {
		if (d->mrs[i] != NULL && d->mrs[i]->mr.context == context) {
			free(d->mrs[i]);
			d->mrs[i] = NULL;
			d->nmr--;
		}
	}
	pthread_mutex_unlock(&d->lock);
	while (c->cqs != NULL) {
		struct sv_cq *cq = c->cqs;

		c->cqs = cq->next;
		free(cq->ring);
		free(cq);
	}
	while (c->pds != NULL) {
		struct sv_pd *pd = c->pds;

		c->pds = pd->next;
		free(pd);
	}
	pthread_mutex_destroy(&c->ctx.mutex);
	free(c);
	return 0;
}

SV_API int
ibv_query_device(struct ibv_context *context,
    struct ibv_device_attr *attr)
{
	struct sv_link l;

	if (context == NULL || attr == NULL)
		return EINVAL;
	if (sv_link_get(dev_of(context)->ifname, &l) != 0)
		return errno;
	memset(attr, 0, sizeof(*attr));
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "softverbs 1");
	attr->node_guid = guid_of(&l);
	attr->sys_image_guid = attr->node_guid;
	attr->max_mr_size = 1ULL << 31;
	attr->page_size_cap = 4096 | 16384;
	attr->max_qp = sv_lim.max_qp;
	attr->max_qp_wr = sv_lim.max_send_wr;
	attr->max_sge = SV_MAX_SGE;
	attr->max_cq = 64;
	attr->max_cqe = 4096;
	attr->max_mr = sv_lim.max_mr;
	attr->max_pd = 64;
	attr->atomic_cap = IBV_ATOMIC_NONE;
	attr->max_pkeys = 1;
	attr->phys_port_cnt = 1;
	return 0;
}

SV_API int
ibv_query_port(struct ibv_context *context, uint8_t port_num,
    struct _compat_ibv_port_attr *port_attr)
{
	struct ibv_port_attr a;
	struct sv_link l;
	struct sv_device *d;

	if (context == NULL || port_attr == NULL || port_num != 1)
		return EINVAL;
	d = dev_of(context);
	if (sv_link_get(d->ifname, &l) != 0)
		return errno;
	memset(&a, 0, sizeof(a));
	a.state = l.up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a.max_mtu = mtu_enum(sv_lim.mtu);
	a.active_mtu = mtu_enum(sv_lim.mtu);
	a.gid_tbl_len = SV_GID_TBL_LEN;
	a.max_msg_sz = 1U << 31;
	a.pkey_tbl_len = 1;
	a.lid = (uint16_t)(d->index + 1);
	a.sm_lid = a.lid;
	a.max_vl_num = 1;
	a.active_width = 4;	/* 8X, as Apple reports */
	a.active_speed = 4;	/* 10.0 Gbps */
	a.phys_state = l.up ? 5 : 3;	/* LinkUp / Disabled */
	a.link_layer = IBV_LINK_LAYER_UNSPECIFIED;
	/* Only the fields every version of the struct has. */
	memcpy(port_attr, &a, offsetof(struct ibv_port_attr, port_cap_flags2));
	return 0;
}

SV_API int
ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
    union ibv_gid *gid)
{
	struct sv_link l;

	if (context == NULL || gid == NULL || port_num != 1 || index < 0 ||
	    index >= SV_GID_TBL_LEN) {
		errno = EINVAL;
		return -1;
	}
	if (sv_link_get(dev_of(context)->ifname, &l) != 0)
		return -1;
	sv_gid(&l, index, gid);
	return 0;
}

static int
gid_entry(struct ibv_context *context, const struct sv_link *l,
    uint32_t idx, struct ibv_gid_entry *e)
{
	static const union ibv_gid zero;

	memset(e, 0, sizeof(*e));
	sv_gid(l, (int)idx, &e->gid);
	if (memcmp(&e->gid, &zero, sizeof(zero)) == 0)
		return ENODATA;
	e->gid_index = idx;
	e->port_num = 1;
	e->gid_type = IBV_GID_TYPE_IB;
	e->ndev_ifindex = if_nametoindex(dev_of(context)->ifname);
	return 0;
}

/* What the inline ibv_query_gid_ex() calls. */
SV_API int
_ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
    uint32_t gid_index, struct ibv_gid_entry *entry, uint32_t flags,
    size_t entry_size)
{
	struct sv_link l;

	if (context == NULL || entry == NULL || port_num != 1 || flags != 0 ||
	    gid_index >= SV_GID_TBL_LEN || entry_size < sizeof(*entry))
		return EINVAL;
	if (sv_link_get(dev_of(context)->ifname, &l) != 0)
		return errno;
	return gid_entry(context, &l, gid_index, entry);
}

/* What the inline ibv_query_gid_table() calls. */
SV_API ssize_t
_ibv_query_gid_table(struct ibv_context *context,
    struct ibv_gid_entry *entries, size_t max_entries, uint32_t flags,
    size_t entry_size)
{
	struct sv_link l;
	size_t n = 0;
	uint32_t i;

	if (context == NULL || entries == NULL || flags != 0 ||
	    entry_size < sizeof(*entries))
		return -EINVAL;
	if (sv_link_get(dev_of(context)->ifname, &l) != 0)
		return -errno;
	for (i = 0; i < SV_GID_TBL_LEN; i++) {
		struct ibv_gid_entry e;

		if (gid_entry(context, &l, i, &e) != 0)
			continue;
		if (n == max_entries)
			return -ENOMEM;
		memcpy((char *)entries + n * entry_size, &e, sizeof(e));
		n++;
	}
	return (ssize_t)n;
}

SV_API int
ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
    __be16 *pkey)
{
	if (context == NULL || pkey == NULL || port_num != 1 || index != 0)
		return EINVAL;
	*pkey = htons(0xffff);
	return 0;
}

static int
link_up(struct sv_device *d)
{
	struct sv_link l;

	return sv_link_get(d->ifname, &l) == 0 && l.up;
}

SV_API struct ibv_pd *
ibv_alloc_pd(struct ibv_context *context)
{
	struct sv_context *c = (struct sv_context *)context;
	struct sv_pd *pd;

	if (c == NULL) {
		errno = EINVAL;
		return NULL;
	}
	/* Apple's driver refuses while the port is down. */
	if (sv_lim.pd_needs_link && !link_up(c->dev)) {
		sv_debug("%s: alloc_pd: port is down", c->dev->dev.name);
		errno = ENETDOWN;
		return NULL;
	}
	if ((pd = calloc(1, sizeof(*pd))) == NULL)
		return NULL;
	pd->pd.context = context;
	pthread_mutex_lock(&context->mutex);
	pd->next = c->pds;
	c->pds = pd;
	pthread_mutex_unlock(&context->mutex);
	return &pd->pd;
}

SV_API int
ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct sv_pd *pd = (struct sv_pd *)ibpd, **pp;
	struct sv_context *c;

	if (pd == NULL)
		return EINVAL;
	c = (struct sv_context *)ibpd->context;
	pthread_mutex_lock(&c->ctx.mutex);
	if (pd->users > 0) {
		pthread_mutex_unlock(&c->ctx.mutex);
		return EBUSY;
	}
	for (pp = &c->pds; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == pd) {
			*pp = pd->next;
			break;
		}
	}
	pthread_mutex_unlock(&c->ctx.mutex);
	free(pd);
	return 0;
}

static struct ibv_mr *
reg_mr(struct ibv_pd *ibpd, void *addr, size_t length, int access)
{
	struct sv_pd *pd = (struct sv_pd *)ibpd;
	struct sv_device *d;
	struct sv_mr *mr;
	int slot;

	if (pd == NULL || addr == NULL || length == 0 ||
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	d = dev_of(ibpd->context);
	if ((mr = calloc(1, sizeof(*mr))) == NULL)
		return NULL;
	pthread_mutex_lock(&ibpd->context->mutex);
	pthread_mutex_lock(&d->lock);
	if (d->nmr >= sv_lim.max_mr) {
		pthread_mutex_unlock(&d->lock);
		pthread_mutex_unlock(&ibpd->context->mutex);
		sv_debug("%s: reg_mr: %d regions already", d->dev.name, d->nmr);
		free(mr);
		errno = ENOMEM;
		return NULL;
	}
	for (slot = 0; d->mrs[slot] != NULL; slot++)
		;
	d->mr_gen = (d->mr_gen + 1) & 0xfffff;
	mr->slot = slot;
	mr->access = access;
	mr->mr.context = ibpd->context;
	mr->mr.pd = ibpd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = (uint32_t)slot;
	mr->mr.lkey = (d->mr_gen << 12) | (uint32_t)slot;
	mr->mr.rkey = mr->mr.lkey;
	d->mrs[slot] = mr;
	d->nmr++;
	pd->users++;
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_unlock(&ibpd->context->mutex);
	return &mr->mr;
}

SV_API struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return reg_mr(pd, addr, length, access);
}

SV_API struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
    unsigned int access)
{
	if (iova != (uintptr_t)addr) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return reg_mr(pd, addr, length, (int)access);
}

SV_API int
ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct sv_mr *mr = (struct sv_mr *)ibmr;
	struct sv_device *d;

	if (mr == NULL)
		return EINVAL;
	d = dev_of(ibmr->context);
	pthread_mutex_lock(&ibmr->context->mutex);
	pthread_mutex_lock(&d->lock);
	if (d->mrs[mr->slot] == mr) {
		d->mrs[mr->slot] = NULL;
		d->nmr--;
	}
	pthread_mutex_unlock(&d->lock);
	((struct sv_pd *)ibmr->pd)->users--;
	pthread_mutex_unlock(&ibmr->context->mutex);
	free(mr);
	return 0;
}

/*
 * Finds the region behind an SGE: same PD, range inside it, and write
 * access when the data is written into it. Caller holds the context lock.
 */
static int
sge_ok(struct sv_qp *qp, const struct sv_sge *s, int write)
{
	struct sv_device *d = dev_of(qp->qp.context);
	struct sv_mr *mr;
	int ok = 0;

	if (s->length == 0)
		return 1;
	pthread_mutex_lock(&d->lock);
	mr = d->mrs[(s->lkey & 0xfff) % (uint32_t)sv_lim.max_mr];
	if (mr != NULL && mr->mr.lkey == s->lkey && mr->mr.pd == qp->qp.pd &&
	    s->addr >= (uintptr_t)mr->mr.addr &&
	    s->addr - (uintptr_t)mr->mr.addr <= mr->mr.length &&
	    s->length <= mr->mr.length - (s->addr - (uintptr_t)mr->mr.addr) &&
	    (!write || (mr->access & IBV_ACCESS_LOCAL_WRITE)))
		ok = 1;
	pthread_mutex_unlock(&d->lock);
	return ok;
}

SV_API struct ibv_cq *
ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
    struct ibv_comp_channel *channel, int comp_vector)
{
	struct sv_context *c = (struct sv_context *)context;
	struct sv_cq *cq;

	if (c == NULL || cqe < 1 || cqe > 4096 || channel != NULL) {
		errno = EINVAL;
		return NULL;
	}
	if ((cq = calloc(1, sizeof(*cq))) == NULL)
		return NULL;
	if ((cq->ring = calloc((size_t)cqe, sizeof(*cq->ring))) == NULL) {
		free(cq);
		return NULL;
	}
	cq->cap = cqe;
	cq->cq.context = context;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = cqe;
	pthread_mutex_lock(&context->mutex);
	cq->next = c->cqs;
	c->cqs = cq;
	pthread_mutex_unlock(&context->mutex);
	return &cq->cq;
}

SV_API int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct sv_cq *cq = (struct sv_cq *)ibcq, **pp;
	struct sv_context *c;

	if (cq == NULL)
		return EINVAL;
	c = (struct sv_context *)ibcq->context;
	pthread_mutex_lock(&c->ctx.mutex);
	if (cq->users > 0) {
		pthread_mutex_unlock(&c->ctx.mutex);
		return EBUSY;
	}
	for (pp = &c->cqs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == cq) {
			*pp = cq->next;
			break;
		}
	}
	pthread_mutex_unlock(&c->ctx.mutex);
	free(cq->ring);
	free(cq);
	return 0;
}

/* Appends a completion; caller holds the context lock. */
static void
cq_push(struct sv_cq *cq, const struct ibv_wc *wc, struct sv_qp *qp,
    int retire)
{
	struct sv_cqe *e;

	if (cq->count == cq->cap) {
		sv_debug("CQ overrun (%d entries)", cq->cap);
		cq->overrun = 1;
		return;
	}
	e = &cq->ring[(cq->head + cq->count) % cq->cap];
	e->wc = *wc;
	e->qp = qp;
	e->retire = retire;
	cq->count++;
}

SV_API struct ibv_qp *
ibv_create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *init)
{
	struct sv_pd *pd = (struct sv_pd *)ibpd;
	struct sv_context *c;
	struct sv_device *d;
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	struct sv_qp *qp;
	int size;

	if (pd == NULL || init == NULL || init->send_cq == NULL ||
	    init->recv_cq == NULL || init->srq != NULL ||
	    init->send_cq->context != ibpd->context ||
	    init->recv_cq->context != ibpd->context) {
		errno = EINVAL;
		return NULL;
	}
	c = (struct sv_context *)ibpd->context;
	d = c->dev;
	if (init->qp_type == IBV_QPT_RC && !sv_lim.allow_rc) {
		/* Apple: errno 102, which is EOPNOTSUPP on macOS */
		sv_debug("%s: create_qp: RC is not supported", d->dev.name);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (init->qp_type != IBV_QPT_UC && init->qp_type != IBV_QPT_RC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (init->cap.max_send_wr > (uint32_t)sv_lim.max_send_wr ||
	    init->cap.max_recv_wr > (uint32_t)sv_lim.max_recv_wr ||
	    init->cap.max_send_sge > SV_MAX_SGE ||
	    init->cap.max_recv_sge > SV_MAX_SGE ||
	    init->cap.max_inline_data > 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((qp = calloc(1, sizeof(*qp))) == NULL)
		return NULL;
	qp->fd = -1;
	/* Apple's rings have a fixed size, whatever was asked for. */
	qp->max_send_wr = sv_lim.max_send_wr;
	qp->max_recv_wr = sv_lim.max_recv_wr;
	qp->max_sge = SV_MAX_SGE;
	if ((qp->rq = calloc((size_t)qp->max_recv_wr, sizeof(*qp->rq))) == NULL ||
	    (qp->sq = calloc((size_t)qp->max_send_wr, sizeof(*qp->sq))) == NULL)
		goto fail;
	if ((qp->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		goto fail;
	if (setsockopt(qp->fd, SOL_SOCKET, SO_BINDTODEVICE, d->ifname,
	    (socklen_t)strlen(d->ifname)) != 0)
		sv_debug("%s: SO_BINDTODEVICE: %s", d->dev.name,
		    strerror(errno));
	size = sv_lim.rcvbuf;
	if (setsockopt(qp->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size,
	    sizeof(size)) != 0)
		(void)setsockopt(qp->fd, SOL_SOCKET, SO_RCVBUF, &size,
		    sizeof(size));
	size = 4 << 20;
	if (setsockopt(qp->fd, SOL_SOCKET, SO_SNDBUFFORCE, &size,
	    sizeof(size)) != 0)
		(void)setsockopt(qp->fd, SOL_SOCKET, SO_SNDBUF, &size,
		    sizeof(size));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (bind(qp->fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    getsockname(qp->fd, (struct sockaddr *)&sin, &slen) != 0)
		goto fail;

	pthread_mutex_lock(&c->ctx.mutex);
	pthread_mutex_lock(&d->lock);
	if (d->nqp >= sv_lim.max_qp) {
		pthread_mutex_unlock(&d->lock);
		pthread_mutex_unlock(&c->ctx.mutex);
		sv_debug("%s: create_qp: %d QPs already", d->dev.name, d->nqp);
		errno = EBUSY;
		goto fail;
	}
	d->nqp++;
	pthread_mutex_unlock(&d->lock);
	qp->qp.context = ibpd->context;
	qp->qp.qp_context = init->qp_context;
	qp->qp.pd = ibpd;
	qp->qp.send_cq = init->send_cq;
	qp->qp.recv_cq = init->recv_cq;
	qp->qp.qp_num = ntohs(sin.sin_port);
	qp->qp.handle = qp->qp.qp_num;
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_type = init->qp_type;
	qp->state = IBV_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_all;
	qp->mtu = sv_lim.mtu;
	pd->users++;
	((struct sv_cq *)init->send_cq)->users++;
	((struct sv_cq *)init->recv_cq)->users++;
	qp->next = c->qps;
	c->qps = qp;
	pthread_mutex_unlock(&c->ctx.mutex);
	init->cap.max_send_wr = (uint32_t)qp->max_send_wr;
	init->cap.max_recv_wr = (uint32_t)qp->max_recv_wr;
	init->cap.max_inline_data = 0;
	return &qp->qp;

fail:
	{
		int e = errno;

		if (qp->fd >= 0)
			close(qp->fd);
		free(qp->rq);
		free(qp->sq);
		free(qp);
		errno = e;
		return NULL;
	}
}

/* Unlinks and frees a QP; caller holds no lock (takes the context's). */
static void
qp_free(struct sv_context *c, struct sv_qp *qp)
{
	struct sv_qp **pp;
	struct sv_cq *cq;
	int i;

	pthread_mutex_lock(&c->ctx.mutex);
	for (pp = &c->qps; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	}
	for (cq = c->cqs; cq != NULL; cq = cq->next)
		for (i = 0; i < cq->count; i++)
			if (cq->ring[(cq->head + i) % cq->cap].qp == qp)
				cq->ring[(cq->head + i) % cq->cap].qp = NULL;
	((struct sv_pd *)qp->qp.pd)->users--;
	((struct sv_cq *)qp->qp.send_cq)->users--;
	((struct sv_cq *)qp->qp.recv_cq)->users--;
	pthread_mutex_lock(&c->dev->lock);
	c->dev->nqp--;
	pthread_mutex_unlock(&c->dev->lock);
	pthread_mutex_unlock(&c->ctx.mutex);
	close(qp->fd);
	free(qp->stage);
	free(qp->rq);
	free(qp->sq);
	free(qp);
}

SV_API int
ibv_destroy_qp(struct ibv_qp *ibqp)
{
	if (ibqp == NULL)
		return EINVAL;
	qp_free((struct sv_context *)ibqp->context, (struct sv_qp *)ibqp);
	return 0;
}

/* Discards whatever is queued on the socket. */
static void
qp_drain(struct sv_qp *qp)
{
	unsigned char b[64];

	while (recv(qp->fd, b, sizeof(b), MSG_DONTWAIT | MSG_TRUNC) >= 0)
		;
}

/* Completes every posted receive and unsent send with a flush error. */
static void
qp_flush(struct sv_qp *qp)
{
	struct ibv_wc wc;

	while (qp->sq_pend > 0) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = qp->sq[qp->sq_head].wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = IBV_WC_SEND;
		wc.qp_num = qp->qp.qp_num;
		cq_push((struct sv_cq *)qp->qp.send_cq, &wc, qp,
		    qp->sq_unsignaled + 1);
		qp->sq_unsignaled = 0;
		qp->sq_head = (qp->sq_head + 1) % qp->max_send_wr;
		qp->sq_pend--;
	}

	while (qp->rq_count > 0) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = qp->rq[qp->rq_head].wr_id;
		wc.status = IBV_WC_WR_FLUSH_ERR;
		wc.opcode = IBV_WC_RECV;
		wc.qp_num = qp->qp.qp_num;
		cq_push((struct sv_cq *)qp->qp.recv_cq, &wc, qp, 0);
		qp->rq_head = (qp->rq_head + 1) % qp->max_recv_wr;
		qp->rq_count--;
	}
	qp->in_msg = 0;
}

static void
qp_set_state(struct sv_qp *qp, enum ibv_qp_state st)
{
	if (st == IBV_QPS_RESET) {
		qp->rq_head = qp->rq_count = 0;
		qp->in_msg = 0;
		qp->sq_used = qp->sq_unsignaled = 0;
		qp->sq_head = qp->sq_pend = 0;
		qp->msn = qp->in_next = qp->sent = qp->peer_limit = 0;
		qp->rq_posted = qp->rq_returned = 0;
		qp->credit_due = 0;
		qp->last_ask = 0;
		qp_drain(qp);
	} else if (st == IBV_QPS_ERR) {
		qp_flush(qp);
	}
	qp->state = st;
	qp->qp.state = st;
}

/* Attribute masks by transition (IB spec tables for UC; RC adds more). */
static int
masks_for(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state nxt,
    int *req, int *opt)
{
	*req = *opt = 0;
	if (nxt == IBV_QPS_RESET || nxt == IBV_QPS_ERR)
		return 0;
	if (cur == IBV_QPS_RESET && nxt == IBV_QPS_INIT) {
		*req = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		return 0;
	}
	if (cur == IBV_QPS_INIT && nxt == IBV_QPS_INIT) {
		*opt = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		return 0;
	}
	if (cur == IBV_QPS_INIT && nxt == IBV_QPS_RTR) {
		*req = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		    IBV_QP_RQ_PSN;
		*opt = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
		    IBV_QP_PKEY_INDEX;
		if (type == IBV_QPT_RC)
			*req |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	}
	if (cur == IBV_QPS_RTR && nxt == IBV_QPS_RTS) {
		*req = IBV_QP_SQ_PSN;
		*opt = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
		    IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE;
		if (type == IBV_QPT_RC) {
			*req |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
			*opt |= IBV_QP_MIN_RNR_TIMER;
		}
		return 0;
	}
	if (cur == IBV_QPS_RTS && nxt == IBV_QPS_RTS) {
		*opt = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
		    IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE;
		return 0;
	}
	return -1;
}

static int
gid_is_v4mapped(const union ibv_gid *g)
{
	static const unsigned char pre[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
	};

	return memcmp(g->raw, pre, sizeof(pre)) == 0;
}

static int
modify_qp(struct sv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct sv_device *d = dev_of(qp->qp.context);
	enum ibv_qp_state cur = qp->state, nxt;
	int req, opt, allowed;

	if (mask & IBV_QP_CUR_STATE && attr->cur_qp_state != cur)
		return EINVAL;
	nxt = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	if (masks_for(qp->qp.qp_type, cur, nxt, &req, &opt) != 0) {
		sv_debug("%s: QP %u: no transition %d -> %d", d->dev.name,
		    qp->qp.qp_num, cur, nxt);
		return EINVAL;
	}
	allowed = req | opt | IBV_QP_STATE;
	if ((mask & req) != req || (mask & ~allowed) != 0) {
		sv_debug("%s: QP %u: %d -> %d: attribute mask 0x%x, need 0x%x "
		    "(may add 0x%x)", d->dev.name, qp->qp.qp_num, cur, nxt,
		    mask, req, opt);
		return EINVAL;
	}
	if ((mask & IBV_QP_PORT) && attr->port_num != 1)
		return EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) && (attr->path_mtu < IBV_MTU_256 ||
	    attr->path_mtu > mtu_enum(sv_lim.mtu)))
		return EINVAL;
	if ((mask & IBV_QP_DEST_QPN) &&
	    (attr->dest_qp_num == 0 || attr->dest_qp_num > 0xffff))
		return EINVAL;
	if (mask & IBV_QP_AV) {
		const struct ibv_ah_attr *ah = &attr->ah_attr;
		struct sv_link l;
		union ibv_gid sgid;

		if (ah->port_num > 1 || !ah->is_global ||
		    !gid_is_v4mapped(&ah->grh.dgid) ||
		    ah->grh.sgid_index >= SV_GID_TBL_LEN) {
			sv_debug("%s: QP %u: address vector needs is_global "
			    "and an IPv4-mapped dgid", d->dev.name,
			    qp->qp.qp_num);
			return EINVAL;
		}
		if (sv_link_get(d->ifname, &l) != 0)
			return errno;
		sv_gid(&l, ah->grh.sgid_index, &sgid);
		if (!gid_is_v4mapped(&sgid)) {
			/* what Apple reports when the GID is not there */
			sv_debug("%s: QP %u: sgid_index %u has no IPv4-mapped "
			    "GID", d->dev.name, qp->qp.qp_num,
			    ah->grh.sgid_index);
			return EINVAL;
		}
	}
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->access = (int)attr->qp_access_flags;
	if (mask & IBV_QP_PATH_MTU)
		qp->mtu = 128 << attr->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		qp->peer_qpn = attr->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn;
	if (mask & IBV_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn;
	if (mask & IBV_QP_AV) {
		memset(&qp->peer, 0, sizeof(qp->peer));
		qp->peer.sin_family = AF_INET;
		memcpy(&qp->peer.sin_addr, &attr->ah_attr.grh.dgid.raw[12], 4);
		qp->peer.sin_port = htons((uint16_t)qp->peer_qpn);
	}
	if (nxt == IBV_QPS_RTR && cur == IBV_QPS_INIT) {
		unsigned char *st;
		size_t slot = SV_HDR_LEN + (size_t)(sv_lim.dgram > qp->mtu ?
		    sv_lim.dgram : qp->mtu);

		if ((st = malloc(slot * SV_BATCH)) == NULL)
			return ENOMEM;
		free(qp->stage);
		qp->stage = st;
		qp->stage_slot = slot;
		/* a QP before RTR drops everything it was sent */
		qp_drain(qp);
		qp->in_msg = 0;
		/* receives posted in INIT become the peer's first credits */
		send_ctl(qp, SV_HDR_CREDIT, qp->rq_posted + qp->rq_returned);
	}
	if (nxt != cur)
		sv_debug("%s: QP %u: %d -> %d", d->dev.name, qp->qp.qp_num,
		    cur, nxt);
	qp_set_state(qp, nxt);
	return 0;
}

SV_API int
ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	int r;

	if (ibqp == NULL || attr == NULL)
		return EINVAL;
	pthread_mutex_lock(&ibqp->context->mutex);
	r = modify_qp((struct sv_qp *)ibqp, attr, attr_mask);
	pthread_mutex_unlock(&ibqp->context->mutex);
	return r;
}

SV_API int
ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
    struct ibv_qp_init_attr *init)
{
	struct sv_qp *qp = (struct sv_qp *)ibqp;

	if (qp == NULL || attr == NULL || init == NULL)
		return EINVAL;
	pthread_mutex_lock(&ibqp->context->mutex);
	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = mtu_enum(qp->mtu);
	attr->qp_access_flags = (unsigned int)qp->access;
	attr->dest_qp_num = qp->peer_qpn;
	attr->rq_psn = qp->rq_psn;
	attr->sq_psn = qp->sq_psn;
	attr->port_num = 1;
	attr->cap.max_send_wr = (uint32_t)qp->max_send_wr;
	attr->cap.max_recv_wr = (uint32_t)qp->max_recv_wr;
	attr->cap.max_send_sge = SV_MAX_SGE;
	attr->cap.max_recv_sge = SV_MAX_SGE;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = attr->cap;
	init->qp_type = ibqp->qp_type;
	init->sq_sig_all = qp->sq_sig_all;
	pthread_mutex_unlock(&ibqp->context->mutex);
	return 0;
}

/*
 * Appends to iov the pieces of the SGE list covering [off, off + len);
 * returns the number of entries used.
 */
static int
sge_iov(const struct sv_sge *sge, int nsge, uint64_t off, uint64_t len,
    struct iovec *iov)
{
	int i, n = 0;

	for (i = 0; i < nsge && len > 0; i++) {
		uint64_t take;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		take = sge[i].length - off;
		if (take > len)
			take = len;
		iov[n].iov_base = (void *)(sge[i].addr + off);
		iov[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return n;
}

/*
 * Whether the cable carries anything right now. A cable that is down
 * carries nothing, not even later (the kernel would hold datagrams in the
 * ARP queue). Checked at most every 200 us: two ioctls per small message
 * would cost half the time.
 */
static int
link_ok(struct sv_qp *qp)
{
	int64_t now = mono_ns();

	if (now - qp->link_checked > 200000 || now < qp->link_checked) {
		qp->link_ok = sv_link_carrier(qp->fd,
		    dev_of(qp->qp.context)->ifname);
		qp->link_checked = now;
	}
	return qp->link_ok;
}

/* A header-only datagram to the peer QP: a credit or a request for one. */
static void
send_ctl(struct sv_qp *qp, uint32_t flags, uint32_t value)
{
	struct sv_hdr h;

	if (qp->peer.sin_port == 0 || !link_ok(qp))
		return;
	memset(&h, 0, sizeof(h));
	h.magic = htonl(SV_MAGIC);
	h.dst_qpn = htonl(qp->peer_qpn);
	h.src_qpn = htonl(qp->qp.qp_num);
	h.msn = htonl(value);
	h.flags = htonl(flags);
	if (sendto(qp->fd, &h, sizeof(h), 0, (struct sockaddr *)&qp->peer,
	    sizeof(qp->peer)) < 0)
		sv_debug("QP %u: credit datagram not sent: %s", qp->qp.qp_num,
		    strerror(errno));
	qp->credit_due = 0;
}

/* Sends one message as datagrams; a network error loses it silently. */
static void
transmit(struct sv_qp *qp, const struct sv_sge *sge, int nsge, uint64_t total,
    uint32_t imm, int has_imm)
{
	struct mmsghdr msgs[SV_BATCH];
	struct iovec iov[SV_BATCH][SV_MAX_SGE + 1];
	struct sv_hdr hdr[SV_BATCH];
	uint64_t frag = (uint64_t)(sv_lim.dgram > 0 ? sv_lim.dgram : qp->mtu);
	uint64_t off = 0;
	uint32_t msn = qp->msn++;
	int first = 1;

	while (first || off < total) {
		int n = 0, done = 0;

		while (n < SV_BATCH && (first || off < total)) {
			uint64_t len = total - off < frag ? total - off : frag;

			hdr[n].magic = htonl(SV_MAGIC);
			hdr[n].dst_qpn = htonl(qp->peer_qpn);
			hdr[n].src_qpn = htonl(qp->qp.qp_num);
			hdr[n].msn = htonl(msn);
			hdr[n].len = htonl((uint32_t)total);
			hdr[n].off = htonl((uint32_t)off);
			hdr[n].imm = imm;
			hdr[n].flags = htonl(has_imm ? SV_HDR_IMM : 0);
			iov[n][0].iov_base = &hdr[n];
			iov[n][0].iov_len = sizeof(hdr[n]);
			memset(&msgs[n], 0, sizeof(msgs[n]));
			msgs[n].msg_hdr.msg_name = &qp->peer;
			msgs[n].msg_hdr.msg_namelen = sizeof(qp->peer);
			msgs[n].msg_hdr.msg_iov = iov[n];
			msgs[n].msg_hdr.msg_iovlen = 1 +
			    (size_t)sge_iov(sge, nsge, off, len, &iov[n][1]);
			off += len;
			n++;
			first = 0;
		}
		while (done < n) {
			int r = sendmmsg(qp->fd, msgs + done,
			    (unsigned int)(n - done), 0);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				/* no route, no buffer, a firewall: that datagram
				 * is lost, as on a wire; the others still go */
				sv_debug("QP %u: a datagram of message %u lost: %s",
				    qp->qp.qp_num, msn, strerror(errno));
				r = 1;
			}
			done += r;
		}
	}
}

/* The send-queue slot at the head is done: completion if signaled. */
static void
send_done(struct sv_qp *qp, const struct sv_swr *w, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	if (w->signaled || st != IBV_WC_SUCCESS) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.status = st;
		wc.opcode = IBV_WC_SEND;
		wc.qp_num = qp->qp.qp_num;
		wc.byte_len = (uint32_t)w->total;
		cq_push((struct sv_cq *)qp->qp.send_cq, &wc, qp,
		    qp->sq_unsignaled + 1);
		qp->sq_unsignaled = 0;
	} else {
		qp->sq_unsignaled++;
	}
	qp->sq_head = (qp->sq_head + 1) % qp->max_send_wr;
	qp->sq_pend--;
}

/*
 * Puts queued sends on the wire while the peer has receives for them (see
 * the credits in sv.h); asks for credits when blocked. A cable that is
 * down takes the sends and loses them, without spending credits.
 */
static void
push_sends(struct sv_qp *qp)
{
	while (qp->sq_pend > 0 && qp->state == IBV_QPS_RTS) {
		struct sv_swr *w = &qp->sq[qp->sq_head];
		int i;

		if (!link_ok(qp)) {
			sv_debug("QP %u: link down, message dropped",
			    qp->qp.qp_num);
			send_done(qp, w, IBV_WC_SUCCESS);
			continue;
		}
		if ((int32_t)(qp->peer_limit - qp->sent) <= 0) {
			int64_t now = mono_ns();

			if (qp->last_ask == 0 || now - qp->last_ask >= SV_ASK_NS ||
			    now < qp->last_ask) {
				send_ctl(qp, SV_HDR_ASK, 0);
				qp->last_ask = now;
			}
			return;
		}
		for (i = 0; i < w->nsge; i++) {
			if (sge_ok(qp, &w->sge[i], 0))
				continue;
			/* like hardware: an error completion, QP in error */
			sv_debug("QP %u: send with bad lkey 0x%x",
			    qp->qp.qp_num, w->sge[i].lkey);
			send_done(qp, w, IBV_WC_LOC_PROT_ERR);
			qp_set_state(qp, IBV_QPS_ERR);
			return;
		}
		transmit(qp, w->sge, w->nsge, w->total, w->imm, w->has_imm);
		qp->sent++;
		qp->last_ask = 0;
		send_done(qp, w, IBV_WC_SUCCESS);
	}
}

static int
post_send(struct sv_qp *qp, struct ibv_send_wr *wr)
{
	struct sv_swr *w;
	struct ibv_wc wc;
	int i;

	if (qp->state != IBV_QPS_RTS)
		return EINVAL;
	if ((wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM) ||
	    wr->num_sge < 0 || wr->num_sge > qp->max_sge ||
	    (wr->send_flags & IBV_SEND_INLINE))
		return EINVAL;
	if (qp->sq_used >= qp->max_send_wr || qp->sq_used >= SV_IN_FLIGHT) {
		sv_debug("QP %u: send queue full (%d)", qp->qp.qp_num,
		    qp->sq_used);
		return ENOMEM;
	}
	w = &qp->sq[(qp->sq_head + qp->sq_pend) % qp->max_send_wr];
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->nsge = wr->num_sge;
	w->signaled = qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
	w->has_imm = wr->opcode == IBV_WR_SEND_WITH_IMM;
	w->imm = w->has_imm ? wr->imm_data : 0;
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i].addr = (uintptr_t)wr->sg_list[i].addr;
		w->sge[i].length = wr->sg_list[i].length;
		w->sge[i].lkey = wr->sg_list[i].lkey;
		w->total += w->sge[i].length;
		if (!sge_ok(qp, &w->sge[i], 0)) {
			/* like hardware: an error completion, QP in error */
			sv_debug("QP %u: send with bad lkey 0x%x",
			    qp->qp.qp_num, w->sge[i].lkey);
			memset(&wc, 0, sizeof(wc));
			wc.wr_id = wr->wr_id;
			wc.opcode = IBV_WC_SEND;
			wc.qp_num = qp->qp.qp_num;
			wc.status = IBV_WC_LOC_PROT_ERR;
			qp->sq_used++;
			cq_push((struct sv_cq *)qp->qp.send_cq, &wc, qp,
			    qp->sq_unsignaled + 1);
			qp->sq_unsignaled = 0;
			qp_set_state(qp, IBV_QPS_ERR);
			return 0;
		}
	}
	if (w->total > (1U << 31))
		return EINVAL;
	qp->sq_used++;
	qp->sq_pend++;
	/* credits that came in since the last poll count too */
	if ((int32_t)(qp->peer_limit - qp->sent) < qp->sq_pend)
		progress(qp);
	push_sends(qp);
	return 0;
}

static int
sv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
    struct ibv_send_wr **bad_wr)
{
	int r = 0;

	pthread_mutex_lock(&ibqp->context->mutex);
	for (; wr != NULL; wr = wr->next)
		if ((r = post_send((struct sv_qp *)ibqp, wr)) != 0)
			break;
	pthread_mutex_unlock(&ibqp->context->mutex);
	if (r != 0 && bad_wr != NULL)
		*bad_wr = wr;
	return r;
}

static int
post_recv(struct sv_qp *qp, struct ibv_recv_wr *wr)
{
	struct sv_rwr *r;
	int i;

	if (qp->state == IBV_QPS_RESET || wr->num_sge < 0 ||
	    wr->num_sge > qp->max_sge)
		return EINVAL;
	if (qp->rq_count >= qp->max_recv_wr || qp->rq_count >= SV_IN_FLIGHT) {
		sv_debug("QP %u: receive queue full (%d)", qp->qp.qp_num,
		    qp->rq_count);
		return ENOMEM;
	}
	r = &qp->rq[(qp->rq_head + qp->rq_count) % qp->max_recv_wr];
	memset(r, 0, sizeof(*r));
	r->wr_id = wr->wr_id;
	r->nsge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		r->sge[i].addr = (uintptr_t)wr->sg_list[i].addr;
		r->sge[i].length = wr->sg_list[i].length;
		r->sge[i].lkey = wr->sg_list[i].lkey;
		r->total += r->sge[i].length;
		if (!sge_ok(qp, &r->sge[i], 1)) {
			sv_debug("QP %u: receive with bad lkey 0x%x",
			    qp->qp.qp_num, r->sge[i].lkey);
			return EINVAL;
		}
	}
	qp->rq_count++;
	qp->rq_posted++;
	if (qp->state == IBV_QPS_ERR)
		qp_flush(qp);
	return 0;
}

static int
sv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
    struct ibv_recv_wr **bad_wr)
{
	struct sv_qp *qp = (struct sv_qp *)ibqp;
	int r = 0;

	pthread_mutex_lock(&ibqp->context->mutex);
	/*
	 * What is already in the socket arrived before these receives were
	 * posted: it goes to the receives posted earlier, or is dropped.
	 */
	if (qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_RTS)
		progress(qp);
	for (; wr != NULL; wr = wr->next) {
		if ((r = post_recv(qp, wr)) != 0)
			break;
		qp->credit_due = 1;
	}
	/* the peer may send into them now */
	if (qp->credit_due &&
	    (qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_RTS))
		send_ctl(qp, SV_HDR_CREDIT, qp->rq_posted + qp->rq_returned);
	pthread_mutex_unlock(&ibqp->context->mutex);
	if (r != 0 && bad_wr != NULL)
		*bad_wr = wr;
	return r;
}

static void
copy_in(const struct sv_rwr *r, uint64_t off, const unsigned char *p,
    uint64_t len)
{
	struct iovec iov[SV_MAX_SGE];
	int i, n = sge_iov(r->sge, r->nsge, off, len, iov);

	for (i = 0; i < n; i++) {
		memcpy(iov[i].iov_base, p, iov[i].iov_len);
		p += iov[i].iov_len;
	}
}

/*
 * n messages from the peer were lost on the cable (datagrams missing). The
 * credits they took go back to the sender, and it is said on stderr even
 * without SOFTVERBS_DEBUG: Apple's link does not lose data, so this is a
 * broken cable, and a program that waits for the message would otherwise
 * hang without a word.
 */
static void
lost(struct sv_qp *qp, uint32_t n, const char *how)
{
	qp->lost += n;
	qp->drops += n;
	qp->rq_returned += n;
	qp->credit_due = 1;
	fprintf(stderr, "softverbs: %s: QP %u: %u message%s from QP %u %s: "
	    "the cable loses data (%lu lost so far)\n",
	    dev_of(qp->qp.context)->dev.name, qp->qp.qp_num, n,
	    n == 1 ? "" : "s", qp->peer_qpn, how, qp->lost);
}

/* One datagram for this QP (source already checked). */
static void
fragment(struct sv_qp *qp, const struct sv_hdr *h, const unsigned char *p,
    size_t plen)
{
	uint32_t msn = ntohl(h->msn), len = ntohl(h->len), off = ntohl(h->off);
	struct sv_rwr *r;
	struct ibv_wc wc;
	int i;

	if ((uint64_t)off + plen > len || (plen == 0 && len != 0)) {
		qp->drops++;
		return;
	}
	if (off == 0) {
		if (qp->in_msg && !qp->in_drop)
			lost(qp, 1, "lost its last datagrams");
		if ((int32_t)(msn - qp->in_next) > 0)
			lost(qp, msn - qp->in_next, "never arrived");
		if ((int32_t)(msn - qp->in_next) >= 0)
			qp->in_next = msn + 1;
		qp->in_msg = 1;
		qp->in_drop = 0;
		qp->in_msn = msn;
		qp->in_len = len;
		qp->in_off = 0;
		r = &qp->rq[qp->rq_head];
		if (qp->rq_count == 0) {
			sv_debug("QP %u: message %u (%u bytes) arrived with no "
			    "receive posted, dropped", qp->qp.qp_num, msn, len);
			qp->in_drop = 1;
		} else if (len > r->total) {
			sv_debug("QP %u: message %u (%u bytes) longer than the "
			    "receive buffer (%llu), dropped", qp->qp.qp_num,
			    msn, len, (unsigned long long)r->total);
			qp->in_drop = 1;
			/* the receive is still there: its credit goes back */
			qp->rq_returned++;
			qp->credit_due = 1;
		} else if (sv_frames(len) != sv_frames(r->total)) {
			/* Apple's link moves 4 KiB frames: a SEND fills as many
			 * as the RECV it lands in spans, or it is lost */
			fprintf(stderr, "softverbs: %s: QP %u: message %u of %u bytes "
			    "(%llu frames of %d bytes) into a receive of %llu bytes "
			    "(%llu frames): the frames differ, message lost\n",
			    dev_of(qp->qp.context)->dev.name, qp->qp.qp_num, msn, len,
			    (unsigned long long)sv_frames(len), SV_FRAME,
			    (unsigned long long)r->total,
			    (unsigned long long)sv_frames(r->total));
			qp->in_drop = 1;
			qp->rq_returned++;
			qp->credit_due = 1;
		} else {
			for (i = 0; i < r->nsge; i++) {
				if (sge_ok(qp, &r->sge[i], 1))
					continue;
				/* region gone since the post */
				memset(&wc, 0, sizeof(wc));
				wc.wr_id = r->wr_id;
				wc.status = IBV_WC_LOC_PROT_ERR;
				wc.opcode = IBV_WC_RECV;
				wc.qp_num = qp->qp.qp_num;
				qp->rq_head = (qp->rq_head + 1) %
				    qp->max_recv_wr;
				qp->rq_count--;
				cq_push((struct sv_cq *)qp->qp.recv_cq, &wc, qp,
				    0);
				qp_set_state(qp, IBV_QPS_ERR);
				return;
			}
		}
		if (qp->in_drop)
			qp->drops++;
	} else if (!qp->in_msg || msn != qp->in_msn || off != qp->in_off) {
		if (qp->in_msg && msn == qp->in_msn && !qp->in_drop) {
			/* a datagram went missing: UC loses the message */
			lost(qp, 1, "lost a datagram");
			qp->in_drop = 1;
		} else if (qp->in_msg && msn != qp->in_msn && !qp->in_drop) {
			/* the tail of in_msn and the head of msn are gone */
			lost(qp, 1, "lost its last datagrams");
			qp->in_msg = 0;
		}
		return;
	}
	if (qp->in_drop) {
		qp->in_off = off + (uint32_t)plen;
		if (qp->in_off == qp->in_len)
			qp->in_msg = 0;
		return;
	}
	r = &qp->rq[qp->rq_head];
	copy_in(r, off, p, plen);
	qp->in_off = off + (uint32_t)plen;
	if (qp->in_off < qp->in_len)
		return;
	qp->in_msg = 0;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = r->wr_id;
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = IBV_WC_RECV;
	wc.byte_len = len;
	wc.qp_num = qp->qp.qp_num;
	wc.src_qp = qp->peer_qpn;
	if (ntohl(h->flags) & SV_HDR_IMM) {
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.imm_data = h->imm;
	}
	qp->rq_head = (qp->rq_head + 1) % qp->max_recv_wr;
	qp->rq_count--;
	cq_push((struct sv_cq *)qp->qp.recv_cq, &wc, qp, 0);
}

/* Receives what the socket holds (bounded), feeding the reassembly. */
static void
progress(struct sv_qp *qp)
{
	struct mmsghdr msgs[SV_BATCH];
	struct iovec iov[SV_BATCH];
	struct sockaddr_in from[SV_BATCH];
	int round, i;

	if (qp->stage == NULL)
		return;
	for (round = 0; round < 64; round++) {
		int n;

		for (i = 0; i < SV_BATCH; i++) {
			iov[i].iov_base = qp->stage + (size_t)i * qp->stage_slot;
			iov[i].iov_len = qp->stage_slot;
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_name = &from[i];
			msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		n = recvmmsg(qp->fd, msgs, SV_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			struct msghdr *m = &msgs[i].msg_hdr;
			struct sv_hdr h;

			if (msgs[i].msg_len < SV_HDR_LEN ||
			    (m->msg_flags & MSG_TRUNC) ||
			    from[i].sin_addr.s_addr !=
			    qp->peer.sin_addr.s_addr ||
			    from[i].sin_port != qp->peer.sin_port) {
				qp->drops++;
				continue;
			}
			memcpy(&h, iov[i].iov_base, sizeof(h));
			if (ntohl(h.magic) != SV_MAGIC ||
			    ntohl(h.dst_qpn) != qp->qp.qp_num ||
			    ntohl(h.src_qpn) != qp->peer_qpn) {
				qp->drops++;
				continue;
			}
			if (ntohl(h.flags) & SV_HDR_CREDIT) {
				uint32_t lim = ntohl(h.msn);

				/* cumulative: a late or repeated one is harmless */
				if ((int32_t)(lim - qp->peer_limit) > 0)
					qp->peer_limit = lim;
				continue;
			}
			if (ntohl(h.flags) & SV_HDR_ASK) {
				qp->credit_due = 1;
				continue;
			}
			fragment(qp, &h, (unsigned char *)iov[i].iov_base +
			    SV_HDR_LEN, msgs[i].msg_len - SV_HDR_LEN);
		}
		if (n < SV_BATCH)
			break;
	}
	if (qp->credit_due)
		send_ctl(qp, SV_HDR_CREDIT, qp->rq_posted + qp->rq_returned);
}

/* Empty poll_cq calls in a row, by this thread. */
static __thread int sv_empty_polls;

/*
 * Sleeps until a datagram is there for any connected QP of the process, at
 * most SOFTVERBS_WAIT_US; not at all when a completion is already waiting
 * in some CQ, nor before this thread found every CQ of the process empty in
 * a row (a program that polls its CQs in turn may hold completions of the
 * last one it polled, which it must act on first). Returns 0 when it
 * waited, -1 when it did not.
 */
static int
idle_wait(void)
{
	struct pollfd fds[128];
	struct timespec ts;
	nfds_t n = 0;
	struct sv_context *c;
	int busy = 0, ncq = 0;

	pthread_mutex_lock(&sv_reg_lock);
	for (c = sv_ctxs; c != NULL && !busy; c = c->next_ctx) {
		struct sv_qp *qp;
		struct sv_cq *cq;

		pthread_mutex_lock(&c->ctx.mutex);
		for (cq = c->cqs; cq != NULL; cq = cq->next) {
			busy |= cq->count > 0;
			ncq++;
		}
		for (qp = c->qps; qp != NULL && !busy; qp = qp->next) {
			if (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS)
				continue;
			if (n == sizeof(fds) / sizeof(fds[0]) ||
			    (qp->sq_pend > 0 && !qp->link_ok)) {
				busy = 1;
				break;
			}
			fds[n].fd = qp->fd;
			fds[n].events = POLLIN;
			fds[n].revents = 0;
			n++;
		}
		pthread_mutex_unlock(&c->ctx.mutex);
	}
	pthread_mutex_unlock(&sv_reg_lock);
	if (busy || n == 0 || sv_empty_polls < ncq)
		return -1;
	sv_empty_polls = 0;
	ts.tv_sec = sv_lim.wait_us / 1000000;
	ts.tv_nsec = (long)(sv_lim.wait_us % 1000000) * 1000;
	return ppoll(fds, n, &ts, NULL) < 0 ? -1 : 0;
}

static int
sv_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct sv_cq *cq = (struct sv_cq *)ibcq;
	struct sv_context *c = (struct sv_context *)ibcq->context;
	struct sv_qp *qp;
	int n = 0;

	if (num_entries < 0)
		return -1;
	pthread_mutex_lock(&c->ctx.mutex);
	for (qp = c->qps; qp != NULL; qp = qp->next) {
		if ((qp->qp.recv_cq != ibcq && qp->qp.send_cq != ibcq) ||
		    (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS))
			continue;
		progress(qp);
		push_sends(qp);
	}
	if (cq->overrun) {
		pthread_mutex_unlock(&c->ctx.mutex);
		return -1;
	}
	while (n < num_entries && cq->count > 0) {
		struct sv_cqe *e = &cq->ring[cq->head];

		wc[n++] = e->wc;
		if (e->qp != NULL && e->retire > 0)
			e->qp->sq_used -= e->retire;
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
	}
	pthread_mutex_unlock(&c->ctx.mutex);
	/*
	 * Callers spin on an empty CQ; on a machine with few cores the peer
	 * (another process) then needs the CPU more than we do: sleep until
	 * a datagram comes for this process, or yield.
	 */
	sv_empty_polls = n == 0 ? sv_empty_polls + 1 : 0;
	if (n == 0 && !(sv_lim.wait_us > 0 && idle_wait() == 0) &&
	    sv_lim.yield)
		sched_yield();
	return n;
}
