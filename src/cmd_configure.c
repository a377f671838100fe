/* SPDX-License-Identifier: MIT */
/*
 * The configure command (the default): what mlx.distributed_config does.
 * Until discovery exists it parses and validates the host selection only.
 */
#include "config.h"

#include <stdlib.h>

#include "cmd.h"
#include "hosts.h"

int
cmd_configure(struct jc_opts *o)
{
	struct jc_host *hosts = NULL;
	struct jc_err err = { 0 };
	size_t n = 0;

	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if (o->hostfile == NULL && hosts_from_list(o->hosts, &hosts, &n, &err) != 0)
		return cli_usage_error(o->cmd, "%s", err.msg);
	hosts_free(hosts, n);
	jc_error(NULL, "discovery is not implemented yet");
	return JC_EXIT_FAIL;
}
