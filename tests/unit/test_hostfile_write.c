/* SPDX-License-Identifier: MIT */
/* Hostfiles of every backend, their JSON bytes, management addresses. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "../graph/appendix.h"
#include "../graph/golden.h"
#include "hostfile_write.h"

static char *
file_text(const struct jc_hostfile *hf, bool to_stdout)
{
	struct jc_err err = { 0 };
	char *s = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&s, &n);
	int r = to_stdout ? hostfile_write_stdout(fp, hf, &err) : hostfile_write_file(fp, hf, &err);

	fclose(fp);
	if (r != 0)
		diag("write failed: %s", err.msg);
	return s;
}

/* Build the hostfile of backend (NULL: automatic) for hosts h. */
static struct jc_hostfile *
build(struct jc_host *h, size_t n, const char *backend, const struct hostfile_write_in *in,
    struct jc_strv *warn)
{
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct graph_choice c;
	struct jc_hostfile *hf = NULL;
	struct jc_err err = { 0 };

	if (graph_build(h, n, &g, &err) != 0 || plan_build(g, &p, &err) != 0 ||
	    graph_choose(g, backend, &c, &err) != 0) {
		diag("%s", err.msg);
		graph_free(g);
		plan_free(p);
		return NULL;
	}
	if (hostfile_write_build(g, &c, p, in, &hf, warn, &err) != 0)
		diag("%s", err.msg);
	graph_choice_clear(&c);
	plan_free(p);
	graph_free(g);
	return hf;
}

static void
test_appendix(void)
{
	static const char *const backends[] = { NULL, "jaccl-ring", "ring" };
	static const char *const files[] = { "appendix-a-jaccl.json", "appendix-a-jaccl-ring.json",
		"appendix-a-ring.json" };
	struct jc_host *h = appendix_a();

	for (size_t k = 0; k < 3; k++) {
		struct jc_hostfile *hf = build(h, 3, backends[k], NULL, NULL);
		char *t;

		ok(hf != NULL, "appendix A: %s hostfile built", backends[k] ? backends[k] : "automatic");
		if (hf == NULL)
			continue;
		t = file_text(hf, false);
		golden_is(t, files[k]);
		ok(t[strlen(t) - 1] == '}', "file form: no trailing newline");
		free(t);
		if (k == 0) {
			static const char head[] = "Hostfile\n========\n{\n    \"backend\": \"jaccl\",\n";

			t = file_text(hf, true);
			ok(strncmp(t, head, strlen(head)) == 0 &&
			    strcmp(t + strlen(t) - 3, "\n}\n") == 0, "stdout form: title lines, newline");
			free(t);
		}
		jc_hostfile_free(hf);
	}
	inv_free(h, 3);
}

