/* SPDX-License-Identifier: MIT */
/* libFuzzer target: probe bundle manifest.json parser. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"

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
		json_t *m = bundle_manifest_parse(s, size, &err);

		if (m != NULL) {
			(void)bundle_manifest_status(m, "a", "x.txt");
			json_decref(m);
		}
		(void)bundle_name_ok(s);
	}
	strv_free(&notes);
	free(s);
	return 0;
}
