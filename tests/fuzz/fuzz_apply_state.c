/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the reader of saved host states (the files restore
 * reads from the state directory) and the restore commands computed from
 * them: the input is split at its first NUL into the saved and the current
 * state; every command produced must consist of literal words (plain, or
 * single-quoted).
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/*
 * A command the shell reads as literal words only: plain characters, and
 * single-quoted text (a saved file's content, a service name) whose quotes
 * are written '\'' .
 */
static bool
literal_words(const char *c)
{
	while (*c) {
		if (*c == '\'') {
			const char *e = strchr(c + 1, '\'');

			if (e == NULL)
				return false;
			c = e + 1;
			if (c[0] == '\\' && c[1] == '\'' && c[2] == '\'')
				c += 2;
			continue;
		}
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || strchr(" ._-/:+@%,=", *c) != NULL))
			return false;
		c++;
	}
	return true;
}

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
		if (!literal_words(cmds.v[i]))
			abort();
	strv_free(&cmds);
	return 0;
}
