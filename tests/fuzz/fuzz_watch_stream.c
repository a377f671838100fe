/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: a watch session's stream (wl_snapshot_end() cutting it
 * into snapshots, wl_parse() turning each into an inventory) on arbitrary
 * bytes, as a remote loop could print them.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jc.h"
#include "watch_live.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char tok[] = "jw0123456789abcdef0123456789abcd";
	const char *p = (const char *)data;
	size_t left = size, end, body;
	struct jc_raw first = { 0 };	/* later snapshots lean on the first */

	while ((end = wl_snapshot_end(tok, p, left, &body)) > 0) {
		struct jc_host *h = NULL;
		struct jc_err err = { 0 };

		if (end > left || body > end)
			abort();	/* never past what it was given */
		if (wl_parse(tok, "fuzz", p, body, &first, &h, &err) == 0) {
			if (h == NULL || strcmp(h->name, "fuzz") != 0)
				abort();
			jc_host_clear(h);
			free(h);
		} else if (h != NULL || err.msg[0] == '\0') {
			abort();	/* a failure leaves nothing and says why */
		}
		p += end;
		left -= end;
	}
	raw_clear(&first);
	return 0;
}