/* Shuffled 4-ring, two cables per edge: ring order rows, list cells. */
static void
test_ring_width(void)
{
	struct jc_host *h = inv_new(4, NULL);
	struct jc_hostfile *hf;
	static const size_t perm[] = { 0, 2, 1, 3 };
	char *t;

	inv_ring(h, 4, perm, 80);
	for (size_t k = 0; k < 4; k++) {
		size_t a = perm[k], b = perm[(k + 1) % 4];
		char *ia = xasprintf("en%zu", b + 12), *ib = xasprintf("en%zu", a + 12);

		inv_cable(&h[a], ia, &h[b], ib, 80);
		free(ia);
		free(ib);
	}
	hf = build(h, 4, NULL, NULL, NULL);
	ok(hf != NULL && strcmp(hf->backend, "jaccl-ring") == 0, "4-ring: jaccl-ring");
	if (hf == NULL)
		goto out;
	ok(strcmp(hf->hosts[0].ssh, "mac1") == 0 && strcmp(hf->hosts[1].ssh, "mac3") == 0 &&
	    strcmp(hf->hosts[2].ssh, "mac2") == 0 && strcmp(hf->hosts[3].ssh, "mac4") == 0,
	    "ranks in ring order mac1, mac3, mac2, mac4");
	ok(hf->hosts[0].rdma[2].n == 0 && hf->hosts[0].rdma[1].is_list &&
	    hf->hosts[0].rdma[1].n == 2 && hf->hosts[0].rdma[3].n == 2 && hf->hosts[0].rdma[0].n == 0,
	    "rank 0: lists for both neighbours, null elsewhere");
	/* Cable k pairs up: rank 0's k-th device to rank 1 faces rank 1's k-th to rank 0. */
	is_str(hf->hosts[0].rdma[1].names[0], "rdma_en14", "rank 0 to rank 1, cable 0 (en14 < en4)");
	is_str(hf->hosts[1].rdma[0].names[0], "rdma_en12", "rank 1 to rank 0, cable 0: same cable");
	is_str(hf->hosts[0].rdma[1].names[1], "rdma_en4", "rank 0 to rank 1, cable 1");
	is_str(hf->hosts[1].rdma[0].names[1], "rdma_en2", "rank 1 to rank 0, cable 1: same cable");
	t = file_text(hf, false);
	golden_is(t, "ring4x2-jaccl-ring.json");
	free(t);
	jc_hostfile_free(hf);

	hf = build(h, 4, "ring", NULL, NULL);
	ok(hf != NULL && hf->hosts[0].nips == 2 && hf->hosts[0].nrdma == 0, "ring: two ips, rdma []");
	if (hf != NULL) {
		t = file_text(hf, false);
		golden_is(t, "ring4x2-ring.json");
		free(t);
	}
	jc_hostfile_free(hf);
out:
	inv_free(h, 4);
}

static void
test_mgmt_envs(void)
{
	struct jc_host *h = inv_new(3, NULL);
	struct jc_hostfile *hf, in = { 0 };
	struct jc_strv warn = { 0 };
	const char *envs[] = { "MLX_METAL_FAST_SYNCH=1", "A=\"q\" \\ é" };
	struct hostfile_write_in hin = { .envs = envs, .nenvs = 2 };
	struct jc_hf_host ih = { 0 };
	char *t;

	inv_mesh(h, 3, 80);
	free(h[0].name);
	h[0].name = xstrdup("10.0.0.10");
	free(h[1].mgmt_ip);
	h[1].mgmt_ip = NULL;
	inv_iface(&h[1], "en0", NULL, 0);
	inv_iface(&h[1], "en1", "192.168.1.5", 24);
	free(h[2].mgmt_ip);
	h[2].mgmt_ip = NULL;
	inv_iface(&h[2], "bridge0", "169.254.9.9", 16)->is_bridge = true;
	inv_iface(&h[2], "en3", "10.9.9.9", 24);	/* a cable interface */
	inv_iface(&h[2], "en9", "10.1.1.1", 24);
	h[2].hwports = xcalloc(1, sizeof(*h[2].hwports));
	h[2].hwports[0].port = xstrdup("Thunderbolt 7");
	h[2].hwports[0].device = xstrdup("en9");
	h[2].nhwports = 1;
	hf = build(h, 3, NULL, &hin, &warn);
	ok(hf != NULL, "built");
	if (hf == NULL)
		goto out;
	ok(hf->hosts[0].nips == 2 && strcmp(hf->hosts[0].ips[0], "10.0.0.10") == 0 &&
	    strcmp(hf->hosts[0].ips[1], "10.0.0.10") == 0, "IP literal host keeps it (mlx appends)");
	ok(hf->hosts[1].nips == 1 && strcmp(hf->hosts[1].ips[0], "192.168.1.5") == 0,
	    "en1 when en0 has no address");
	ok(hf->hosts[2].nips == 0, "no address: Thunderbolt, bridge and cable interfaces skipped");
	ok(warn.n == 1 && strcmp(warn.v[0], "Could not extract ip for mac3") == 0, "mlx's warning");
	ok(hf->nenvs == 2 && strcmp(hf->envs[1], envs[1]) == 0, "envs copied");
	t = file_text(hf, false);
	ok(strstr(t, "\"A=\\\"q\\\" \\\\ \\u00e9\"") != NULL, "env escaped as Python does");
	free(t);
	jc_hostfile_free(hf);
	strv_free(&warn);

	/* --hostfile input: its ips come first. */
	ih.ssh = (char *)"mac2";
	ih.ips = (char *[]){ (char *)"172.16.0.2" };
	ih.nips = 1;
	in.hosts = &ih;
	in.nhosts = 1;
	hin.input = &in;
	hin.nenvs = 0;
	hf = build(h, 3, "jaccl", &hin, NULL);
	ok(hf != NULL && hf->hosts[1].nips == 2 && strcmp(hf->hosts[1].ips[0], "172.16.0.2") == 0 &&
	    strcmp(hf->hosts[1].ips[1], "192.168.1.5") == 0, "existing ips from the input hostfile");
	jc_hostfile_free(hf);

	/* Ethernet. */
	hin.input = NULL;
	ok(hostfile_write_ethernet(h, 3, NULL, &hin, &hf, NULL, NULL) == 0, "ethernet hostfile");
	t = file_text(hf, false);
	golden_is(t, "ethernet.json");
	free(t);
	jc_hostfile_free(hf);
out:
	inv_free(h, 3);
}

