/* SPDX-License-Identifier: MIT */
/* The verify-rank command. */
#include "config.h"

#include "cmd.h"

int
cmd_verify_rank(struct jc_opts *o)
{
	jc_error(NULL, "verify-rank: not implemented yet");
	return JC_EXIT_FAIL;
}
