/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: a line a host printed during verify --mlx, parsed as
 * the program's (verify_mlx_parse): any bytes, never a crash; a line is
 * taken only when it starts with the program's tag, and every word of it
 * is a string.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verify_mlx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *k;
	json_t *o = NULL, *v;

	if (verify_mlx_parse((const char *)data, size, &o) == 0) {
		if (o == NULL || size < strlen(VERIFY_MLX_TAG) ||
		    memcmp(data, VERIFY_MLX_TAG, strlen(VERIFY_MLX_TAG)) != 0)
			abort();
		json_object_foreach(o, k, v)
			if (!json_is_string(v))
				abort();
	} else if (o != NULL) {
		abort();
	}
	json_decref(o);
	return 0;
}
