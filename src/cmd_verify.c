/* SPDX-License-Identifier: MIT */
/* The verify command. */
#include "config.h"

#include "cmd.h"

int
cmd_verify(struct jc_opts *o)
{
	jc_error(NULL, "verify: not implemented yet");
	return JC_EXIT_FAIL;
}
