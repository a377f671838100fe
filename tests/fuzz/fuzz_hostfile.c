/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: any bytes through the hostfile reader (both ways: with
 * jansson's allocator, and with the arena of hostfile_parse_alone(), which
 * must read the same), then the rules of hostfile_check.c under each backend, then
 * the JSON report.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile_check.h"
#include "hostfile_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const backends[] = { NULL, "jaccl", "jaccl-ring", "ring" };
	struct hostfile_diags d = { 0 }, d2 = { 0 };
	struct jc_hostfile *hf = NULL, *hf2 = NULL;
	int rc;

	if (size > 1 << 20)
		return 0;
	rc = hostfile_parse((const char *)data, size, "fuzz.json", &hf, &d);
	if (hostfile_parse_alone((const char *)data, size, "fuzz.json", &hf2, &d2) != rc ||
	    d.n != d2.n || (hf == NULL) != (hf2 == NULL) ||
	    (hf != NULL && (hf->nhosts != hf2->nhosts || strcmp(hf->backend, hf2->backend) != 0)))
		abort();
	for (size_t i = 0; i < d.n; i++)
		if (strcmp(d.v[i].msg, d2.v[i].msg) != 0)
			abort();
	jc_hostfile_free(hf2);
	hostfile_diags_free(&d2);
	for (size_t b = 0; b < sizeof(backends) / sizeof(backends[0]); b++) {
		struct check_report *r = check_hostfile(hf, &d, backends[b], 32323);
		json_t *j = check_report_json(r), *it;
		size_t i;
		char *s = json_dumps(j, 0);

		if (s == NULL || json_object_size(j) != 12)
			abort();
		/* every string made it into the report (jansson wants UTF-8) */
		json_array_foreach(json_object_get(j, "problems"), i, it)
			if (json_object_size(it) != 4 || r->problems[i].msg == NULL)
				abort();
		free(s);
		json_decref(j);
		check_report_free(r);
	}
	jc_hostfile_free(hf);
	hostfile_diags_free(&d);
	return 0;
}
