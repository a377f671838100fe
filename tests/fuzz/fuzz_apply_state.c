/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the reader of saved host states (the files restore
 * reads from the state directory) and the restore commands computed from
 * them: the input is split at its first NUL into the saved and the current
 * state; every command produced must consist of plain words.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "apply.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const char *p = (const char *)data;
	const char *nul = memchr(p, '\0', size);
	size_t a = nul ? (size_t)(nul - p) : size;
	struct jc_strv cmds = { 0 };
	struct jc_err err;

	if (nul != NULL)
		apply_state_diff(p, a, nul + 1, size - a - 1, &cmds, &err);
	else
		apply_state_diff(p, a, p, a, &cmds, &err);
	for (size_t i = 0; i < cmds.n; i++)
		for (const char *c = cmds.v[i]; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			    (*c >= '0' && *c <= '9') || strchr(" ._-/:", *c) != NULL))
				abort();
	strv_free(&cmds);
	return 0;
}
