/* SPDX-License-Identifier: MIT */
/*
 * Configuration of the built-in JACCL runtime, read exactly where and as
 * JACCL reads it: the rank, the device file (an N x N JSON matrix whose rows
 * give the world size), the coordinator and the ring preference, each from
 * its JACCL_* variable first and its MLX_* variable second. Also JACCL's
 * validity rules and its choice between a mesh group and a ring group.
 * Everything here is pure apart from rt_config_from_env().
 */
#ifndef JC_RT_CONFIG_H
#define JC_RT_CONFIG_H

#include "jc.h"

#define RT_MESH_MAX_PEERS 8	/* JACCL's MESH_MAX_PEERS */
#define RT_RING_MAX_CONNS 4	/* JACCL's RING_MAX_CONNS (per direction) */

enum rt_kind {
	RT_MESH = 1,
	RT_RING = 2,
};

struct rt_config {
	int rank;
	int size;			/* rows of the device file */
	struct jc_hf_cell *dev;		/* size * size cells, row-major */
	char *coordinator;		/* "ip:port", NULL when not set */
	bool prefer_ring;		/* JACCL_RING / MLX_JACCL_RING present */
	char *devfile;			/* path, for messages (NULL if parsed from memory) */
};

/* The cell of rank r towards rank p. */
const struct jc_hf_cell *rt_config_cell(const struct rt_config *c, int r, int p);

/*
 * Parse device file contents (JSON) into c->dev and c->size. Errors carry
 * JACCL's messages. Returns 0, or -EINVAL with err filled; c->dev is left
 * NULL on failure.
 */
int rt_config_parse_devices(struct rt_config *c, const char *json, size_t len,
    struct jc_err *err);

/*
 * Fill c from values as found in the environment (NULL: not set): rank,
 * device file path, coordinator, ring flag. Reads the device file. Returns
 * 0 or a negative value with err filled; release c with rt_config_clear().
 */
int rt_config_from_values(struct rt_config *c, const char *rank,
    const char *devfile, const char *coordinator, const char *ring,
    struct jc_err *err);

/* rt_config_from_values() with JACCL_* then MLX_* from getenv(). */
int rt_config_from_env(struct rt_config *c, struct jc_err *err);

/* JACCL's is_valid_mesh (N >= 2, empty diagonal, every other cell set). */
bool rt_config_valid_mesh(const struct rt_config *c);

/*
 * JACCL's is_valid_ring, with k >= 1 required: the left and right cells of
 * every rank hold exactly k names, k = the size of cell [0][1]. Sets *k.
 */
bool rt_config_valid_ring(const struct rt_config *c, int *k);

/*
 * JACCL's group choice: a ring when preferred and valid, else a mesh when
 * valid, else a ring when valid. Checks the rank, the mesh and ring limits
 * and, when need_coordinator, that a coordinator is set (the message names
 * both fixes). Sets *kind and *wires (1 for a mesh, k for a ring).
 * Returns 0 or -EINVAL with err filled.
 */
int rt_config_select(const struct rt_config *c, bool need_coordinator,
    enum rt_kind *kind, int *wires, struct jc_err *err);

/* Release what c owns; c may be zero-filled. */
void rt_config_clear(struct rt_config *c);

#endif
