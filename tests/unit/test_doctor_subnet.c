/* SPDX-License-Identifier: MIT */
/*
 * The doctor's subnet-overlap check on the configured Studio mesh of the
 * doctor's bundles (cables on 192.168.K.0/30, set up by hand as the
 * bundle's maker did; the bundle predates the route capture) with routes
 * and addresses added by hand, and on a cluster not set up yet whose every
 * range is taken. Expected ranges are read off subnet.c's list by hand.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "../graph/inv.h"
#include "doctor.h"
#include "inventory.h"
#include "probe.h"

static const char *srcdir;

static void
add_route(struct jc_host *h, const char *dest, int len, const char *iface)
{
	struct jc_route *r;

	h->routes = xreallocarray(h->routes, h->nroutes + 1, sizeof(*h->routes));
	r = &h->routes[h->nroutes++];
	memset(r, 0, sizeof(*r));
	r->dest = xstrdup(dest);
	r->len = len;
	r->iface = xstrdup(iface);
	h->routes_known = true;
}

/* The subnet-overlap findings of a doctor run as "STATUS HOST: MSG | FIX" lines. */
static char *
findings(const struct jc_host *h, size_t n, const struct graph *g, int *status)
{
	struct doctor_input in = { .hosts = h, .n = n, .g = g };
	struct doctor_report *r = doctor_run(&in);
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (size_t k = 0; k < r->n; k++)
		if (strcmp(r->v[k].check, "subnet-overlap") == 0)
			buf_printf(&b, "%s %s: %s | %s\n", doctor_status_name(r->v[k].status),
			    r->v[k].host >= 0 ? h[r->v[k].host].name : "cluster", r->v[k].msg,
			    r->v[k].remedy ? r->v[k].remedy : "-");
	for (size_t c = 0; c < r->nresults; c++)
		if (strcmp(r->results[c].check->name, "subnet-overlap") == 0)
			*status = (int)r->results[c].status;
	doctor_report_free(r);
	return buf_steal(&b);
}

static void
test_configured(void)
{
	char *dir = xasprintf("%s/tests/doctor/bundles/configured", srcdir), *t;
	struct jc_host *h = NULL;
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	size_t n = 0;
	int st = -1;

	ok(probe_bundle_hosts(dir, &h, &n, &err) == 0 && n == 4, "configured mesh listed");
	for (size_t i = 0; i < n; i++) {
		char *name = xstrdup(h[i].name);

		jc_host_clear(&h[i]);
		if (inventory_from_bundle(dir, name, &h[i], &err) != 0)
			diag("%s", err.msg);
		h[i].reachable = true;
		free(name);
	}
	graph_build(h, n, &g, &err);
	t = findings(h, n, g, &st);
	ok(st == DOCTOR_OK && strstr(t, "ok m3-ultra-1: routes unknown") != NULL &&
	    strstr(t, "error") == NULL, "no overlap: ok, the hosts' unknown routes said");
	free(t);

	/* a VPN on m3-ultra-2 routes all of 192.168.0.0/16 */
	add_route(&h[1], "192.168.0.0", 16, "utun3");
	t = findings(h, n, g, &st);
	ok(st == DOCTOR_ERROR, "VPN route over the cables: error");
	ok(strstr(t, "error m3-ultra-2: 192.168.0.0/16 (route via utun3) overlaps 192.168.") != NULL,
	    "the finding is m3-ultra-2's and names the route and a cable's subnet");
	ok(strstr(t, "--subnet 10.254.0.0/16") != NULL, "the fix names the first free range");
	free(t);

	/* a narrower route on another host, where mlx's numbering would still be free */
	jc_routes_free(h[1].routes, h[1].nroutes);
	h[1].routes = NULL;
	h[1].nroutes = 0;
	add_route(&h[3], "192.168.1.0", 24, "utun3");
	t = findings(h, n, g, &st);
	ok(st == DOCTOR_ERROR && strstr(t, "192.168.1.0/24 (route via utun3) overlaps "
	    "192.168.1.0/30, the subnet of m3-ultra-1's en4") != NULL,
	    "a /24 over one cable: that cable named");
	ok(strstr(t, "--subnet 192.168.0.0/16") != NULL,
	    "the fix: mlx's own range, free of 192.168.1.0/24 for 6 cables");
	free(t);

	/* the route on a Thunderbolt port, a cable's own: does not count */
	jc_routes_free(h[3].routes, h[3].nroutes);
	h[3].routes = NULL;
	h[3].nroutes = 0;
	add_route(&h[3], "192.168.0.0", 16, "en2");
	t = findings(h, n, g, &st);
	ok(st == DOCTOR_OK, "a route through a Thunderbolt port is the setup's own: ok");
	free(t);
	graph_free(g);
	for (size_t i = 0; i < n; i++)
		jc_host_clear(&h[i]);
	free(h);
	free(dir);
}

