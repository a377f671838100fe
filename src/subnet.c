/* SPDX-License-Identifier: MIT */
/*
 * Per-cable subnets that collide with nothing: mlx's numbering when it is
 * free, else the first free range of a short documented list. See subnet.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subnet.h"

/*
 * mlx's block first. The others avoid the ranges that home routers,
 * Docker (172.17-172.19 and 192.168.x/20 pools) and CGNAT/Tailscale
 * (100.64/10) hand out by default, and the usual corporate 10.0-10.31.
 */
const char *const subnet_ranges[] = {
	"192.168.0.0/16",
	"10.254.0.0/16",
	"172.30.0.0/16",
	"10.253.0.0/16",
	"172.29.0.0/16",
	NULL,
};

uint32_t
subnet_mask(int len)
{
	return len <= 0 ? 0 : 0xffffffffu << (32 - len);
}

int
subnet_parse_cidr(const char *s, uint32_t *addr, int *len, struct jc_err *err)
{
	const char *p = s;
	uint32_t a = 0;
	long l = 32;

	for (int i = 0; i < 4; i++) {
		long v = 0;
		int digits = 0;

		while (*p >= '0' && *p <= '9' && digits < 4) {
			v = v * 10 + (*p++ - '0');
			digits++;
		}
		if (digits == 0 || digits > 3 || v > 255 || (digits > 1 && p[-digits] == '0'))
			return jc_fail(err, -EINVAL, "'%s' is not an IPv4 prefix (a.b.c.d/len)", s);
		a = a << 8 | (uint32_t)v;
		if (i < 3 && *p++ != '.')
			return jc_fail(err, -EINVAL, "'%s' is not an IPv4 prefix (a.b.c.d/len)", s);
	}
	if (*p == '/') {
		if (!jc_parse_int(p + 1, 0, 32, &l))
			return jc_fail(err, -EINVAL, "'%s': the prefix length must be 0 to 32", s);
	} else if (*p != '\0') {
		return jc_fail(err, -EINVAL, "'%s' is not an IPv4 prefix (a.b.c.d/len)", s);
	}
	if ((a & ~subnet_mask((int)l)) != 0)
		return jc_fail(err, -EINVAL, "'%s' has host bits set (did you mean the network?)", s);
	*addr = a;
	*len = (int)l;
	return 0;
}

static void
dotted(uint32_t a, char out[16])
{
	snprintf(out, 16, "%u.%u.%u.%u", a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255);
}

/* Do [lo, hi] (inclusive) and prefix p overlap? */
static int
span_overlaps(uint32_t lo, uint32_t hi, const struct subnet_prefix *p)
{
	uint32_t plo, phi;

	if (p->len < SUBNET_MIN_PREFIX || p->len > 32)
		return 0;
	plo = p->addr & subnet_mask(p->len);
	phi = plo | ~subnet_mask(p->len);
	return plo <= hi && lo <= phi;
}

long
subnet_overlap(const struct subnet_choice *c, const struct subnet_prefix *p)
{
	uint32_t lo = c->base, hi;

	if (c->ncables == 0 || !span_overlaps(lo, lo + 4 * (uint32_t)c->ncables - 1, p))
		return -1;
	for (size_t k = 0; k < c->ncables; k++) {
		hi = lo + 4 * (uint32_t)k;
		if (span_overlaps(hi, hi + 3, p))
			return (long)k;
	}
	return -1;
}

/* The first prefix that the cables at base would overlap, or NULL. */
static const struct subnet_prefix *
first_collision(uint32_t base, size_t ncables, const struct subnet_prefix *taken,
    size_t ntaken)
{
	struct subnet_choice c = { .base = base, .ncables = ncables };

	for (size_t i = 0; i < ntaken; i++)
		if (subnet_overlap(&c, &taken[i]) >= 0)
			return &taken[i];
	return NULL;
}

static char *
collision_text(const struct subnet_prefix *p)
{
	char a[16];

	dotted(p->addr, a);
	return xasprintf("%s/%d (%s%s%s)", a, p->len, p->host ? p->host : "a host",
	    p->what ? ": " : "", p->what ? p->what : "");
}

static int
choose_user(size_t ncables, const struct subnet_prefix *taken, size_t ntaken,
    const char *cidr, struct subnet_choice *out, struct jc_err *err)
{
	const struct subnet_prefix *hit;
	uint32_t a;
	int len, rc;
	char *t;

	if ((rc = subnet_parse_cidr(cidr, &a, &len, err)) < 0)
		return rc;
	if (len > 30 || (uint64_t)4 * ncables > (uint64_t)1 << (32 - len))
		return jc_fail(err, -ERANGE, "--subnet %s holds %llu cables, the plan has %zu",
		    cidr, len > 30 ? 0ULL : (unsigned long long)(((uint64_t)1 << (32 - len)) / 4),
		    ncables);
	if ((hit = first_collision(a, ncables, taken, ntaken)) != NULL) {
		t = collision_text(hit);
		rc = jc_fail(err, -EADDRINUSE, "--subnet %s overlaps %s", cidr, t);
		free(t);
		return rc;
	}
	*out = (struct subnet_choice){ .base = a, .len = len, .ncables = ncables, .user = 1 };
	return 0;
}

