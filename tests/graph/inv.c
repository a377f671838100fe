/* SPDX-License-Identifier: MIT */
/* Synthetic inventories for tests (see inv.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "inv.h"
#include "util.h"

struct jc_host *
inv_new(size_t n, const char *const *names)
{
	struct jc_host *h = xcalloc(n ? n : 1, sizeof(*h));

	for (size_t i = 0; i < n; i++) {
		h[i].name = names ? xstrdup(names[i]) : xasprintf("mac%zu", i + 1);
		h[i].reachable = true;
		h[i].os = JC_OS_MACOS;
		h[i].rdma_listed = JC_YES;
		h[i].rdma_enabled = JC_YES;
		h[i].sudo = JC_YES;
		h[i].mgmt_ip = xasprintf("10.0.%zu.%zu", i / 200, 10 + i % 200);
		h[i].mgmt_iface = xstrdup("en0");
	}
	return h;
}

void
inv_free(struct jc_host *h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		jc_host_clear(&h[i]);
	free(h);
}

struct jc_port *
inv_port(struct jc_host *h, const char *iface, const char *r)
{
	struct jc_port *p;

	for (size_t k = 0; k < h->nports; k++)
		if (h->ports[k].iface && strcmp(h->ports[k].iface, iface) == 0)
			return &h->ports[k];
	h->ports = xreallocarray(h->ports, h->nports + 1, sizeof(*h->ports));
	p = &h->ports[h->nports];
	memset(p, 0, sizeof(*p));
	p->bus = (int)h->nports;
	p->receptacle = r ? xstrdup(r) : xasprintf("%zu", h->nports + 1);
	p->iface = xstrdup(iface);
	p->id = xasprintf("%s-%s-UUID", h->name, iface);
	p->peer_rdma_service = JC_UNKNOWN;
	h->nports++;
	return p;
}

void
inv_rdma(struct jc_host *h, const char *iface, enum jc_port_state st)
{
	struct jc_rdma_dev *d;

	for (size_t k = 0; k < h->nrdma; k++)
		if (strcmp(h->rdma[k].netdev, iface) == 0) {
			h->rdma[k].state = st;
			return;
		}
	h->rdma = xreallocarray(h->rdma, h->nrdma + 1, sizeof(*h->rdma));
	d = &h->rdma[h->nrdma++];
	memset(d, 0, sizeof(*d));
	d->name = xasprintf("rdma_%s", iface);
	d->netdev = xstrdup(iface);
	d->state = st;
}

void
inv_cable(struct jc_host *a, const char *ifa, struct jc_host *b, const char *ifb, int gbps)
{
	struct jc_port *pa = inv_port(a, ifa, NULL);
	struct jc_port *pb = inv_port(b, ifb, NULL);

	free(pa->peer_id);
	free(pb->peer_id);
	pa->peer_id = xstrdup(pb->id);
	pb->peer_id = xstrdup(pa->id);
	pa->link_gbps = pb->link_gbps = gbps;
	free(pa->link);
	free(pb->link);
	pa->link = gbps ? xasprintf("%d Gb/s", gbps) : NULL;
	pb->link = gbps ? xasprintf("%d Gb/s", gbps) : NULL;
	inv_rdma(a, ifa, JC_PORT_ACTIVE);
	inv_rdma(b, ifb, JC_PORT_ACTIVE);
}

struct jc_iface *
inv_iface(struct jc_host *h, const char *name, const char *ip, int prefix)
{
	struct jc_iface *f;

	h->ifaces = xreallocarray(h->ifaces, h->nifaces + 1, sizeof(*h->ifaces));
	f = &h->ifaces[h->nifaces++];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	f->up = JC_YES;
	f->carrier = JC_YES;
	if (ip != NULL) {
		f->inet = xcalloc(1, sizeof(char *));
		f->prefix = xcalloc(1, sizeof(int));
		f->inet[0] = xstrdup(ip);
		f->prefix[0] = prefix;
		f->ninet = 1;
	}
	return f;
}

void
inv_mesh(struct jc_host *h, size_t n, int gbps)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			char *a = xasprintf("en%zu", j + 2), *b = xasprintf("en%zu", i + 2);

			inv_cable(&h[i], a, &h[j], b, gbps);
			free(a);
			free(b);
		}
}

void
inv_ring(struct jc_host *h, size_t n, const size_t *perm, int gbps)
{
	/* Two hosts: one cable (mlx's 2-host ring). */
	for (size_t k = 0; k < (n == 2 ? 1 : n); k++) {
		size_t a = perm ? perm[k] : k, b = perm ? perm[(k + 1) % n] : (k + 1) % n;
		char *ia = xasprintf("en%zu", b + 2), *ib = xasprintf("en%zu", a + 2);

		inv_cable(&h[a], ia, &h[b], ib, gbps);
		free(ia);
		free(ib);
	}
}

struct jc_host *
inv_rich(size_t *n)
{
	struct jc_host *h = inv_new(4, NULL);
	struct jc_port *p;

	inv_cable(&h[0], "en2", &h[1], "en2", 80);
	inv_cable(&h[0], "en5", &h[1], "en5", 80);
	inv_cable(&h[0], "en3", &h[2], "en2", 40);
	inv_cable(&h[0], "en4", &h[3], "en2", 80);
	inv_cable(&h[1], "en3", &h[2], "en3", 80);
	inv_cable(&h[2], "en4", &h[3], "en3", 80);
	h[2].ports[2].peer_via_dock = true;
	p = inv_port(&h[3], "en4", NULL);
	p->peer_id = xstrdup("8A1F0C2E-0000-4000-8000-00000000ABCD");
	inv_port(&h[3], "en5", NULL);
	p = inv_port(&h[1], "en4", NULL);
	p->peer_id = xstrdup(h[3].ports[3].id);
	*n = 4;
	return h;
}
