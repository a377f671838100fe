/* SPDX-License-Identifier: MIT */
/*
 * The cabling graph: which Thunderbolt port of which host is cabled to
 * which port of another listed host, what each cable can carry (TCP only,
 * or RDMA too), and the topology questions mlx.distributed_config asks of
 * it: is it a full mesh, which ring (rank order) does it contain, and
 * therefore which backend the hostfile gets. Pure: built from the inventory
 * (struct jc_host), never prints, never runs anything.
 *
 * Cable order. Each host's ports are sorted by interface name as text
 * ("en10" < "en2"), as mlx sorts them. Cables are numbered by walking the
 * hosts in list order and each host's ports in that order, a cable taking
 * the next number the first time one of its ends is met. This is mlx's
 * IPConfigurator order: cable k gets the k-th /30, and the cables between
 * two hosts, taken in this order, are the same list seen from both ends
 * (the k-th cable from A to B is the k-th from B to A).
 *
 * What counts as a cable. Both ports must name each other (port.peer_id of
 * one is port.id of the other) and both must have an interface. A port
 * naming a peer that is not a listed host, or a port whose peer does not
 * name it back, is kept in a list of strays for diagnostics and carries
 * nothing (mlx would number a one-sided cable; we do not, since nothing
 * proves the far end sees it).
 *
 * RDMA usability of a cable (cable.rdma): JC_NO when something known rules
 * it out: the link goes through a dock or hub, the link rate is known and
 * below 80 Gb/s (TB4 and older cannot do RDMA), RDMA is known disabled on
 * either host, either end's RDMA device is known absent, or its port is
 * known to be in a state other than PORT_ACTIVE. JC_YES when every one of
 * those facts is known good; JC_UNKNOWN otherwise (e.g. ibv_devinfo was not
 * captured). RDMA backends use the cables whose rdma is not JC_NO; when
 * every cable qualifies the choices are exactly mlx's.
 */
#ifndef JC_GRAPH_H
#define JC_GRAPH_H

#include "util.h"

enum graph_link {
	GRAPH_LINK_UNKNOWN = 0,	/* rate not reported */
	GRAPH_LINK_OTHER,	/* a known rate below 40 Gb/s */
	GRAPH_LINK_TB4,		/* 40 Gb/s */
	GRAPH_LINK_TB5,		/* 80 Gb/s or more */
};

/* One end of a cable. */
struct graph_end {
	size_t host;		/* index in hosts[] */
	size_t port;		/* index in hosts[host].ports[] */
	const char *iface;	/* borrowed from the port, never NULL */
	char *rdma;		/* RDMA device of this end ("rdma_en2"), owned */
	int rdma_present;	/* enum jc_tri: the host lists that device */
	enum jc_port_state rdma_state;	/* JC_PORT_UNKNOWN when not captured */
};

struct graph_cable {
	struct graph_end end[2];	/* end[0] is met first (lower host) */
	int gbps;		/* link rate, 0 when unknown */
	enum graph_link link;
	bool via_dock;		/* either side sees the other through a dock */
	bool inferred;		/* one end's peer gave no UUID: paired by inference */
	int rdma;		/* enum jc_tri, see the top of this file */
	char *why_not;		/* when rdma != JC_YES: the first reason, owned */
};

enum graph_stray_kind {
	GRAPH_STRAY_OUTSIDE,	/* peer is not a port of a listed host */
	GRAPH_STRAY_ONE_SIDED,	/* peer's port does not name this port back */
	GRAPH_STRAY_NO_IFACE,	/* a cable whose ends name each other, without an
				 * interface at one end or both: listed once, from
				 * the end met first (host < peer_host) */
	GRAPH_STRAY_SELF,	/* both ends on the same host */
};

/* A port whose peer is not usable as a cable (diagnostics only). */
struct graph_stray {
	enum graph_stray_kind kind;
	size_t host, port;
	size_t peer_host, peer_port;	/* valid unless kind == OUTSIDE */
	const char *peer_id;	/* borrowed */
};

struct graph {
	const struct jc_host *hosts;	/* borrowed; must outlive the graph */
	size_t n;
	size_t **order;		/* order[i]: port indices of host i, mlx order */
	size_t *norder;
	struct graph_cable *cables;	/* in mlx's numbering order */
	size_t ncables;
	struct graph_stray *strays;
	size_t nstrays;
	unsigned *count;	/* n*n: cables between i and j */
	unsigned *rcount;	/* n*n: cables between i and j RDMA may use */
	size_t *pair_off;	/* n*n, i < j: first entry of pair (i, j) in pair_cab */
	size_t *pair_cab;	/* cable indices grouped by pair, in cable order */
	size_t *rpair_off;	/* the same for RDMA-usable cables */
	size_t *rpair_cab;
};

/*
 * Build the graph of hosts[0..n-1] (borrowed: must outlive *out). Returns
 * 0 with *out set (free with graph_free), or a negative value with err
 * filled when two ports claim the same id (e.g. one machine listed twice
 * under two names) or two ports of a host the same interface; *out is then
 * NULL.
 */
