/* SPDX-License-Identifier: MIT */
/* The probe command. */
#include "config.h"

#include "cmd.h"

int
cmd_probe(struct jc_opts *o)
{
	jc_error(NULL, "probe: not implemented yet");
	return JC_EXIT_FAIL;
}
