/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the setup script's frame reader on arbitrary output, fed in pieces. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "setup_script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ss_parser p;
	struct ss_event ev;
	struct jc_err err = { 0 };
	size_t off = 0, step = size > 0 ? (size_t)data[0] % 7 + 1 : 1;
	int r = 0;

	ss_parser_init(&p, "jc0123456789abcdef0123456789abcd");
	while (off < size && r >= 0) {
		size_t k = size - off < step ? size - off : step;

		ss_feed(&p, (const char *)data + off, k);
		off += k;
		while ((r = ss_next(&p, &ev, &err)) == 1) {
			if ((ev.k == 0) != (ev.kind == SS_READY) || ev.status < 0 || ev.status > 255)
				abort();
			if ((ev.kind == SS_QUERY || ev.kind == SS_END) &&
			    (ev.text == NULL || ev.text[ev.len] != '\0'))
				abort();
			ss_event_clear(&ev);
		}
	}
	ss_parser_clear(&p);
	return 0;
}
