/* SPDX-License-Identifier: MIT */
/*
 * Test helper: print the inventory JSON of every host of a probe bundle
 * (or of the hosts named after it), exactly as the library builds it.
 * Usage: inventory_dump DIR [HOST...]. Exit 1 with a message on error.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "bundle.h"
#include "inventory.h"

int
main(int argc, char **argv)
{
	struct jc_strv hosts = { 0 };
	struct jc_host *h;
	struct jc_err err;
	json_t *doc;
	int st = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: inventory_dump DIR [HOST...]\n");
		return 2;
	}
	if (argc > 2) {
		for (int i = 2; i < argc; i++)
			strv_push(&hosts, argv[i]);
	} else if (bundle_hosts(argv[1], &hosts, &err) < 0) {
		fprintf(stderr, "inventory_dump: %s\n", err.msg);
		return 1;
	}
	h = xcalloc(hosts.n ? hosts.n : 1, sizeof(*h));
	for (size_t i = 0; i < hosts.n; i++)
		if (inventory_from_bundle(argv[1], hosts.v[i], &h[i], &err) < 0) {
			fprintf(stderr, "inventory_dump: %s: %s\n", hosts.v[i], err.msg);
			st = 1;
		}
	if (st == 0) {
		doc = inventory_to_json(h, hosts.n);
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
	}
	for (size_t i = 0; i < hosts.n; i++)
		jc_host_clear(&h[i]);
	free(h);
	strv_free(&hosts);
	return st;
}
