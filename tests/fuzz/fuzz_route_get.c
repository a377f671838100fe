/* SPDX-License-Identifier: MIT */
/* libFuzzer target: macOS `route -n get` parser (a state query of apply). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse_state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The parsers take NUL-terminated text, as the transport provides it. */
	char *s = malloc(size + 1), *r, *via, *dev;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	r = parse_route_get(s, "192.168.0.2");
	if (r != NULL && (parse_route_split(r, &via, &dev) != 0 || dev == NULL))
		abort();	/* what the parser returns must split back */
	if (r != NULL) {
		free(via);
		free(dev);
	}
	free(r);
	free(s);
	return 0;
}