int graph_build(const struct jc_host *hosts, size_t n, struct graph **out, struct jc_err *err);

void graph_free(struct graph *g);

/* Number of cables between hosts i and j (only RDMA-usable ones if rdma). */
unsigned graph_count(const struct graph *g, size_t i, size_t j, bool rdma);

/*
 * The k-th cable (0-based, shared order) between hosts i and j, counting
 * only RDMA-usable cables if rdma. Returns its index in g->cables, or -1.
 * *side_i (when not NULL) is set to the end (0 or 1) that is on host i.
 */
long graph_pair_cable(const struct graph *g, size_t i, size_t j, size_t k, bool rdma,
    int *side_i);

/*
 * Full-mesh check as mlx's check_valid_mesh: true when every pair has a
 * cable. Otherwise false with *mi, *mj (when not NULL) the first missing
 * ordered pair in (i, j) order.
 */
bool graph_is_mesh(const struct graph *g, bool rdma, size_t *mi, size_t *mj);

/* Outcome of graph_find_ring(). */
enum {
	GRAPH_RING_FOUND = 0,
	GRAPH_RING_NONE = -1,		/* no cycle through every host */
	GRAPH_RING_GAVE_UP = -2,	/* search budget exhausted (pathological) */
};

/*
 * The ring mlx picks (its rings[0]): the first cycle through every host
 * found by a depth-first search from host 0 that tries lower host indices
 * first. ring must hold g->n entries; *width gets the smallest cable count
 * along the ring (counting RDMA-usable cables only if rdma). Needs n >= 2
 * (a 2-host "ring" needs one cable). The search prunes branches that cannot
 * close a cycle, so it never enumerates other rings. Returns
 * GRAPH_RING_FOUND, GRAPH_RING_NONE or GRAPH_RING_GAVE_UP.
 */
int graph_find_ring(const struct graph *g, bool rdma, size_t *ring, unsigned *width);

/* Limits of the JACCL runtime: ranks of a mesh, cables per ring neighbour. */
#define GRAPH_MESH_MAX 8
#define GRAPH_RING_WIDTH_MAX 4

enum graph_backend {
	GRAPH_JACCL = 0,
	GRAPH_JACCL_RING,
	GRAPH_RING,
};

/* The backend decision and what it uses. */
struct graph_choice {
	enum graph_backend backend;
	size_t *order;		/* rank -> host index (n entries), owned */
	unsigned width;		/* cables per ring neighbour (rings), 1 for jaccl */
	bool rdma;		/* RDMA-usable cables only */
	struct jc_strv warnings;	/* why RDMA or a mesh was not used, limits applied */
};

/* "jaccl", "jaccl-ring", "ring". */
const char *graph_backend_name(enum graph_backend b);

/*
 * Choose the backend as mlx does: forced is NULL (automatic), "jaccl",
 * "jaccl-ring" or "ring". Automatic: a mesh whose cables RDMA can use gives
 * jaccl, else such a ring gives jaccl-ring, else any ring gives ring (with
 * warnings saying why RDMA was not used). Beyond mlx, and because the JACCL
 * runtime would fail: a mesh of more than GRAPH_MESH_MAX hosts gives
 * jaccl-ring (forced jaccl is an error), and jaccl-ring uses at most
 * GRAPH_RING_WIDTH_MAX cables per neighbour (both with a warning).
 * Returns 0 with *c filled (release with graph_choice_clear) or a negative
 * value with err filled with mlx's message (first line) and what exactly is
 * missing (following lines), ending with mlx's --dot hint.
 */
int graph_choose(const struct graph *g, const char *forced, struct graph_choice *c,
    struct jc_err *err);

void graph_choice_clear(struct graph_choice *c);

/*
 * Per-host RDMA problems of the cables in use by c, one line each in mlx's
 * wording ("mac2 does not seem to have RDMA enabled") followed by the
 * reason in parentheses. Appends to *out; returns the number of lines.
 */
size_t graph_rdma_problems(const struct graph *g, const struct graph_choice *c,
    struct jc_strv *out);

/*
 * Text of a port for messages: "Thunderbolt 3 (en4)", "en4" when the
 * receptacle is unknown, "bus 2" when the interface is too. New string.
 */
char *graph_port_label(const struct jc_host *h, size_t port);

/*
 * The ends of a GRAPH_STRAY_NO_IFACE cable that have no interface, as
 * "mac1 Thunderbolt 2" or "mac1 Thunderbolt 2 and mac2 Thunderbolt 1".
 * New string.
 */
char *graph_no_iface_ends(const struct graph *g, const struct graph_stray *st);

/* Text of the ports of host i that carry no cable, comma separated. New string. */
char *graph_free_ports(const struct graph *g, size_t i);

/* The name a host is shown by (DOT, setup, hostfile "ssh"): its ssh target
 * as given, else its name. Borrowed. */
const char *graph_host_label(const struct jc_host *h);

/* "a", "b", ... "z", "ab", "bb": mlx's DOT node id for index i (base-26,
 * little-endian). New string. */
char *graph_node_id(size_t i);

#endif
