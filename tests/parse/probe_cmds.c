/* SPDX-License-Identifier: MIT */
/*
 * Test helper: print a platform backend's probe commands, one per line as
 * "FILE<TAB>SH", so shell tests run exactly the commands a probe runs.
 * Usage: probe_cmds macos|linux.
 */
#include "config.h"

#include <stdio.h>

#include "platform.h"

int
main(int argc, char **argv)
{
	const struct jc_platform_ops *ops = argc == 2 ? platform_by_name(argv[1]) : NULL;

	if (ops == NULL) {
		fprintf(stderr, "usage: probe_cmds macos|linux\n");
		return 2;
	}
	for (const struct jc_probe_cmd *c = ops->cmds; c->name != NULL; c++)
		printf("%s\t%s\n", c->name, c->sh);
	return 0;
}