/* Not set up yet, and every range of the list taken by some host. */
static void
test_all_taken(void)
{
	struct jc_host *h = inv_new(2, NULL);
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	char *t;
	int st = -1;

	inv_cable(&h[0], "en2", &h[1], "en2", 80);
	add_route(&h[0], "192.168.0.0", 16, "utun3");
	add_route(&h[1], "10.0.0.0", 8, "utun4");
	graph_build(h, 2, &g, &err);
	t = findings(h, 2, g, &st);
	ok(st == DOCTOR_OK, "nothing set up, 172.30.0.0/16 free: no error");
	free(t);
	add_route(&h[1], "172.16.0.0", 12, "utun4");
	t = findings(h, 2, g, &st);
	ok(st == DOCTOR_ERROR && strstr(t, "no subnet for the cables") != NULL,
	    "nothing set up and every range taken: error");
	free(t);
	graph_free(g);
	inv_free(h, 2);
}

/* No graph, a ring hostfile: its cable addresses are the subnets, its management ones are not. */
static void
test_ring_hostfile(void)
{
	struct jc_host *h = inv_new(2, NULL);
	char *ips0[] = { "192.168.0.1", "10.0.0.10" }, *ips1[] = { "192.168.0.2" };
	struct jc_hf_host rows[2] = {
		{ .ssh = "mac1", .ips = ips0, .nips = 2 },
		{ .ssh = "mac2", .ips = ips1, .nips = 1 },
	};
	struct jc_hostfile hf = { .backend = "ring", .hosts = rows, .nhosts = 2 };
	struct doctor_input in = { .hosts = h, .n = 2, .hf = &hf };
	struct doctor_report *r;
	char *t = NULL;
	int nerr = 0;

	free(h[0].mgmt_ip);
	h[0].mgmt_ip = xstrdup("10.0.0.10");
	inv_iface(&h[0], "en0", "10.0.0.10", 24);
	add_route(&h[1], "192.168.0.0", 24, "utun3");
	r = doctor_run(&in);
	for (size_t k = 0; k < r->n; k++)
		if (strcmp(r->v[k].check, "subnet-overlap") == 0 && r->v[k].status == DOCTOR_ERROR &&
		    nerr++ == 0)
			t = xstrdup(r->v[k].msg);
	ok(nerr == 1 && t != NULL && strcmp(t, "192.168.0.0/24 (route via utun3) overlaps 192.168.0.0/30, a "
	    "subnet of the hostfile's addresses: the cluster's traffic may go to it") == 0,
	    "ring hostfile: its cable addresses' /30 found under a route, the management one not");
	free(t);
	doctor_report_free(r);
	inv_free(h, 2);
}

int
main(void)
{
	srcdir = getenv("top_srcdir");
	if (srcdir == NULL)
		srcdir = ".";
	test_configured();
	test_all_taken();
	test_ring_hostfile();
	return done_testing();
}
