/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>

#include "../tap.h"
#include "hosts.h"
#include "util.h"

int
main(void)
{
	struct jc_host *h = NULL;
	struct jc_err err = { 0 };
	size_t n = 0;

	ok(jc_plain_word("mac-1.local"), "plain host name");
	ok(!jc_plain_word("a b"), "space rejected");
	ok(!jc_plain_word("a;rm"), "semicolon rejected");
	ok(!jc_plain_word("$(x)"), "command substitution rejected");
	ok(!jc_plain_word("-oProxyCommand=x"), "leading dash rejected");
	ok(!jc_plain_word(""), "empty rejected");
	ok(jc_iface_name_ok("en2") && jc_iface_name_ok("rdma_en10"), "interface names");
	ok(!jc_iface_name_ok("en2 ") && !jc_iface_name_ok("en`x`"), "bad interface names");
	ok(jc_ipv4_ok("192.168.0.1") && !jc_ipv4_ok("192.168.0.256") &&
	    !jc_ipv4_ok("1.2.3") && !jc_ipv4_ok("1.2.3.4.5"), "IPv4 literals");

	ok(hosts_from_list("a,root@b:2222,10.0.0.1", &h, &n, &err) == 0 && n == 3,
	    "three hosts parsed");
	is_str(h[1].name, "b", "name without user and port");
	is_str(h[1].user, "root", "user");
	is_int(h[1].port, 2222, "port");
	is_str(h[2].name, "10.0.0.1", "IP host");
	hosts_free(h, n);
	ok(hosts_from_list("a,,b", &h, &n, &err) < 0, "empty item fails");
	is_str(err.msg, "Hostname cannot be empty", "mlx's message");
	ok(hosts_from_list("a,b;reboot", &h, &n, &err) < 0, "shell syntax in host fails");
	ok(hosts_is_ip_literal("fe80::1") && !hosts_is_ip_literal("mac1"), "IP literals");
	return done_testing();
}
