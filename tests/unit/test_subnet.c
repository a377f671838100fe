/* SPDX-License-Identifier: MIT */
/*
 * The subnet choice: mlx's numbering when free (checked against the
 * formula of mlx's config.py, 192.168.(k/64).(4(k%64)+1|2), written out
 * here independently), the documented list when not, --subnet.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "subnet.h"

static struct subnet_prefix
pfx(const char *cidr, const char *host, const char *what)
{
	struct subnet_prefix p = { .host = host, .what = what };
	struct jc_err err = { 0 };

	if (subnet_parse_cidr(cidr, &p.addr, &p.len, &err) < 0)
		fprintf(stderr, "# bad test prefix %s: %s\n", cidr, err.msg);
	return p;
}

static void
parse_cases(void)
{
	struct jc_err err = { 0 };
	uint32_t a;
	int l;

	ok(subnet_parse_cidr("10.1.2.0/24", &a, &l, &err) == 0 && a == 0x0a010200 && l == 24,
	    "cidr: network and length");
	ok(subnet_parse_cidr("192.168.1.7", &a, &l, &err) == 0 && l == 32, "cidr: bare address is /32");
	ok(subnet_parse_cidr("0.0.0.0/0", &a, &l, &err) == 0 && a == 0 && l == 0, "cidr: default");
	ok(subnet_parse_cidr("10.0.0.256/24", &a, &l, &err) == -EINVAL, "cidr: octet over 255");
	ok(subnet_parse_cidr("10.0.0/24", &a, &l, &err) == -EINVAL, "cidr: three octets");
	ok(subnet_parse_cidr("10.0.0.0/33", &a, &l, &err) == -EINVAL, "cidr: length over 32");
	ok(subnet_parse_cidr("10.0.0.1/24", &a, &l, &err) == -EINVAL &&
	    strstr(err.msg, "host bits") != NULL, "cidr: host bits named");
	ok(subnet_parse_cidr("010.0.0.0/8", &a, &l, &err) == -EINVAL, "cidr: leading zero refused");
	ok(subnet_parse_cidr("10.0.0.0/8x", &a, &l, &err) == -EINVAL, "cidr: trailing garbage");
	ok(subnet_parse_cidr("", &a, &l, &err) == -EINVAL, "cidr: empty");
}

static void
mlx_numbering_cases(void)
{
	struct subnet_choice c;
	struct jc_err err = { 0 };
	char got[16], want[16];
	int same = 1;

	ok(subnet_choose(200, NULL, 0, NULL, &c, &err) == 0 && c.reason == NULL,
	    "nothing taken: mlx's block, no reason");
	for (size_t k = 0; k < 200; k++)
		for (int end = 0; end < 2; end++) {
			subnet_cable_addr(&c, k, end, got);
			snprintf(want, sizeof(want), "192.168.%zu.%zu", k / 64, 4 * (k % 64) + 1 + end);
			same = same && strcmp(got, want) == 0;
		}
	ok(same, "200 cables numbered as mlx numbers them");
	subnet_choice_clear(&c);
}

static void
collision_cases(void)
{
	struct subnet_choice c;
	struct jc_err err = { 0 };
	struct subnet_prefix lan1 = pfx("192.168.1.0/24", "mac2", "en0 address");
	struct subnet_prefix lan0 = pfx("192.168.0.0/24", "mac3", "en1 address");
	struct subnet_prefix vpn[] = {
		pfx("0.0.0.0/1", "mac1", "route via utun3"),
		pfx("128.0.0.0/1", "mac1", "route via utun3"),
		pfx("0.0.0.0/0", "mac1", "default route"),
	};
	struct subnet_prefix both[2], edge[1];
	char a[16];

	ok(subnet_choose(12, &lan1, 1, NULL, &c, &err) == 0 && c.base == 0xc0a80000 &&
	    c.reason == NULL, "a LAN on 192.168.1.0/24 leaves 12 cables on mlx's numbering");
	subnet_choice_clear(&c);
	ok(subnet_choose(65, &lan1, 1, NULL, &c, &err) == 0 && c.base == 0x0afe0000,
	    "65 cables reach 192.168.1.0: the next range");
	subnet_choice_clear(&c);
	edge[0] = pfx("192.168.0.12/30", "mac1", "en7 address");
	ok(subnet_choose(3, edge, 1, NULL, &c, &err) == 0 && c.base == 0xc0a80000,
	    "3 cables end at 192.168.0.11: 192.168.0.12/30 is free");
	subnet_choice_clear(&c);
	edge[0] = pfx("192.168.0.11", "mac1", "en7 address");
	ok(subnet_choose(3, edge, 1, NULL, &c, &err) == 0 && c.base != 0xc0a80000,
	    "3 cables end at 192.168.0.11: an address there collides");
	subnet_choice_clear(&c);
	edge[0] = pfx("192.168.0.0", "mac1", "en7 address");
	c = (struct subnet_choice){ .base = 0xc0a80000, .ncables = 3 };
	is_int(subnet_overlap(&c, &edge[0]), 0, "192.168.0.0 is cable 0's network");
	edge[0] = pfx("192.168.0.8/29", "mac1", "route via en9");
	is_int(subnet_overlap(&c, &edge[0]), 2, "192.168.0.8/29 first meets cable 2");
	ok(subnet_choose(3, vpn, 3, NULL, &c, &err) == 0 && c.base == 0xc0a80000,
	    "a full-tunnel VPN's /1 routes and the default route do not count");
	subnet_choice_clear(&c);
	ok(subnet_choose(3, &lan0, 1, NULL, &c, &err) == 0 && c.base == 0x0afe0000 &&
	    c.reason != NULL && strstr(c.reason, "mac3") && strstr(c.reason, "192.168.0.0/24") &&
	    strstr(c.reason, "10.254.0.0/16"), "192.168.0.0/24 in use: moved, and the reason says where and why");
	subnet_cable_addr(&c, 1, 1, a);
	is_str(a, "10.254.0.6", "moved numbering keeps the /30 steps");
	ok(subnet_overlap(&c, &lan0) == -1, "the new range overlaps nothing");
	subnet_choice_clear(&c);
	both[0] = lan0;
	both[1] = pfx("10.254.0.4/30", "mac1", "en5 address");
	ok(subnet_choose(3, both, 2, NULL, &c, &err) == 0 && c.base == 0xac1e0000,
	    "the first range that is wholly free: 172.30.0.0");
	subnet_choice_clear(&c);
	ok(subnet_choose(3, both, 2, "10.9.8.0/28", &c, &err) == 0 && c.base == 0x0a090800 &&
	    c.user, "--subnet chooses");
	subnet_cable_addr(&c, 2, 0, a);
	is_str(a, "10.9.8.9", "--subnet numbering");
	subnet_choice_clear(&c);
	ok(subnet_choose(5, both, 2, "10.9.8.0/28", &c, &err) == -ERANGE &&
	    strstr(err.msg, "holds 4 cables"), "--subnet too small for the plan");
	ok(subnet_choose(2, both, 2, "192.168.0.0/29", &c, &err) == -EADDRINUSE &&
	    strstr(err.msg, "mac3"), "--subnet that collides names the host");
	ok(subnet_choose(2, both, 2, "192.168.0.0/31", &c, &err) == -ERANGE, "--subnet /31 holds no cable");
}

int
main(void)
{
	parse_cases();
	mlx_numbering_cases();
	collision_cases();
	return done_testing();
}
