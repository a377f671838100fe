/* SPDX-License-Identifier: MIT */
/*
 * Synthetic inventories for the graph, plan, DOT and hostfile tests: hosts
 * filled the way discovery fills struct jc_host, with cables made by
 * pointing two ports' peer ids at each other.
 */
#ifndef JC_TEST_INV_H
#define JC_TEST_INV_H

#include "jc.h"

/* n macOS hosts named names[i] (or "macN" when names is NULL), RDMA on. */
struct jc_host *inv_new(size_t n, const char *const *names);
void inv_free(struct jc_host *h, size_t n);

/* The port of h with this interface, created (receptacle r, may be NULL) if missing. */
struct jc_port *inv_port(struct jc_host *h, const char *iface, const char *r);

/* An RDMA device rdma_<iface> in state st (replaced if present). */
void inv_rdma(struct jc_host *h, const char *iface, enum jc_port_state st);

/* A cable between a.ifa and b.ifb at gbps, with PORT_ACTIVE devices on both. */
void inv_cable(struct jc_host *a, const char *ifa, struct jc_host *b, const char *ifb, int gbps);

/* An interface with one IPv4 address (ip may be NULL). */
struct jc_iface *inv_iface(struct jc_host *h, const char *name, const char *ip, int prefix);

/* Full mesh: host i's port to host j is en<j+2> (Thunderbolt j+1). */
void inv_mesh(struct jc_host *h, size_t n, int gbps);

/* Ring through hosts perm[0], perm[1], ... (identity when perm is NULL). */
void inv_ring(struct jc_host *h, size_t n, const size_t *perm, int gbps);



/*
 * Four hosts with one of everything: mac1-mac2 two cables (rails),
 * mac1-mac3 at 40 Gb/s, mac1-mac4, mac2-mac3, mac3-mac4 through a dock,
 * mac2-mac4 missing, mac4 seeing a Mac that is not listed, mac2 naming
 * mac4's free port one-sidedly. *n is set to 4.
 */
struct jc_host *inv_rich(size_t *n);

#endif
