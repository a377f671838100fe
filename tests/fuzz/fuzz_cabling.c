/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: any bytes through the expected-cabling reader; what it
 * accepts is written back as JSON, read again (it must be accepted and say
 * the same), and diffed against itself (no difference) and against an
 * empty cabling.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expected_cabling.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cabling *c = NULL, *back = NULL, empty = { 0 };
	struct cabling_diff d = { 0 };
	struct jc_err err = { 0 };
	json_t *j;
	char *s;

	if (size > 1 << 20)
		return 0;
	if (cabling_parse((const char *)data, size, "fuzz.json", &c, &err) != 0) {
		if (c != NULL || err.msg[0] == '\0')
			abort();
		return 0;
	}
	j = cabling_to_json(c);
	s = json_dumps(j, 0);
	if (s == NULL || cabling_parse(s, strlen(s), "again.json", &back, &err) != 0)
		abort();
	if (back->ncables != c->ncables || back->nhosts != c->nhosts)
		abort();
	cabling_diff(c, back, &d);
	if (d.n != 0)
		abort();
	cabling_diff_free(&d);
	cabling_diff(c, &empty, &d);
	cabling_diff_free(&d);
	cabling_diff(&empty, c, &d);
	cabling_diff_free(&d);
	free(s);
	json_decref(j);
	cabling_free(back);
	cabling_free(c);
	return 0;
}
