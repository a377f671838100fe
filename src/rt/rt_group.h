/* SPDX-License-Identifier: MIT */
/*
 * A group of ranks joined by cables, as JACCL builds it: a mesh (one
 * connection to every peer, on the first cable of the pair) or a ring (k
 * connections to the left neighbour and k to the right, paired by cable
 * index). The data moves through a fabric (tcp, verbs) behind an ops table;
 * the collective operations are written once on top of the fabric's one
 * primitive: complete a set of transfers, each on one link.
 */
#ifndef JC_RT_GROUP_H
#define JC_RT_GROUP_H

#include "jc.h"
#include "rt_config.h"
#include "rt_sc.h"

enum rt_dir {
	RT_PEER = 0,		/* mesh */
	RT_LEFT = 1,		/* ring: towards rank - 1 */
	RT_RIGHT = 2,		/* ring: towards rank + 1 */
};

/* One connection on one cable, seen from this rank. */
struct rt_link {
	int index;		/* position in the group's links */
	int peer;		/* rank at the other end */
	enum rt_dir dir;
	int wire;		/* cable index in the cell (0 for a mesh) */
	int peer_index;		/* the peer's index of the same connection */
	char *device;		/* this end: "rdma_en2" */
	char *peer_device;	/* the other end's name for the cable */
	bool active;		/* this end connects (tcp), the other listens */
	bool dead;		/* failed once: never used again */
	void *priv;		/* the fabric's */
};

/* A transfer on one link: send or receive exactly len bytes. */
struct rt_xfer {
	struct rt_link *link;
	bool send;
	void *buf;
	size_t len;
	size_t done;		/* progress, for the fabric */
};

struct rt_group;

/*
 * A fabric moves bytes on the group's links. Records exchanged at connect
 * time are RT_RECORD_SIZE bytes per link (JACCL's 32-byte destination).
 */
#define RT_RECORD_SIZE 32

struct rt_fabric_ops {
	const char *name;
	/*
	 * Prepare every link of g and write its record to rec + i * 32; after
	 * the group exchanged the records, connect() gets each link's peer
	 * record (peer[i] for link i). Both return 0 or a negative errno value
	 * with err naming the link; close() releases whatever they created.
	 */
	int (*prepare)(struct rt_group *g, unsigned char *rec, struct jc_err *err);
	int (*connect)(struct rt_group *g, const unsigned char *peer, struct jc_err *err);
	/*
	 * Complete all n transfers (a link may carry one send and one
	 * receive). Fails when nothing moves for g->timeout seconds or a
	 * peer closes; the failed links are marked dead and named in err.
	 */
	int (*run)(struct rt_group *g, struct rt_xfer *x, size_t n, struct jc_err *err);
	void (*close)(struct rt_group *g);
};

extern const struct rt_fabric_ops rt_fabric_tcp;
extern const struct rt_fabric_ops rt_fabric_verbs;

struct rt_group {
	int rank, size;
	enum rt_kind kind;
	int wires;		/* ring: cables per direction; mesh: 1 */
	struct rt_link *links;
	size_t nlinks;
	double timeout;		/* bound on any wait, seconds */
	const struct rt_fabric_ops *fab;
	void *fctx;		/* the fabric's */
	struct rt_sc *sc;	/* borrowed */
	char *scratch;		/* reused by the collectives (grow-only) */
	size_t nscratch;
};

enum rt_dtype {
	RT_FLOAT32,
	RT_INT32,
	RT_FLOAT64,
	RT_INT64,
};

/* Size of one element, and its name as nccl-tests prints it ("float", "int32"). */
size_t rt_dtype_size(enum rt_dtype t);
const char *rt_dtype_name(enum rt_dtype t);

/*
 * True when the verbs library loads and names every device of g's links
 * (g as described by rt_group_new(), not yet opened).
 */
bool rt_fabric_verbs_available(const struct rt_group *g);

/* Fabric by name ("tcp", "verbs"), or NULL. */
const struct rt_fabric_ops *rt_fabric_find(const char *name);

/*
 * Describe the links of kind/wires from the configuration (no I/O). Used
 * by rt_group_open(); exposed for tests. Returns 0; *out must be freed
 * with rt_group_close().
 */
int rt_group_new(struct rt_group **out, const struct rt_config *c, enum rt_kind kind,
    int wires, double timeout);

/*
 * Build the group of c: describe its links, let the fabric prepare them,
 * all-gather the records through sc, connect, and finish with a side
 * channel barrier. sc is borrowed and must outlive the group. Returns 0,
 * or a negative value with err filled (naming the link or rank).
 */
int rt_group_open(struct rt_group **out, const struct rt_config *c, enum rt_kind kind,
    int wires, const struct rt_fabric_ops *fab, struct rt_sc *sc, double timeout,
    struct jc_err *err);

/* The mesh link to peer, or the ring link of dir and wire; NULL if none. */
struct rt_link *rt_group_link(struct rt_group *g, int peer, enum rt_dir dir, int wire);

/* Complete transfers (see rt_fabric_ops.run). */
int rt_group_run(struct rt_group *g, struct rt_xfer *x, size_t n, struct jc_err *err);

/* Send or receive len bytes on one link. */
int rt_group_send(struct rt_group *g, struct rt_link *l, const void *buf, size_t len,
    struct jc_err *err);
int rt_group_recv(struct rt_group *g, struct rt_link *l, void *buf, size_t len,
    struct jc_err *err);

/*
 * Send n bytes of sbuf to rank to and receive m bytes from rank from into
 * rbuf, both at once, the way JACCL's send() and recv() move them: over
 * the mesh connection to that peer, or on a ring to a neighbour only, cut
 * over the wires in contiguous slices of ceil(bytes / wires) (on a ring of
 * 2, where both neighbours are the same rank, a send takes the left links
 * and a receive the right ones, as JACCL does). to or from < 0 leaves that
 * half out. Returns 0, -EINVAL when a peer is this rank, outside the group
 * or (on a ring) not a neighbour, or another negative value; err filled.
 */
int rt_group_sendrecv(struct rt_group *g, const void *sbuf, size_t n, int to, void *rbuf,
    size_t m, int from, struct jc_err *err);

/*
 * All-gather n bytes of src into dst (size * n bytes, rank order), over
 * the fabric. Returns 0 or a negative value with err filled.
 */
int rt_group_all_gather(struct rt_group *g, const void *src, size_t n, void *dst,
    struct jc_err *err);

/*
 * In-place sum of count elements of type t across the group. The result
 * is bitwise identical on every rank. Returns 0 or negative with err.
 */
int rt_group_all_reduce(struct rt_group *g, void *buf, size_t count, enum rt_dtype t,
    struct jc_err *err);

/* Wait until every rank reaches it, over the fabric. */
int rt_group_barrier(struct rt_group *g, struct jc_err *err);

/* Close the fabric and free g; g may be NULL. Does not close g->sc. */
void rt_group_close(struct rt_group *g);

#endif
