/* SPDX-License-Identifier: MIT */
/*
 * The environment mlx.launch gives each rank, computed without running
 * anything: hostfile envs then --env entries, then the backend's
 * variables (jaccl / jaccl-ring: MLX_JACCL_COORDINATOR, MLX_JACCL_RING,
 * MLX_IBV_DEVICES; ring: MLX_HOSTFILE), then MLX_RANK. Variables that
 * mlx.launch passes as a temporary file are marked so: their value is the
 * file's content, and the launcher exports the file's path instead.
 */
#ifndef JC_LAUNCH_ENV_H
#define JC_LAUNCH_ENV_H

#include "jc.h"
#include "util.h"

struct launch_var {
	char *key;
	char *value;		/* the value, or the temp file's content */
	bool is_file;		/* export KEY=<path of a file holding value> */
};

/* The ordered environment of one rank. */
struct launch_env {
	struct launch_var *vars;
	size_t n;
};

struct launch_env_opts {
	const char *backend;	/* --backend, NULL: hostfile's, else "ring" */
	char **envs;		/* --env entries, KEY=VALUE */
	size_t nenvs;
	long starting_port;	/* 32323 by default */
	long connections_per_ip;	/* 1 by default */
	bool verbose;		/* ring: adds MLX_RING_VERBOSE=1 */
};

/*
 * Compute the environment of every rank of hf (rank = host index) into a
 * new array of hf->nhosts entries (*out; free with launch_env_free()).
 * Entries whose key is not [A-Za-z0-9_]+ are skipped as mlx.launch does,
 * each with a line appended to *warnings (may be NULL) in mlx's words.
 * *backend_out (may be NULL) receives the chosen backend (borrowed: points
 * into opts, hf or a constant). Errors, with mlx.launch's messages: an
 * unknown backend, the ring backend without IPs, a jaccl hostfile without
 * a rank-0 IP or with a malformed rdma matrix (the checks of mlx PR
 * #4284). Returns 0 or -EINVAL with err filled and *out NULL.
 */
int launch_env_compute(const struct jc_hostfile *hf, const struct launch_env_opts *opts,
    struct launch_env **out, const char **backend_out, struct jc_strv *warnings,
    struct jc_err *err);

/* Value of key in e (the last one set), or NULL. Borrowed. */
const char *launch_env_get(const struct launch_env *e, const char *key);

/* The rdma rows of hf as json.dumps prints them (new string). */
char *launch_env_ibv_devices(const struct jc_hostfile *hf);

void launch_env_free(struct launch_env *envs, size_t n);

#endif
