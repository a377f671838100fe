/* SPDX-License-Identifier: MIT */
/* libFuzzer target: system_profiler SPThunderboltDataType -xml (plist) parser. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
		struct jc_port *p;
		size_t n;

		if (parse_tb_xml(s, size, &p, &n, &notes, &err) == 0)
			parse_tb_free(p, n);
	}
	strv_free(&notes);
	free(s);
	return 0;
}
