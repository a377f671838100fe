/* SPDX-License-Identifier: MIT */
/*
 * The pure parts of sync: the tree of a folder as a manifest (path, type,
 * size, mtime, mode, link target, XXH3-128), the safety rules of every
 * path (nothing lands outside the destination), the frames that carry the
 * data between hosts (a header with XXH3-128 of each chunk and of each
 * file), and the route the data takes over the cables (a chain in ring
 * order, a scatter on a mesh, a spanning tree around lost hosts and
 * cables). Nothing here talks to a host or prints.
 */
#ifndef JC_SYNC_CORE_H
#define JC_SYNC_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "jc.h"

#define SYNC_CHUNK (1u << 20)		/* bytes per chunk */
#define SYNC_PART_SUFFIX ".jcsync-part"	/* temporary name: .NAME.jcsync-part */
#define SYNC_MAP_SUFFIX ".jcsync-map"	/* the chunks a part already holds */
#define SYNC_MANIFEST ".jcsync-manifest"	/* each host's record of what it holds */
#define SYNC_MAX_HOSTS 64

enum sync_type {
	SYNC_FILE = 0,
	SYNC_DIR,
	SYNC_LINK,
};

struct sync_hash {
	uint64_t hi, lo;
};

struct sync_entry {
	char *path;		/* relative, '/'-separated, no "." or ".." */
	enum sync_type type;
	uint64_t size;
	int64_t mtime_ns;
	unsigned mode;		/* permission bits */
	char *target;		/* SYNC_LINK */
	struct sync_hash hash;	/* SYNC_FILE, when hashed */
	bool hashed;
};

struct sync_tree {
	struct sync_entry *v;
	size_t n, cap;
};

/* XXH3-128 of len bytes. */
struct sync_hash sync_hash_buf(const void *p, size_t len);
/* 32 hex digits (out: 33 bytes), and back (false when not 32 hex digits). */
void sync_hash_hex(struct sync_hash h, char *out);
bool sync_hash_parse(const char *s, struct sync_hash *h);
bool sync_hash_eq(struct sync_hash a, struct sync_hash b);

/*
 * XXH3-128 of a whole file (fd read from offset 0), and its SHA-256 as 64
 * hex digits (sync_sha256_fd). 0, or a negative errno value.
 */
int sync_hash_fd(int fd, struct sync_hash *out);
int sync_sha256_fd(int fd, char out[65]);

/*
 * A relative path that stays inside its folder: not empty, not absolute,
 * no empty, "." or ".." component, no control character, no component
 * that is one of sync's temporary names. Every path read from another
 * host goes through it.
 */
bool sync_path_ok(const char *p);

/*
 * Whether a link at path with this target stays in the tree: a relative
 * target whose lexical resolution from the link's folder never climbs
 * above the tree's top. Absolute targets are refused.
 */
bool sync_link_ok(const char *path, const char *target);

/*
 * Scan the folder root into t (sorted by path): regular files, folders,
 * links. Refuses (-EINVAL, err naming the path) a link pointing outside
 * the tree, a special file, a path that fails sync_path_ok(); sync's own
 * temporary files are left out. hash: hash every file. Returns 0 or a
 * negative value.
 */
int sync_tree_scan(const char *root, bool hash, struct sync_tree *t, struct jc_err *err);
void sync_tree_free(struct sync_tree *t);
void sync_tree_add(struct sync_tree *t, const struct sync_entry *e);	/* copies */
const struct sync_entry *sync_tree_find(const struct sync_tree *t, const char *path);

/* A tree as JSON (a new reference), and back (0 or -EINVAL with err). */
json_t *sync_tree_json(const struct sync_tree *t);
int sync_tree_from_json(json_t *a, struct sync_tree *t, struct jc_err *err);

/*
 * Whether the destination's entry d already holds the source's entry s:
 * same type; files of the same size and mtime (with checksum: the same
 * hash, both hashed), links with the same target. Folders always match.
 */
bool sync_entry_same(const struct sync_entry *s, const struct sync_entry *d, bool checksum);

