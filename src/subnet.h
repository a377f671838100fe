/* SPDX-License-Identifier: MIT */
/*
 * Where the per-cable /30 subnets go. Cable k (0-based, in the plan's
 * order) gets base + 4k as its network, base + 4k + 1 and + 2 as its two
 * ends: with base 192.168.0.0 this is mlx's numbering exactly
 * (192.168.(k/64).(4(k%64)+1)). The base stays mlx's unless the addresses
 * the cables would use overlap an address or a route some host already
 * has; then it moves to the first range of subnet_ranges[] that overlaps
 * nothing, and the choice says why. A prefix shorter than /8 (a default
 * route, a VPN's 0/1 and 128/1 pair) never counts: a cable's /30 is more
 * specific and wins over it. Pure: no I/O.
 */
#ifndef JC_SUBNET_H
#define JC_SUBNET_H

#include <stddef.h>
#include <stdint.h>

#include "jc.h"
#include "util.h"

/* An address or route some host has: addr/len, host byte order. */
struct subnet_prefix {
	uint32_t addr;
	int len;
	const char *host;	/* for the reason: host name */
	const char *what;	/* for the reason: e.g. "en0 address", "route via utun3" */
};

struct subnet_choice {
	uint32_t base;		/* network of cable 0 */
	int len;		/* of the range it was taken from */
	size_t ncables;
	int user;		/* chosen with --subnet */
	char *reason;		/* why the base moved from mlx's, or NULL */
};

/* The ranges tried in order, as CIDR text, NULL-terminated. The first is mlx's. */
extern const char *const subnet_ranges[];

/* The shortest prefix that counts as a collision. */
#define SUBNET_MIN_PREFIX 8

/*
 * Parse "a.b.c.d/len" (len 0..32; host bits must be zero) or a bare
 * address (len 32). Returns 0, or -EINVAL with err saying what is wrong.
 */
int subnet_parse_cidr(const char *s, uint32_t *addr, int *len, struct jc_err *err);

/* The netmask of a prefix of len bits (0..32), host order. */
uint32_t subnet_mask(int len);

/*
 * Choose the base for ncables cables given what the hosts have. With
 * user_cidr (--subnet) the range is that one: it must hold 4 * ncables
 * addresses, and a collision is an error (naming the host and prefix).
 * Returns 0 with out filled (free with subnet_choice_clear), or -errno.
 */
int subnet_choose(size_t ncables, const struct subnet_prefix *taken, size_t ntaken,
    const char *user_cidr, struct subnet_choice *out, struct jc_err *err);

/* Dotted address of end (0 or 1) of cable k into out (16 bytes). */
void subnet_cable_addr(const struct subnet_choice *c, size_t k, int end, char out[16]);

/* The first cable whose /30 overlaps p, or -1. */
long subnet_overlap(const struct subnet_choice *c, const struct subnet_prefix *p);

void subnet_choice_clear(struct subnet_choice *c);

/* The range of c as CIDR text ("10.254.0.0/16") into out (19 bytes). */
void subnet_choice_cidr(const struct subnet_choice *c, char out[19]);

/*
 * What the cables' subnets must not overlap on hosts[0..n): the network of
 * every IPv4 address and every route, except on the interfaces a setup
 * owns (the host's Thunderbolt ports and bridge0) and routes inside the
 * networks of those interfaces' addresses (a Mac lists its own addresses
 * as host routes through lo0). host and what of each entry are filled
 * ("address 192.168.1.7/24 on en0", "route via utun3"). Returns how many
 * in *out (a new array; free with subnet_taken_free).
 */
size_t subnet_taken(const struct jc_host *hosts, size_t n, struct subnet_prefix **out);

void subnet_taken_free(struct subnet_prefix *v, size_t n);

#endif
