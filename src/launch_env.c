/* SPDX-License-Identifier: MIT */
/*
 * mlx.launch's per-rank environment as a pure function of the hostfile and
 * the launch options. JSON values are printed the way Python's json.dumps
 * prints them by default (", " and ": " separators, ASCII only), which is
 * also jansson's output without formatting flags.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "launch_env.h"

static void
push(struct launch_env *e, const char *key, size_t keylen, const char *value,
    bool is_file)
{
	struct launch_var *v;

	e->vars = xreallocarray(e->vars, e->n + 1, sizeof(*e->vars));
	v = &e->vars[e->n++];
	v->key = xstrndup(key, keylen);
	v->value = xstrdup(value);
	v->is_file = is_file;
}

static bool
key_ok(const char *k, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = k[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '_'))
			return false;
	}
	return true;
}

static char *
dumps(json_t *v)
{
	char *s = json_dumps(v, JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
	char *r = xstrdup(s);

	free(s);
	json_decref(v);
	return r;
}

static json_t *
cell_json(const struct jc_hf_cell *c)
{
	json_t *a;

	if (!c->is_list && c->n == 0)
		return json_null();
	if (!c->is_list)
		return json_string(c->names[0]);
	a = json_array();
	for (size_t i = 0; i < c->n; i++)
		json_array_append_new(a, json_string(c->names[i]));
	return a;
}

char *
launch_env_ibv_devices(const struct jc_hostfile *hf)
{
	json_t *rows = json_array();

	for (size_t i = 0; i < hf->nhosts; i++) {
		json_t *row = json_array();

		for (size_t j = 0; j < hf->hosts[i].nrdma; j++)
			json_array_append_new(row, cell_json(&hf->hosts[i].rdma[j]));
		json_array_append_new(rows, row);
	}
	return dumps(rows);
}

static bool
cell_empty(const struct jc_hf_host *h, size_t j)
{
	return j >= h->nrdma || h->rdma[j].n == 0;
}

static int
check_jaccl(const struct jc_hostfile *hf, bool ring, struct jc_err *err)
{
	size_t n = hf->nhosts, missing = 0;
	struct jc_buf b = { 0 };

	if (n == 0 || hf->hosts[0].nips == 0)
		return jc_fail(err, -EINVAL,
		    "Rank 0 should have an IP reachable from all other ranks");
	for (size_t i = 0; i < n; i++)
		if (hf->hosts[i].nrdma != n)
			return jc_fail(err, -EINVAL, "The hostfile is malformed: "
			    "number of RDMA devices does not match hosts");
	for (size_t i = 0; i < n; i++)
		if (!cell_empty(&hf->hosts[i], i) || hf->hosts[i].rdma[i].is_list)
			return jc_fail(err, -EINVAL, "The hostfile is malformed: "
			    "RDMA device of self should be null");
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			if (j == i || (ring && j != (i + n - 1) % n && j != (i + 1) % n))
				continue;
			if (!cell_empty(&hf->hosts[i], j))
				continue;
			if (missing < 3)
				buf_printf(&b, "%s%s to %s", missing ? ", " : "",
				    hf->hosts[i].ssh, hf->hosts[j].ssh);
			missing++;
		}
	}
	if (missing > 0) {
		if (missing > 3)
			buf_printf(&b, " and %zu more", missing - 3);
		jc_fail(err, -EINVAL, "The hostfile is malformed: no RDMA device "
		    "is listed for %s", b.data);
		buf_free(&b);
		return -EINVAL;
	}
	return 0;
}

static char *
ring_hostfile(const struct jc_hostfile *hf, long port, long cpi)
{
	json_t *rows = json_array();

	for (size_t i = 0; i < hf->nhosts; i++) {
		json_t *row = json_array();

		for (size_t k = 0; k < hf->hosts[i].nips; k++)
			for (long c = 0; c < cpi; c++)
				json_array_append_new(row, json_sprintf("%s:%ld",
				    hf->hosts[i].ips[k], port++));
		json_array_append_new(rows, row);
	}
	return dumps(rows);
}

int
launch_env_compute(const struct jc_hostfile *hf, const struct launch_env_opts *opts,
    struct launch_env **out, const char **backend_out, struct jc_strv *warnings,
    struct jc_err *err)
{
	const char *bk = opts->backend;
	struct launch_env *envs;
	char *devices = NULL, *ringfile = NULL, *coord = NULL;
	size_t n = hf->nhosts;
	struct jc_strv user = { 0 };
	int rc;

	*out = NULL;
	if (bk == NULL || *bk == '\0')
		bk = hf->backend != NULL && *hf->backend != '\0' ? hf->backend : "ring";
	if (backend_out)
		*backend_out = bk;
	if (n == 0)
		return jc_fail(err, -EINVAL, "the hostfile lists no hosts");
	if (strcmp(bk, "jaccl") == 0 || strcmp(bk, "jaccl-ring") == 0) {
		if ((rc = check_jaccl(hf, strcmp(bk, "jaccl-ring") == 0, err)) < 0)
			return rc;
		coord = xasprintf("%s:%ld", hf->hosts[0].ips[0], opts->starting_port);
		devices = launch_env_ibv_devices(hf);
	} else if (strcmp(bk, "ring") == 0) {
		for (size_t i = 0; i < n; i++)
			if (hf->hosts[i].nips == 0)
				return jc_fail(err, -EINVAL, "The ring backend requires "
				    "IPs to be provided instead of hostnames");
		ringfile = n > 1 ? ring_hostfile(hf, opts->starting_port,
		    opts->connections_per_ip) : xstrdup("");
	} else if (strcmp(bk, "mpi") == 0 || strcmp(bk, "nccl") == 0) {
		return jc_fail(err, -EINVAL, "the %s backend is not supported here: "
		    "use mlx.launch", bk);
	} else {
		return jc_fail(err, -EINVAL, "The backend should be one of {'ring', "
		    "'mpi', 'nccl', 'jaccl', 'jaccl-ring'}");
	}

	/* hostfile envs, then --env: the later entry of a key wins in the shell */
	for (size_t i = 0; i < hf->nenvs + opts->nenvs; i++) {
		const char *e = i < hf->nenvs ? hf->envs[i] : opts->envs[i - hf->nenvs];
		const char *eq = strchr(e, '=');

		if (eq == NULL || !key_ok(e, (size_t)(eq - e))) {
			if (warnings)
				strv_push_owned(warnings, xasprintf("'%s' is an invalid "
				    "environment variable so it is ignored", e));
			continue;
		}
		strv_push(&user, e);
	}
	envs = xcalloc(n, sizeof(*envs));
	for (size_t r = 0; r < n; r++) {
		struct launch_env *e = &envs[r];
		char rank[24];

		for (size_t i = 0; i < user.n; i++) {
			const char *eq = strchr(user.v[i], '=');

			push(e, user.v[i], (size_t)(eq - user.v[i]), eq + 1, false);
		}
		if (coord != NULL) {
			push(e, "MLX_JACCL_COORDINATOR", 21, coord, false);
			if (strcmp(bk, "jaccl-ring") == 0)
				push(e, "MLX_JACCL_RING", 14, "1", false);
			push(e, "MLX_IBV_DEVICES", 15, devices, true);
		} else {
			if (opts->verbose)
				push(e, "MLX_RING_VERBOSE", 16, "1", false);
			push(e, "MLX_HOSTFILE", 12, ringfile, true);
		}
		snprintf(rank, sizeof(rank), "%zu", r);
		push(e, "MLX_RANK", 8, rank, false);
	}
	strv_free(&user);
	free(coord);
	free(devices);
	free(ringfile);
	*out = envs;
	return 0;
}

const char *
launch_env_get(const struct launch_env *e, const char *key)
{
	for (size_t i = e->n; i-- > 0;)
		if (strcmp(e->vars[i].key, key) == 0)
			return e->vars[i].value;
	return NULL;
}

void
launch_env_free(struct launch_env *envs, size_t n)
{
	if (envs == NULL)
		return;
	for (size_t r = 0; r < n; r++) {
		for (size_t i = 0; i < envs[r].n; i++) {
			free(envs[r].vars[i].key);
			free(envs[r].vars[i].value);
		}
		free(envs[r].vars);
	}
	free(envs);
}
