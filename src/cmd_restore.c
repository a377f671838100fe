/* SPDX-License-Identifier: MIT */
/* The restore command. */
#include "config.h"

#include "cmd.h"

int
cmd_restore(struct jc_opts *o)
{
	jc_error(NULL, "restore: not implemented yet");
	return JC_EXIT_FAIL;
}
