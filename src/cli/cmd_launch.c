/* SPDX-License-Identifier: MIT */
/*
 * The launch command: mlx.launch for the ring, jaccl and jaccl-ring
 * backends. Reads the hostfile (or --hosts), starts the command on every
 * host with mlx.launch's environment, prints every rank's output prefixed
 * by its rank, stops the others when one fails and exits with the status
 * of the rank that failed first.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "hostfile_read.h"
#include "launch.h"

static void
line_cb(void *arg, size_t rank, int fd, const char *data, size_t len)
{
	FILE *fp = fd == 2 ? stderr : stdout;
	bool nl = len > 0 && data[len - 1] == '\n';

	(void)arg;
	fprintf(fp, "[%zu] %.*s%s", rank, (int)len, data, nl ? "" : "\n");
	if (fp == stdout)
		out_flush();
	else
		fflush(fp);
}

static void
ended_cb(void *arg, size_t rank, const struct launch_result *res)
{
	struct launch *l = *(struct launch **)arg;
	const char *host = launch_host(l, rank);

	out_flush();
	switch (res->state) {
	case LAUNCH_EXITED:
		if (res->status == 0)
			jc_info(host, "Node with rank %zu completed", rank);
		else
			jc_warn(host, "Node with rank %zu exited with code %d", rank,
			    res->status);
		break;
	case LAUNCH_KILLED:
		jc_warn(host, "Node with rank %zu was killed (SIG%s)", rank, res->signal);
		break;
	case LAUNCH_STOPPED:
		jc_info(host, "Node with rank %zu was stopped", rank);
		break;
	case LAUNCH_NOSTART:
	case LAUNCH_LOST:
	case LAUNCH_NOBIN:
		jc_error(NULL, "%s", res->error);
		break;
	default:
		break;
	}
}

/* The hostfile of --hostfile or --hosts; exit status on failure, else 0. */
static int
hostfile_of(struct jc_opts *o, struct jc_hostfile **hf)
{
	struct jc_err err = { 0 };

	*hf = NULL;
	if (o->hostfile != NULL) {
		if (hostfile_read_mlx(o->hostfile, hf, &err) < 0)
			return cli_usage_error(o->cmd, "%s", err.msg);
	} else if (launch_hostfile_from_list(o->hosts, hf, &err) < 0) {
		return cli_usage_error(o->cmd, "%s", err.msg);
	}
	return 0;
}

int
cmd_launch(struct jc_opts *o)
{
	struct jc_hostfile *hf = NULL;
	struct launch *l = NULL;
	struct launch_opts lo;
	struct jc_strv warn = { 0 }, argv = { 0 };
	struct jc_err err = { 0 };
	struct jc_strv bins = { 0 };
	const char *given = cli_remote_bin(o);
	char cwd[4096];
	long first;
	int rc;

	if (o->argc == 0)
		return cli_usage_error(o->cmd, "No script is provided");
	if (o->remote_bin != NULL && strcmp(o->argv[0], JC_PROG) != 0)
		return cli_usage_error(o->cmd, "argument --remote-bin: the command is not "
		    JC_PROG " (--remote-bin names the " JC_PROG " that `launch -- " JC_PROG
		    " ...` starts on the hosts)");
	if (given != NULL && !launch_bin_ok(given, &err))
		return cli_usage_error(o->cmd, "%s %s", o->remote_bin != NULL ?
		    "argument --remote-bin:" : "JACCL_CONFIG_REMOTE:", err.msg);
	if ((rc = cli_python_ok(o)) != 0 || (rc = hostfile_of(o, &hf)) != 0)
		return rc;
	memset(&lo, 0, sizeof(lo));
	lo.tr = cli_tr_opts(o);
	lo.env.backend = o->backend;
	lo.env.envs = o->envs.v;
	lo.env.nenvs = o->envs.n;
	lo.env.starting_port = o->starting_port;
	lo.env.connections_per_ip = o->connections_per_ip;
	lo.env.verbose = o->verbose > 0;
	/* --python P: the command is P ARGS..., as mlx.launch makes it */
	if (o->python != NULL) {
		strv_push(&argv, o->python);
		for (int i = 0; i < o->argc; i++)
			strv_push(&argv, o->argv[i]);
		lo.argv = argv.v;
		lo.argc = argv.n;
	} else {
		lo.argv = o->argv;
		lo.argc = (size_t)o->argc;
	}
	if (o->python == NULL && strcmp(o->argv[0], JC_PROG) == 0) {
		/* the hosts' own jaccl-config, of this version */
		launch_bin_candidates(given, &bins);
		lo.bin = bins.v;
		lo.nbin = bins.n;
		lo.bin_version = JC_PROG " " PACKAGE_VERSION;
	}
	lo.cwd = getcwd(cwd, sizeof(cwd));
	lo.interrupted = &cli_interrupted;
	lo.line = line_cb;
	lo.ended = ended_cb;
	lo.arg = &l;
	rc = launch_prepare(hf, &lo, &l, &warn, &err);
	out_warn_each(&warn, "");
	strv_free(&warn);
	if (rc < 0) {
		jc_hostfile_free(hf);
		strv_free(&bins);
		strv_free(&argv);
		return cli_usage_error(o->cmd, "%s", err.msg);
	}
	if (cli_tr_init() != 0) {
		launch_free(l);
		jc_hostfile_free(hf);
		strv_free(&bins);
		strv_free(&argv);
		return JC_EXIT_FAIL;
	}
	jc_info(NULL, "Running %s on %zu host(s) with the %s backend", lo.argv[0],
	    launch_nranks(l), launch_backend(l));
	cli_catch_interrupts();
	rc = launch_run(l, &err);
	if (rc == 0) {
		rc = JC_EXIT_OK;
	} else if (launch_stop_reason(l, &first) == LAUNCH_STOP_INTERRUPT) {
		jc_error(NULL, "%s", err.msg);
		rc = 128 + (int)cli_interrupted;
	} else {
		const struct launch_result *res = first >= 0 ? launch_result(l, (size_t)first) : NULL;

		jc_error(NULL, "%s", err.msg);
		if (res != NULL && res->state == LAUNCH_UNREACHABLE)
			rc = JC_EXIT_UNREACHABLE;
		else
			rc = res != NULL && res->state == LAUNCH_EXITED && res->status > 0 &&
			    res->status < 256 ? res->status : JC_EXIT_FAIL;
	}
	for (size_t i = 0; i < launch_nranks(l); i++) {
		const struct launch_result *res = launch_result(l, i);

		if (res->killed_left)
			jc_info(launch_host(l, i), "rank %zu was still running and was killed", i);
		if (!res->cleaned && res->state != LAUNCH_PENDING &&
		    res->state != LAUNCH_UNREACHABLE)
			jc_warn(launch_host(l, i), "rank %zu could not be cleaned up: a process or "
			    "a folder of it may be left on the host", i);
	}
	launch_free(l);
	jc_hostfile_free(hf);
	strv_free(&bins);
	strv_free(&argv);
	tr_global_cleanup();
	return rc;
}
