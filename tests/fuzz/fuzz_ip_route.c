/* SPDX-License-Identifier: MIT */
/* libFuzzer target: Linux `ip route show PEER/32` parser (a state query of apply). */
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
	r = parse_ip_route_show(s, "192.168.0.2");
	if (r != NULL && (parse_route_split(r, &via, &dev) != 0 || dev == NULL))
		abort();	/* what the parser returns must split back */
	if (r != NULL) {
		free(via);
		free(dev);
	}
	free(r);
	/* route texts from a saved state are split again at restore */
	if (parse_route_split(s, &via, &dev) == 0) {
		free(via);
		free(dev);
	}
	free(s);
	return 0;
}
