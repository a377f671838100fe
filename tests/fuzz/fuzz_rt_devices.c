/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the runtime's device file parser and group choice. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "rt_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rt_config c = { 0 };
	struct jc_err err;
	enum rt_kind kind;
	int wires, k;

	if (rt_config_parse_devices(&c, (const char *)data, size, &err) == 0) {
		c.rank = size % 4;
		c.prefer_ring = size & 1;
		(void)rt_config_valid_mesh(&c);
		(void)rt_config_valid_ring(&c, &k);
		(void)rt_config_select(&c, false, &kind, &wires, &err);
	}
	rt_config_clear(&c);
	return 0;
}
