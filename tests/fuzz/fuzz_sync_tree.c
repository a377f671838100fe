/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: what the controller and the source send a host of a
 * sync, read as they are read. The first 40 bytes as a frame header
 * (sync_frame_decode): when taken, encoding it again gives the same
 * fields. The rest as a tree in JSON (sync_tree_from_json): when taken,
 * every path passes sync_path_ok, every link sync_link_ok, the paths are
 * in strictly increasing order, and the tree survives a round trip.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sync_core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sync_frame f, g;
	struct sync_tree t, u;
	struct jc_err err;
	unsigned char b[SYNC_HDR];
	json_error_t je;
	json_t *j, *k;

	if (size >= SYNC_HDR && sync_frame_decode(data, &f) == 0) {
		sync_frame_encode(&f, b);
		if (sync_frame_decode(b, &g) != 0 || memcmp(&f, &g, sizeof(f)) != 0 ||
		    f.len > SYNC_CHUNK)
			abort();
	}
	j = json_loadb((const char *)data, size, 0, &je);
	if (j == NULL)
		return 0;
	if (sync_tree_from_json(j, &t, &err) == 0) {
		for (size_t i = 0; i < t.n; i++) {
			if (!sync_path_ok(t.v[i].path) || (i > 0 && strcmp(t.v[i - 1].path,
			    t.v[i].path) >= 0))
				abort();
			if (t.v[i].type == SYNC_LINK && !sync_link_ok(t.v[i].path, t.v[i].target))
				abort();
		}
		k = sync_tree_json(&t);
		if (sync_tree_from_json(k, &u, &err) != 0 || u.n != t.n)
			abort();
		json_decref(k);
		sync_tree_free(&u);
		sync_tree_free(&t);
	}
	json_decref(j);
	return 0;
}
