/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: what a remote shell prints before the launcher knows
 * its folder (the mark line), and the cleanup command built from it, which
 * must refuse every folder that is not a plain path the script made.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t start, end;
	char *dir = NULL, *cmd;

	if (launch_find_mark((const char *)data, size, &start, &end, &dir)) {
		if (start >= end || end > size)
			abort();
		cmd = launch_cleanup_script(dir, NULL);
		/* accepted folders are plain words: no quote can reach the shell */
		if (cmd != NULL && (strchr(dir, '\'') != NULL || strchr(dir, ';') != NULL))
			abort();
		free(cmd);
	}
	free(dir);
	return 0;
}
