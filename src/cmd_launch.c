/* SPDX-License-Identifier: MIT */
/* The launch command. */
#include "config.h"

#include "cmd.h"

int
cmd_launch(struct jc_opts *o)
{
	jc_error(NULL, "launch: not implemented yet");
	return JC_EXIT_FAIL;
}
