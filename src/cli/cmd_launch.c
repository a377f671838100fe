/* SPDX-License-Identifier: MIT */
/*
 * The launch command: mlx.launch for the ring, jaccl and jaccl-ring
 * backends. Reads the hostfile (or --hosts), starts the command on every
 * host with mlx.launch's environment, prints every rank's output prefixed
 * by its rank, stops the others when one fails and exits with the status
 * of the worst rank (a signal before an exit code), naming each failed
 * rank's JACCL failure (jaccl_failure.h) with its cause and fix.
 */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "hostfile_read.h"
#include "jaccl_failure.h"
#include "launch.h"

/* The launch, and what each rank's output said of JACCL's failures. */
struct job {
	struct launch *l;
	const struct jaccl_failure **seen;	/* one per rank */
	bool *crash_mark;			/* a rank's output named tbt_post_recv */
};

static void
line_cb(void *arg, size_t rank, int fd, const char *data, size_t len)
{
	struct job *j = arg;
	FILE *fp = fd == 2 ? stderr : stdout;
	bool nl = len > 0 && data[len - 1] == '\n';

	j->seen[rank] = jaccl_failure_better(j->seen[rank],
	    jaccl_failure_line(data, len, &j->crash_mark[rank]));
	fprintf(fp, "[%zu] %.*s%s", rank, (int)len, data, nl ? "" : "\n");
	if (fp == stdout)
		out_flush();
	else
		fflush(fp);
}

static void
ended_cb(void *arg, size_t rank, const struct launch_result *res)
{
	struct launch *l = ((struct job *)arg)->l;
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

/* Each failed rank's JACCL failure, named with its cause and fix. */
static void
explain(const struct job *j)
{
	bool jaccl = strcmp(launch_backend(j->l), "ring") != 0;

	for (size_t r = 0; r < launch_nranks(j->l); r++) {
		const struct launch_result *res = launch_result(j->l, r);
		const struct jaccl_failure *f = j->seen[r];

		if (res->state == LAUNCH_EXITED && res->status == 0)
			continue;
		if (jaccl && res->state == LAUNCH_KILLED &&
		    jaccl_failure_signal(res->signal, j->crash_mark[r]) != NULL)
			f = jaccl_failure_signal(res->signal, j->crash_mark[r]);
		if (f != NULL)
			jc_error(launch_host(j->l, r), "rank %zu: %s: %s; fix: %s", r, f->what,
			    f->cause, f->fix);
	}
}

/* The exit status of a job that failed: the worst rank's (launch_worst_rank()). */
static int
job_status(const struct launch *l)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "ILL", SIGILL },
		{ "TRAP", SIGTRAP }, { "ABRT", SIGABRT }, { "BUS", SIGBUS }, { "FPE", SIGFPE },
		{ "KILL", SIGKILL }, { "SEGV", SIGSEGV }, { "PIPE", SIGPIPE }, { "ALRM", SIGALRM },
		{ "TERM", SIGTERM }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
	};
	long w = launch_worst_rank(l);
	const struct launch_result *res = w >= 0 ? launch_result(l, (size_t)w) : NULL;

	if (res == NULL)
		return JC_EXIT_FAIL;
	if (res->state == LAUNCH_UNREACHABLE)
		return JC_EXIT_UNREACHABLE;
	if (res->state == LAUNCH_EXITED && res->status > 0 && res->status < 256)
		return res->status;
	for (size_t k = 0; res->state == LAUNCH_KILLED && res->signal && k < JC_ARRAY_LEN(sigs); k++)
		if (strcmp(res->signal, sigs[k].name) == 0)
			return 128 + sigs[k].sig;
	return JC_EXIT_FAIL;
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
	struct job job = { 0 };
	struct jc_strv envs = { 0 };
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
	cli_rank_envs(o, &envs);
	lo.env.envs = envs.v;
	lo.env.nenvs = envs.n;
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
	lo.arg = &job;
	job.seen = xcalloc(hf->nhosts + 1, sizeof(*job.seen));
	job.crash_mark = xcalloc(hf->nhosts + 1, sizeof(*job.crash_mark));
	rc = launch_prepare(hf, &lo, &l, &warn, &err);
	job.l = l;
	out_warn_each(&warn, "");
	strv_free(&warn);
	if (rc < 0) {
		jc_hostfile_free(hf);
		strv_free(&bins);
		strv_free(&argv);
		free(job.seen);
		free(job.crash_mark);
		strv_free(&envs);
		return cli_usage_error(o->cmd, "%s", err.msg);
	}
	if (cli_tr_init() != 0) {
		launch_free(l);
		jc_hostfile_free(hf);
		strv_free(&bins);
		strv_free(&argv);
		free(job.seen);
		free(job.crash_mark);
		strv_free(&envs);
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
		jc_error(NULL, "%s", err.msg);
		explain(&job);
		rc = job_status(l);
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
	free(job.seen);
	free(job.crash_mark);
	strv_free(&envs);
	tr_global_cleanup();
	return rc;
}
