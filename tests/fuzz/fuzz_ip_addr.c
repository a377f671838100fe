/* SPDX-License-Identifier: MIT */
/* libFuzzer target: Linux `ip -4 -o addr show` and `ip -o link show` parsers. */
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
	char *s = malloc(size + 1);
	struct jc_strv addrs = { 0 };
	int up;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	parse_ip_addr_inet(s, &addrs);
	for (size_t i = 0; i < addrs.n; i++)
		if (strchr(addrs.v[i], '/') == NULL)
			abort();	/* only "A/L" is returned */
	up = parse_ip_link_up(s);
	if (up != JC_YES && up != JC_NO)
		abort();
	strv_free(&addrs);
	free(s);
	return 0;
}
