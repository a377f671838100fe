/* SPDX-License-Identifier: MIT */
/* libFuzzer target: networksetup -listallhardwareports parser. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse_net.h"

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
		struct jc_hwport *p;
		size_t n;
		char *a, *b;

		if (parse_networksetup(s, size, &p, &n, &notes, &err) == 0)
			parse_hwports_free(p, n);
		parse_sw_vers(s, &a, &b);
		free(a);
		free(b);
		free(parse_ipv4_line(s));
		free(parse_word_line(s));
		free(parse_sysctl(s, "hw.model"));
		(void)parse_rdma_ctl(s);
		(void)parse_netmask(s);
	}
	strv_free(&notes);
	free(s);
	return 0;
}
