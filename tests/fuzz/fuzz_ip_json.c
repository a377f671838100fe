/* SPDX-License-Identifier: MIT */
/* libFuzzer target: Linux parsers: ip -j addr/link/neigh and the sysfs key=value listings. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse_linux.h"
#include "parse_net.h"
#include "parse_tb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The parsers take NUL-terminated text, as bundles provide it. */
	char *s = malloc(size + 1);
	struct jc_strv notes = { 0 };
	struct jc_err err;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	{
		struct jc_host h;
		struct parse_neigh *nb = NULL;
		size_t nnb = 0;
		char *a, *b;

		memset(&h, 0, sizeof(h));
		if (parse_ip_addr(s, size, &h.ifaces, &h.nifaces, &notes, &err) == 0)
			(void)parse_ip_link(s, size, h.ifaces, h.nifaces, &notes, &err);
		if (parse_ip_neigh(s, size, &nb, &nnb, &notes, &err) < 0)
			nb = NULL;
		parse_linux_thunderbolt(s, &h.ports, &h.nports, &notes);
		parse_linux_infiniband(s, &h.rdma, &h.nrdma, &notes);
		parse_linux_mgmt(s, &h.mgmt_ip, &h.mgmt_iface);
		parse_linux_mac_ports(&h, nb, nnb, &notes);
		parse_os_release(s, &a, &b);
		free(a);
		free(b);
		parse_neigh_free(nb, nnb);
		jc_host_clear(&h);
	}
	strv_free(&notes);
	free(s);
	return 0;
}
