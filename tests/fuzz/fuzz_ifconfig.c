/* SPDX-License-Identifier: MIT */
/* libFuzzer target: ifconfig (macOS layout) parser, also fed twice to exercise merging. */
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
		struct jc_iface *f = NULL;
		size_t n = 0;

		if (parse_ifconfig(s, size, &f, &n, &notes, &err) == 0)
			(void)parse_ifconfig(s, size, &f, &n, &notes, &err);
		parse_ifaces_free(f, n);
	}
	strv_free(&notes);
	free(s);
	return 0;
}
