/* SPDX-License-Identifier: MIT */
/*
 * Test helper: read a JSON file with jansson and write it back with the
 * hostfile serialiser, so a shell test can compare the bytes with Python's
 * json.dumps(json.load(f), indent=4).
 */
#include "config.h"

#include <stdio.h>

#include "hostfile_write.h"

int
main(int argc, char **argv)
{
	json_error_t e;
	json_t *j;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: json_redump FILE\n");
		return 2;
	}
	j = json_load_file(argv[1], JSON_DECODE_ANY, &e);
	if (j == NULL) {
		fprintf(stderr, "json_redump: %s:%d: %s\n", argv[1], e.line, e.text);
		return 1;
	}
	r = hostfile_write_dump_json(stdout, j);
	json_decref(j);
	return r == 0 ? 0 : 1;
}
