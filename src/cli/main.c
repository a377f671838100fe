/* SPDX-License-Identifier: MIT */
/*
 * jaccl-config: dispatch to a subcommand. Without one (or when the first
 * argument is an option) the configure command runs, so that the tool is a
 * drop-in for mlx.distributed_config.
 */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "cli.h"

static void
out_of_memory(void)
{
	out_stderr(JC_PROG ": out of memory\n");
}

int
main(int argc, char **argv)
{
	const struct jc_cmd *cmd = NULL;
	struct jc_opts o;
	int r;

	signal(SIGPIPE, SIG_IGN);	/* a closed pipe is a write error (out_status) */
	jc_oom_hook = out_of_memory;
	if (argc > 1 && argv[1][0] != '-')
		cmd = cli_find_cmd(argv[1]);
	if (cmd != NULL) {
		argc--;
		argv++;
	} else {
		cmd = cli_find_cmd("configure");
		cli_command_implicit = true;
		if (argc > 1 && argv[1][0] != '-')
			return cli_usage_error(NULL, "unknown command '%s' (see '%s --help')",
			    argv[1], JC_PROG);
	}
	r = cli_parse(cmd, argc, argv, &o);
	if (r == -1)
		return out_status(JC_EXIT_OK);
	if (r != 0) {
		if (o.json)
			out_json_error(r);
		return out_status(r);
	}
	r = cmd->run(&o);
	if (o.json && r != JC_EXIT_OK && !o.json_printed)
		out_json_error(r);
	r = out_status(r);
	cli_opts_free(&o);
	return r;
}
