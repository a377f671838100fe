/* SPDX-License-Identifier: MIT */
/*
 * doctor's subnet-overlap check (see doctor_subnet.h). Pure: reads the
 * inventory, the graph and the hostfile, adds findings.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "doctor_subnet.h"
#include "subnet.h"

/* A subnet a cable uses: network, length, and whose interface it is on. */
struct cable_net {
	uint32_t net;
	int len;
	size_t host;
	const char *iface;	/* borrowed, or NULL (from the hostfile) */
	size_t peer;
};

static bool
overlaps(uint32_t a, int alen, uint32_t b, int blen)
{
	int l = alen < blen ? alen : blen;

	return ((a ^ b) & subnet_mask(l)) == 0;
}

static void
net_add(struct cable_net **v, size_t *n, const char *ip, int len, size_t host,
    const char *iface, size_t peer)
{
	uint32_t a;
	int l;

	if (len < SUBNET_MIN_PREFIX || len > 32 || subnet_parse_cidr(ip, &a, &l, NULL) < 0)
		return;
	a &= subnet_mask(len);
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].net == a && (*v)[i].len == len)
			return;
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = (struct cable_net){ .net = a, .len = len, .host = host, .iface = iface,
	    .peer = peer };
}

static bool
is_mgmt(const struct doctor_input *in, const char *ip)
{
	for (size_t i = 0; i < in->n; i++)
		if (in->hosts[i].mgmt_ip != NULL && strcmp(in->hosts[i].mgmt_ip, ip) == 0)
			return true;
	return false;
}

/* The subnets the cables use as set up: their interfaces' addresses, a ring hostfile's. */
static size_t
cable_nets(const struct doctor_input *in, struct cable_net **out)
{
	size_t n = 0;

	*out = NULL;
	for (size_t k = 0; in->g != NULL && k < in->g->ncables; k++) {
		const struct graph_cable *c = &in->g->cables[k];

		for (int s = 0; s < 2; s++) {
			const struct jc_iface *f = jc_host_iface(&in->hosts[c->end[s].host],
			    c->end[s].iface);

			for (size_t a = 0; f != NULL && a < f->ninet; a++)
				net_add(out, &n, f->inet[a], f->prefix ? f->prefix[a] : 32,
				    c->end[s].host, c->end[s].iface, c->end[1 - s].host);
		}
	}
	for (size_t row = 0; in->hf != NULL && row < in->hf->nhosts; row++) {
		const struct jc_hf_host *hh = &in->hf->hosts[row];

		for (size_t k = 0; k < hh->nips; k++)
			if (jc_ipv4_ok(hh->ips[k]) && !is_mgmt(in, hh->ips[k]))
				net_add(out, &n, hh->ips[k], 30, SIZE_MAX, NULL, SIZE_MAX);
	}
	return n;
}

/* The remedy: the first free range of the list for this many cables. */
static char *
remedy(size_t ncables, const struct subnet_prefix *taken, size_t nt)
{
	struct subnet_choice c;
	char cidr[19];

	if (subnet_choose(ncables, taken, nt, NULL, &c, NULL) != 0)
		return xstrdup("free a range for the cables (remove the route or address), "
		    "then jaccl-config --auto-setup --subnet CIDR");
	subnet_choice_cidr(&c, cidr);
	subnet_choice_clear(&c);
	return xasprintf("jaccl-config --auto-setup --subnet %s (a range nothing on the hosts "
	    "uses), or remove the route or address", cidr);
}

void
doctor_chk_subnet(const struct doctor_input *in, struct doctor_report *r)
{
	struct subnet_prefix *taken = NULL;
	struct cable_net *nets = NULL;
	size_t nt, nn, ncables;
	char *fix;

	nt = subnet_taken(in->hosts, in->n, &taken);
	nn = cable_nets(in, &nets);
	ncables = in->g != NULL && in->g->ncables > 0 ? in->g->ncables : nn;
	for (size_t i = 0; i < in->n; i++)
		if (doctor_probed(&in->hosts[i]) && !in->hosts[i].routes_known)
			doctor_add(r, DOCTOR_OK, (long)i, NULL, 0, NULL,
			    "routes unknown (the probe did not capture them); its addresses checked");
	if (nn == 0 && ncables > 0) {
		struct subnet_choice c;
		struct jc_err err = { 0 };

		/* nothing set up yet: the subnets configure would choose */
		if (subnet_choose(ncables, taken, nt, NULL, &c, &err) != 0)
			doctor_add(r, DOCTOR_ERROR, -1, NULL, 0,
			    "choose a range for the cables: jaccl-config --auto-setup --subnet CIDR",
			    "no subnet for the cables: %s", err.msg);
		else
			subnet_choice_clear(&c);
	}
	fix = remedy(ncables, taken, nt);
	for (size_t t = 0; t < nt; t++) {
		const struct subnet_prefix *p = &taken[t];
		const struct cable_net *hit = NULL;
		size_t count = 0, hs[2];
		long h = -1;
		char a[19], b[19];
		struct subnet_choice pc = { .base = p->addr, .len = p->len };
		struct doctor_finding *f;

		for (size_t k = 0; k < nn; k++)
			if (overlaps(p->addr, p->len, nets[k].net, nets[k].len) && count++ == 0)
				hit = &nets[k];
		if (hit == NULL)
			continue;
		for (size_t i = 0; i < in->n; i++)
			if (in->hosts[i].name == p->host)
				h = (long)i;
		subnet_choice_cidr(&pc, a);
		pc = (struct subnet_choice){ .base = hit->net, .len = hit->len };
		subnet_choice_cidr(&pc, b);
		hs[0] = (size_t)h;
		hs[1] = hit->host;
		if (hit->iface != NULL)
			f = doctor_add(r, DOCTOR_ERROR, h, hs, hit->host == hs[0] ? 1 : 2, fix,
			    "%s (%s) overlaps %s, the subnet of %s's %s (cable to %s)%s: the cluster's "
			    "traffic may go to it", a, p->what, b, in->hosts[hit->host].name, hit->iface,
			    hit->peer < in->n ? in->hosts[hit->peer].name : "?",
			    count > 1 ? " and other cables'" : "");
		else
			f = doctor_add(r, DOCTOR_ERROR, h, hs, 1, fix,
			    "%s (%s) overlaps %s, a subnet of the hostfile's addresses%s: the cluster's "
			    "traffic may go to it", a, p->what, b,
			    count > 1 ? " (and others)" : "");
		if (hit->iface != NULL) {
			char *port = xasprintf("%s %s", in->hosts[hit->host].name, hit->iface);

			doctor_add_port(f, port);
			free(port);
		}
	}
	free(fix);
	free(nets);
	subnet_taken_free(taken, nt);
}