int
subnet_choose(size_t ncables, const struct subnet_prefix *taken, size_t ntaken,
    const char *user_cidr, struct subnet_choice *out, struct jc_err *err)
{
	const struct subnet_prefix *first = NULL, *hit;
	uint32_t a;
	int len;
	char *t, b[16];

	memset(out, 0, sizeof(*out));
	if (user_cidr != NULL)
		return choose_user(ncables, taken, ntaken, user_cidr, out, err);
	for (size_t i = 0; subnet_ranges[i] != NULL; i++) {
		if (subnet_parse_cidr(subnet_ranges[i], &a, &len, err) < 0)
			return -EINVAL;
		if ((uint64_t)4 * ncables > (uint64_t)1 << (32 - len))
			continue;
		hit = first_collision(a, ncables, taken, ntaken);
		if (hit == NULL) {
			*out = (struct subnet_choice){ .base = a, .len = len, .ncables = ncables };
			if (i > 0) {
				t = collision_text(first);
				dotted(a, b);
				out->reason = xasprintf("mlx's subnets (192.168.0.0 on) overlap %s; "
				    "the cables use %s/%d instead", t, b, len);
				free(t);
			}
			return 0;
		}
		if (first == NULL)
			first = hit;
	}
	t = first ? collision_text(first) : xstrdup("nothing");
	len = jc_fail(err, -EADDRINUSE, "every range of the list overlaps an existing "
	    "address or route (first: %s); choose one with --subnet", t);
	free(t);
	return len;
}

void
subnet_cable_addr(const struct subnet_choice *c, size_t k, int end, char out[16])
{
	dotted(c->base + 4 * (uint32_t)k + (end ? 2 : 1), out);
}

void
subnet_choice_clear(struct subnet_choice *c)
{
	free(c->reason);
	memset(c, 0, sizeof(*c));
}

void
subnet_choice_cidr(const struct subnet_choice *c, char out[19])
{
	char a[16];

	dotted(c->base, a);
	snprintf(out, 19, "%s/%d", a, c->len);
}

/* An interface a setup owns: a Thunderbolt port of h, or bridge0. */
static bool
setup_owned(const struct jc_host *h, const char *name)
{
	if (name == NULL)
		return false;
	if (strcmp(name, "bridge0") == 0)
		return true;
	for (size_t i = 0; i < h->nports; i++)
		if (h->ports[i].iface != NULL && strcmp(h->ports[i].iface, name) == 0)
			return true;
	for (size_t i = 0; i < h->nhwports; i++)
		if (h->hwports[i].port != NULL && strncmp(h->hwports[i].port, "Thunderbolt", 11) == 0 &&
		    h->hwports[i].device != NULL && strcmp(h->hwports[i].device, name) == 0)
			return true;
	return false;
}

static bool
prefix_of(const char *addr, int len, struct subnet_prefix *p)
{
	if (addr == NULL || len < 0 || len > 32 ||
	    subnet_parse_cidr(addr, &p->addr, &p->len, NULL) < 0)
		return false;
	p->len = len;
	p->addr &= subnet_mask(len);
	return true;
}

/* Is p inside one of the networks of the addresses of h's owned interfaces? */
static bool
inside_owned(const struct jc_host *h, const struct subnet_prefix *p)
{
	for (size_t i = 0; i < h->nifaces; i++) {
		const struct jc_iface *f = &h->ifaces[i];

		if (!setup_owned(h, f->name))
			continue;
		for (size_t k = 0; k < f->ninet; k++) {
			struct subnet_prefix o;

			if (prefix_of(f->inet[k], f->prefix ? f->prefix[k] : 32, &o) &&
			    p->len >= o.len && (p->addr & subnet_mask(o.len)) == o.addr)
				return true;
		}
	}
	return false;
}

static void
taken_push(struct subnet_prefix **v, size_t *n, const struct subnet_prefix *p, char *what)
{
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[*n] = *p;
	(*v)[(*n)++].what = what;
}

size_t
subnet_taken(const struct jc_host *hosts, size_t n, struct subnet_prefix **out)
{
	size_t cnt = 0;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct jc_host *h = &hosts[i];

		for (size_t f = 0; f < h->nifaces; f++) {
			const struct jc_iface *ifc = &h->ifaces[f];

			if (setup_owned(h, ifc->name))
				continue;
			for (size_t k = 0; k < ifc->ninet; k++) {
				struct subnet_prefix p = { .host = h->name };
				int len = ifc->prefix ? ifc->prefix[k] : 32;

				if (prefix_of(ifc->inet[k], len, &p))
					taken_push(out, &cnt, &p, xasprintf("address %s/%d on %s",
					    ifc->inet[k], len, ifc->name));
			}
		}
		for (size_t r = 0; r < h->nroutes; r++) {
			const struct jc_route *rt = &h->routes[r];
			struct subnet_prefix p = { .host = h->name };

			if (setup_owned(h, rt->iface) || !prefix_of(rt->dest, rt->len, &p) ||
			    p.len < SUBNET_MIN_PREFIX || inside_owned(h, &p))
				continue;
			taken_push(out, &cnt, &p, rt->via != NULL ?
			    xasprintf("route via %s%s%s%s", rt->via, rt->iface ? " (" : "",
			    rt->iface ? rt->iface : "", rt->iface ? ")" : "") :
			    rt->iface != NULL ? xasprintf("route via %s", rt->iface) :
			    xstrdup("route to nowhere (blackhole)"));
		}
	}
	return cnt;
}

void
subnet_taken_free(struct subnet_prefix *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)v[i].what);
	free(v);
}
