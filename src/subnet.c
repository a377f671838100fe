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

static uint32_t
mask_of(int len)
{
	return len == 0 ? 0 : 0xffffffffu << (32 - len);
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
	if ((a & ~mask_of((int)l)) != 0)
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
	plo = p->addr & mask_of(p->len);
	phi = plo | ~mask_of(p->len);
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
	*out = (struct subnet_choice){ .base = a, .ncables = ncables, .user = 1 };
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
			*out = (struct subnet_choice){ .base = a, .ncables = ncables };
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
