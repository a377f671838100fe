/* SPDX-License-Identifier: MIT */
/* mlx.launch's per-rank environment, variable by variable. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "launch_env.h"
#include "util.h"

static struct jc_hf_cell
cell(const char *a, const char *b, bool list)
{
	struct jc_hf_cell c = { 0 };

	c.is_list = list;
	if (a == NULL)
		return c;
	c.names = xcalloc(3, sizeof(char *));
	c.names[c.n++] = xstrdup(a);
	if (b != NULL)
		c.names[c.n++] = xstrdup(b);
	return c;
}

static struct jc_hostfile *
hostfile(size_t n, const char *backend)
{
	struct jc_hostfile *hf = xcalloc(1, sizeof(*hf));

	hf->backend = xstrdup(backend);
	hf->nhosts = n;
	hf->hosts = xcalloc(n, sizeof(*hf->hosts));
	for (size_t i = 0; i < n; i++) {
		hf->hosts[i].ssh = xasprintf("mac%zu", i + 1);
		hf->hosts[i].ips = xcalloc(2, sizeof(char *));
		hf->hosts[i].ips[0] = xasprintf("10.0.0.%zu", 10 + i);
		hf->hosts[i].nips = 1;
		hf->hosts[i].rdma = xcalloc(n, sizeof(struct jc_hf_cell));
		hf->hosts[i].nrdma = n;
	}
	return hf;
}

static void
keys(const struct launch_env *e, struct jc_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
	for (size_t i = 0; i < e->n; i++)
		buf_printf(b, "%s%s%s", i ? " " : "", e->vars[i].key,
		    e->vars[i].is_file ? "(file)" : "");
}

int
main(void)
{
	struct launch_env_opts o = { .starting_port = 32323, .connections_per_ip = 1 };
	struct jc_hostfile *hf = hostfile(3, "jaccl");
	struct launch_env *env = NULL;
	struct jc_strv warn = { 0 };
	struct jc_buf b = { 0 };
	struct jc_err err = { 0 };
	const char *bk;
	char *envs[] = { "B=2", "bad-key=1", "A=x y" };

	/* Appendix A: 3 Macs, full mesh */
	{
		static const char *a[3][3] = {
			{ NULL, "rdma_en2", "rdma_en3" },
			{ "rdma_en2", NULL, "rdma_en3" },
			{ "rdma_en2", "rdma_en3", NULL },
		};

		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 3; j++)
				hf->hosts[i].rdma[j] = cell(a[i][j], NULL, false);
	}
	hf->envs = xcalloc(2, sizeof(char *));
	hf->envs[0] = xstrdup("A=1");
	hf->nenvs = 1;
	o.envs = envs;
	o.nenvs = 3;
	ok(launch_env_compute(hf, &o, &env, &bk, &warn, &err) == 0, "jaccl computed");
	is_str(bk, "jaccl", "backend from the hostfile");
	keys(&env[1], &b);
	is_str(b.data, "A B A MLX_JACCL_COORDINATOR MLX_IBV_DEVICES(file) MLX_RANK",
	    "order: hostfile envs, --env, coordinator, device file, rank");
	is_str(launch_env_get(&env[1], "A"), "x y", "--env overrides the hostfile's envs");
	is_str(launch_env_get(&env[2], "MLX_JACCL_COORDINATOR"), "10.0.0.10:32323",
	    "coordinator = rank 0's first IP and the starting port");
	is_str(launch_env_get(&env[0], "MLX_IBV_DEVICES"),
	    "[[null, \"rdma_en2\", \"rdma_en3\"], [\"rdma_en2\", null, \"rdma_en3\"], "
	    "[\"rdma_en2\", \"rdma_en3\", null]]", "device file as json.dumps prints it");
	is_str(launch_env_get(&env[2], "MLX_RANK"), "2", "MLX_RANK");
	ok(launch_env_get(&env[0], "MLX_JACCL_RING") == NULL, "no ring flag for jaccl");
	ok(warn.n == 1, "one warning");
	is_str(warn.n ? warn.v[0] : NULL, "'bad-key=1' is an invalid environment variable "
	    "so it is ignored", "mlx's warning");
	launch_env_free(env, 3);
	strv_free(&warn);

	/* jaccl-ring, list cells and another port */
	o.backend = "jaccl-ring";
	o.starting_port = 4000;
	o.nenvs = 0;
	strv_free_array(hf->hosts[0].rdma[1].names, hf->hosts[0].rdma[1].n);
	hf->hosts[0].rdma[1] = cell("rdma_en2", "rdma_en4", true);
	ok(launch_env_compute(hf, &o, &env, &bk, NULL, &err) == 0, "jaccl-ring computed");
	keys(&env[0], &b);
	is_str(b.data, "A MLX_JACCL_COORDINATOR MLX_JACCL_RING MLX_IBV_DEVICES(file) MLX_RANK",
	    "jaccl-ring order");
	is_str(launch_env_get(&env[0], "MLX_JACCL_RING"), "1", "MLX_JACCL_RING=1");
	is_str(launch_env_get(&env[0], "MLX_JACCL_COORDINATOR"), "10.0.0.10:4000", "port");
	ok(strncmp(launch_env_get(&env[0], "MLX_IBV_DEVICES"),
	    "[[null, [\"rdma_en2\", \"rdma_en4\"], \"rdma_en3\"]", 40) == 0,
	    "a list cell stays a list");
	launch_env_free(env, 3);

	/* malformed jaccl hostfiles (mlx PR #4284) */
	o.backend = "jaccl";
	strv_free_array(hf->hosts[2].rdma[0].names, hf->hosts[2].rdma[0].n);
	hf->hosts[2].rdma[0] = cell(NULL, NULL, false);
	ok(launch_env_compute(hf, &o, &env, &bk, NULL, &err) < 0 && env == NULL, "missing link");
	is_str(err.msg, "The hostfile is malformed: no RDMA device is listed for mac3 to mac1",
	    "names the pair");
	o.backend = "jaccl-ring";
	ok(launch_env_compute(hf, &o, &env, &bk, NULL, &err) < 0, "ring neighbours checked too");
	hf->hosts[2].rdma[0] = cell("rdma_en2", NULL, false);
	hf->hosts[1].rdma[1] = cell("x", NULL, false);
	ok(launch_env_compute(hf, &o, &env, &bk, NULL, &err) < 0, "self cell set");
	is_str(err.msg, "The hostfile is malformed: RDMA device of self should be null",
	    "self message");
	strv_free_array(hf->hosts[1].rdma[1].names, hf->hosts[1].rdma[1].n);
	hf->hosts[1].rdma[1] = cell(NULL, NULL, false);
	hf->hosts[1].nrdma = 2;
	ok(launch_env_compute(hf, &o, &env, &bk, NULL, &err) < 0, "short row");
	is_str(err.msg, "The hostfile is malformed: number of RDMA devices does not match hosts",
	    "count message");
	hf->hosts[1].nrdma = 3;
	hf->hosts[0].nips = 0;
	ok(launch_env_compute(hf, &o, &env, &bk, NULL, &err) < 0, "no rank-0 IP");
	is_str(err.msg, "Rank 0 should have an IP reachable from all other ranks",
	    "rank-0 IP message");

	/* ring backend */
	o.backend = "ring";
	ok(launch_env_compute(hf, &o, &env, &bk, NULL, &err) < 0, "ring without IPs");
	is_str(err.msg, "The ring backend requires IPs to be provided instead of hostnames",
	    "ring IP message");
	hf->hosts[0].nips = 1;
	hf->hosts[1].ips[1] = xstrdup("10.0.1.11");
	hf->hosts[1].nips = 2;
	o.connections_per_ip = 2;
	o.starting_port = 5000;
	o.verbose = true;
	ok(launch_env_compute(hf, &o, &env, &bk, NULL, &err) == 0, "ring computed");
	is_str(launch_env_get(&env[1], "MLX_HOSTFILE"),
	    "[[\"10.0.0.10:5000\", \"10.0.0.10:5001\"], [\"10.0.0.11:5002\", "
	    "\"10.0.0.11:5003\", \"10.0.1.11:5004\", \"10.0.1.11:5005\"], "
	    "[\"10.0.0.12:5006\", \"10.0.0.12:5007\"]]",
	    "ports increase globally, each IP x connections-per-ip");
	keys(&env[1], &b);
	is_str(b.data, "A MLX_RING_VERBOSE MLX_HOSTFILE(file) MLX_RANK", "ring order");
	launch_env_free(env, 3);
	hf->nhosts = 1;
	ok(launch_env_compute(hf, &o, &env, &bk, NULL, &err) == 0 &&
	    strcmp(launch_env_get(&env[0], "MLX_HOSTFILE"), "") == 0,
	    "one host: empty MLX_HOSTFILE");
	launch_env_free(env, 1);
	hf->nhosts = 3;
	o.backend = "tcp";
	ok(launch_env_compute(hf, &o, &env, &bk, NULL, &err) < 0 &&
	    strstr(err.msg, "The backend should be one of"), "unknown backend");
	free(hf->backend);
	hf->backend = xstrdup("");
	o.backend = NULL;
	ok(launch_env_compute(hf, &o, &env, &bk, NULL, &err) == 0 &&
	    strcmp(bk, "ring") == 0, "no backend anywhere: ring");
	launch_env_free(env, 3);
	jc_hostfile_free(hf);
	buf_free(&b);
	return done_testing();
}
