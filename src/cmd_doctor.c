/* SPDX-License-Identifier: MIT */
/* The doctor command. */
#include "config.h"

#include "cmd.h"

int
cmd_doctor(struct jc_opts *o)
{
	jc_error(NULL, "doctor: not implemented yet");
	return JC_EXIT_FAIL;
}