/* Chunks of a file of size bytes (at least 1 for a file of 0 bytes: none). */
uint32_t sync_nchunks(uint64_t size);

/* ---- frames ---- */

#define SYNC_FRAME_MAGIC 0x3153434au	/* "JCS1" */
#define SYNC_HDR 40

enum sync_frame_type {
	SYNC_F_CHUNK = 1,	/* len bytes of file's chunk; hash of the payload */
	SYNC_F_FEND = 2,	/* file's hash (of the whole file), chunk = nchunks */
	SYNC_F_DONE = 3,	/* part is over on this connection */
	SYNC_F_HELLO = 4,	/* first on a connection: file = the sender's rank */
};

struct sync_frame {
	uint16_t type;
	uint16_t part;
	uint32_t file;
	uint32_t chunk;
	uint32_t len;
	struct sync_hash hash;
};

void sync_frame_encode(const struct sync_frame *f, unsigned char out[SYNC_HDR]);
/* 0, or -EINVAL for a bad magic, type or length (max: SYNC_CHUNK). */
int sync_frame_decode(const unsigned char in[SYNC_HDR], struct sync_frame *f);

/* ---- route ---- */

enum sync_route_kind {
	SYNC_ROUTE_CHAIN,	/* one part along the ring order */
	SYNC_ROUTE_SCATTER,	/* one part per peer of the source (a full mesh) */
	SYNC_ROUTE_TREE,	/* one part, a spanning tree (hosts or cables lost) */
};

/*
 * The cables: wires[i * n + j] connections between hosts i and j (the
 * hostfile's cell [i][j]); dead hosts and dead cables (dead_wire[i * n +
 * j] cables of the pair lost) are left out.
 */
struct sync_graph {
	size_t n;
	int *wires;
	bool *dead_host;
	int *dead_wire;
};

struct sync_route {
	enum sync_route_kind kind;
	size_t n, nparts;
	int source;
	int *parent;		/* nparts * n: host's upstream in part p, -1: none */
	bool *reached;		/* n: some part reaches host */
};

void sync_graph_init(struct sync_graph *g, size_t n);
void sync_graph_free(struct sync_graph *g);
int sync_graph_wires(const struct sync_graph *g, size_t i, size_t j);	/* live cables */

/*
 * Plan how the data leaves source: a scatter when every pair of live
 * hosts is cabled and there are 3 hosts or more, else a chain that walks
 * the ring order (i + 1 first, then i - 1, ...) and backs up where it is
 * stuck, which makes a spanning tree around what was lost. Hosts no cable
 * reaches are left out (reached false). Release with sync_route_free().
 */
void sync_route_plan(const struct sync_graph *g, int source, struct sync_route *r);
void sync_route_free(struct sync_route *r);
int sync_route_parent(const struct sync_route *r, size_t part, size_t host);
/* Children of host in part, in host order, into out (n slots); their count. */
size_t sync_route_children(const struct sync_route *r, size_t part, size_t host, int *out);

/*
 * Bytes each host pair carries when bytes move along r: out[i * n + j]
 * from i to j (every part carries bytes / nparts).
 */
void sync_route_load(const struct sync_route *r, double bytes, double *out);

/*
 * The expected time of moving bytes along r with gbps[i * n + j] the
 * measured rate from i to j (all wires; <= 0: unknown). Returns seconds,
 * or a negative value when an edge of the route has no measure.
 */
double sync_route_seconds(const struct sync_route *r, double bytes, const double *gbps);

/*
 * The part the source's chunk seq goes by: the one whose first hop has the
 * fewest frames queued (queued[p]; SIZE_MAX: that hop is lost), in turn
 * (from seq % nparts) among equals. A slower cable so carries less, and a
 * lost first hop none (every part reaches every host).
 */
size_t sync_pick_part(const size_t *queued, size_t nparts, uint64_t seq);

/* b bytes for a person: "512 B", "1.5 MB" (powers of 1000). New string. */
char *sync_fmt_bytes(double b);

#endif
