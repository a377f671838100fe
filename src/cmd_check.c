/* SPDX-License-Identifier: MIT */
/* The check command. */
#include "config.h"

#include "cmd.h"

int
cmd_check(struct jc_opts *o)
{
	jc_error(NULL, "check: not implemented yet");
	return JC_EXIT_FAIL;
}