static void
test_large_mesh(void)
{
	struct jc_host *h = inv_new(8, NULL);
	struct jc_hostfile *hf;
	bool good = true;

	inv_mesh(h, 8, 80);
	hf = build(h, 8, NULL, NULL, NULL);
	ok(hf != NULL && strcmp(hf->backend, "jaccl") == 0 && hf->nhosts == 8, "8-host mesh: jaccl");
	for (size_t i = 0; hf && i < 8; i++)
		for (size_t j = 0; j < 8; j++) {
			char want[16];

			snprintf(want, sizeof(want), "rdma_en%zu", j + 2);
			if (i == j)
				good = good && hf->hosts[i].rdma[j].n == 0;
			else
				good = good && hf->hosts[i].rdma[j].n == 1 && !hf->hosts[i].rdma[j].is_list &&
				    strcmp(hf->hosts[i].rdma[j].names[0], want) == 0;
		}
	ok(good, "null diagonal, rdma_en<j+2> elsewhere");
	if (hf != NULL) {
		char *t = file_text(hf, false);

		golden_is(t, "mesh8-jaccl.json");
		free(t);
	}
	jc_hostfile_free(hf);
	inv_free(h, 8);
}

/* Two hosts, three cables: one neighbour cell holding three devices. */
static void
test_pair(void)
{
	struct jc_host *h = inv_new(2, NULL);
	struct jc_hostfile *hf;
	char *t;

	inv_cable(&h[0], "en2", &h[1], "en5", 80);
	inv_cable(&h[0], "en3", &h[1], "en4", 80);
	inv_cable(&h[0], "en4", &h[1], "en2", 80);
	hf = build(h, 2, "jaccl-ring", NULL, NULL);
	ok(hf != NULL && hf->hosts[0].rdma[1].n == 3 && hf->hosts[0].rdma[0].n == 0 &&
	    hf->hosts[1].rdma[0].n == 3, "2 hosts: the single neighbour cell lists 3 devices");
	if (hf != NULL) {
		is_str(hf->hosts[1].rdma[0].names[0], "rdma_en5", "mac2's cable 0 is its en5");
		t = file_text(hf, false);
		golden_is(t, "pair3-jaccl-ring.json");
		free(t);
	}
	jc_hostfile_free(hf);
	inv_free(h, 2);

	h = appendix_a();
	ok(hostfile_write_ethernet(h, 3, NULL, NULL, &hf, NULL, NULL) == 0, "appendix A over ethernet");
	t = file_text(hf, false);
	golden_is(t, "appendix-a-ethernet.json");
	free(t);
	jc_hostfile_free(hf);
	inv_free(h, 3);
}

int
main(void)
{
	(void)plan;
	(void)skip_all;
	(void)is_int;
	(void)capture;
	test_appendix();
	test_ring_width();
	test_mgmt_envs();
	test_large_mesh();
	test_pair();
	return done_testing();
}
