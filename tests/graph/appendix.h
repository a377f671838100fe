/* SPDX-License-Identifier: MIT */
/*
 * The worked example of mlx's notes: three Macs A, B, C in a full mesh,
 * one cable per pair (A.en2-B.en2, A.en3-C.en2, B.en3-C.en3), management
 * addresses 10.0.0.10 to .12. Header-only, for the test programs.
 */
#ifndef JC_TEST_APPENDIX_H
#define JC_TEST_APPENDIX_H

#include <stdlib.h>

#include "inv.h"
#include "util.h"

static struct jc_host *
appendix_a(void)
{
	static const char *const names[] = { "A", "B", "C" };
	struct jc_host *h = inv_new(3, names);

	for (size_t i = 0; i < 3; i++) {
		free(h[i].mgmt_ip);
		h[i].mgmt_ip = xasprintf("10.0.0.%zu", 10 + i);
	}
	inv_cable(&h[0], "en2", &h[1], "en2", 80);
	inv_cable(&h[0], "en3", &h[2], "en2", 80);
	inv_cable(&h[1], "en3", &h[2], "en3", 80);
	return h;
}

#endif
