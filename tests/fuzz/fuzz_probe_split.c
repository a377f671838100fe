/* SPDX-License-Identifier: MIT */
/* libFuzzer target: probe_split() on arbitrary probe script output. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jc_raw raw = { 0 };
	struct jc_err err = { 0 };
	size_t ends[4];
	int n;

	n = probe_split("jc0123456789abcdef0123456789abcd", (const char *)data, size, &raw,
	    ends, 4, &err);
	if (n >= 0 && (size_t)n < raw.n)
		abort();	/* never fewer frames reported than outputs kept */
	for (size_t i = 0; i < raw.n; i++)
		if (raw.outs[i].data[raw.outs[i].len] != '\0' || raw.outs[i].status < 0 ||
		    raw.outs[i].status > 255 || strchr(raw.outs[i].name, '/') != NULL)
			abort();
	raw_clear(&raw);
	return 0;
}
