/* SPDX-License-Identifier: MIT */
/* libFuzzer target: ibv_devices and ibv_devinfo parsers. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse_ibv.h"

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
		struct jc_rdma_dev *d;
		size_t n;

		if (parse_ibv_devices(s, size, &d, &n, &notes, &err) == 0)
			parse_rdma_free(d, n);
		if (parse_ibv_devinfo(s, size, &d, &n, &notes, &err) == 0)
			parse_rdma_free(d, n);
		(void)parse_ibv_state(s);
	}
	strv_free(&notes);
	free(s);
	return 0;
}
