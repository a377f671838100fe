/* SPDX-License-Identifier: MIT */
/*
 * The verify command: check the hostfile, start verify-rank on every host
 * with the environment mlx.launch gives a JACCL job, and print rank 0's
 * report with every link and failing host named (or the full report as
 * JSON). Exits 0 when every link is up and fast enough and the results
 * are right, 1 otherwise.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hostfile_check.h"
#include "cmd.h"
#include "hostfile_read.h"
#include "launch.h"
#include "verify_rank.h"
#include "verify_launcher.h"
#include "verify_mlx.h"

static void
line_cb(void *arg, size_t rank, const char *host, int fd, const char *data, size_t len)
{
	bool nl = len > 0 && data[len - 1] == '\n';

	(void)arg;
	(void)fd;
	(void)host;
	out_flush();
	fprintf(stderr, "[%zu] %.*s%s", rank, (int)len, data, nl ? "" : "\n");
	fflush(stderr);
}

static bool
has_matrix(const struct jc_hostfile *hf)
{
	for (size_t i = 0; i < hf->nhosts; i++)
		for (size_t j = 0; j < hf->hosts[i].nrdma; j++)
			if (hf->hosts[i].rdma[j].n > 0)
				return true;
	return false;
}

/*
 * The exit status of a verification that ran and failed: a rank whose host
 * could not be reached makes it JC_EXIT_UNREACHABLE, anything else (a link
 * down or slow, a wrong result, a rank that failed) JC_EXIT_VERIFY.
 */
static int
verify_status(const json_t *rep)
{
	const json_t *p;
	size_t i;

	json_array_foreach(json_object_get(rep, "processes"), i, p) {
		const char *st = json_string_value(json_object_get(p, "state"));

		if (st != NULL && strcmp(st, "unreachable") == 0)
			return JC_EXIT_UNREACHABLE;
	}
	json_array_foreach(json_object_get(rep, "processes"), i, p) {
		const char *st = json_string_value(json_object_get(p, "state"));

		if (st != NULL && strcmp(st, "no-program") == 0)
			return JC_EXIT_FAIL;
	}
	return JC_EXIT_VERIFY;
}

/*
 * Keep the report in the state folder (verify.json), where sync --dry-run
 * reads the measured cables; a failure to write it is only a warning.
 */
static void
keep_report(const struct jc_opts *o, json_t *rep)
{
	const char *home = getenv("HOME");
	char *dir = o->state_dir ? xstrdup(o->state_dir) :
	    xasprintf("%s/.cache/jaccl-config", home && *home ? home : "/");
	char *path = xasprintf("%s/verify.json", dir), *txt;
	struct jc_err err = { 0 };

	for (char *p = dir + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdir(dir, 0755) < 0 && errno != EEXIST)
				break;
			*p = c;
			if (c == '\0')
				break;
		}
	}
	txt = json_dumps(rep, OUT_JSON_FLAGS);
	if (txt != NULL && jc_write_atomic(path, txt, strlen(txt), 0644, &err) < 0)
		jc_warn(NULL, "cannot keep the report in %s: %s", path, err.msg);
	free(txt);
	free(path);
	free(dir);
}

/*
 * Check hf (read from label, with d its reader's diagnostics, or NULL for a
 * hostfile built in memory), run the verification on its hosts and print
 * the report. Returns the command's exit status.
 */
int
cmd_verify_hostfile(struct jc_opts *o, const struct jc_hostfile *hf,
    const struct hostfile_diags *d, const char *label)
{
	static const struct hostfile_diags none;
	struct check_report *cr = NULL;
	struct verify_opts vo;
	struct jc_strv envs = { 0 };
	struct jc_err err = { 0 };
	json_t *rep = NULL;
	const char *backend;
	int rc = JC_EXIT_FAIL, r;

	if (d == NULL)
		d = &none;
	if (hf != NULL && d->nerrors == 0 && !has_matrix(hf)) {
		jc_error(NULL, "%s: the hostfile lists no RDMA devices: verify needs the "
		    "cable matrix that jaccl-config writes for the jaccl backends", label);
		return JC_EXIT_FAIL;
	}
	backend = hf != NULL && hf->backend != NULL && strcmp(hf->backend, "jaccl-ring") == 0 ?
	    "jaccl-ring" : "jaccl";
	cr = check_hostfile(hf, d, backend, o->starting_port);
	for (size_t i = 0; i < cr->nwarnings; i++)
		jc_warn(NULL, "%s: %s", label, cr->warnings[i].msg);
	if (!cr->valid) {
		for (size_t i = 0; i < cr->nproblems; i++)
			jc_error(NULL, "%s: %s", label, cr->problems[i].msg);
		jc_error(NULL, "%s: not a valid hostfile for a verification "
		    "(see 'jaccl-config check')", label);
		goto out;
	}
	memset(&vo, 0, sizeof(vo));
	vo.tr = cli_tr_opts(o);
	vo.remote_bin = cli_remote_bin(o);
	vo.fabric = o->fabric;
	vo.side_channel = o->side_channel;
	vo.min_bw = o->min_bw;
	vo.timeout = o->timeout;
	vo.starting_port = o->starting_port;
	cli_rank_envs(o, &envs);
	vo.envs = envs.v;
	vo.nenvs = envs.n;
	vo.verbose = o->verbose > 0;
	vo.interrupted = &cli_interrupted;
	vo.line = line_cb;
	if (cli_tr_init() != 0)
		goto out;
	cli_catch_interrupts();
	r = verify_run(hf, &vo, &rep, &err);
	if (r >= 0 && o->mlx && !cli_interrupted) {
		/* MLX's own collectives, with the program of
		 * JACCL_CONFIG_MLX_PROGRAM instead of Python's when set */
		struct verify_mlx_opts mo = { .program = getenv("JACCL_CONFIG_MLX_PROGRAM"),
		    .python = o->python };

		if (mo.program != NULL && *mo.program == '\0')
			mo.program = NULL;
		verify_mlx_sizes(rep, &mo);
		if (verify_mlx_run(hf, &vo, &mo, rep, &err) < 0)
			jc_error(NULL, "mlx: %s", err.msg);
		r = json_is_true(json_object_get(rep, "ok")) ? 0 : 1;
	}
	if (r < 0) {
		jc_error(NULL, "%s", err.msg);
	} else {
		const char *h0;
		char *hint = r != 0 ? verify_firewall_hint(rep, vo.remote_bin, &h0) : NULL;

		if (hint != NULL)
			jc_note(h0, "%s", hint);
		free(hint);
		rc = r == 0 ? JC_EXIT_OK : verify_status(rep);
		keep_report(o, rep);
		if (cli_interrupted)
			rc = 128 + (int)cli_interrupted;
		if (o->json) {
			json_object_set_new(rep, "code", json_string(cli_exit_code(rc)));
			out_json(rep);
			o->json_printed = true;
		} else {
			verify_print(stdout, rep);
		}
	}
	tr_global_cleanup();
out:
	json_decref(rep);
	check_report_free(cr);
	strv_free(&envs);
	return rc;
}

int
cmd_verify(struct jc_opts *o)
{
	struct jc_hostfile *hf = NULL;
	struct hostfile_diags d = { 0 };
	struct jc_err err = { 0 };
	double bps;
	int rc;

	if (o->hostfile == NULL)
		return cli_usage_error(o->cmd, "the following arguments are required: --hostfile");
	if (o->min_bw != NULL && rt_parse_rate(o->min_bw, &bps) < 0)
		return cli_usage_error(o->cmd, "argument --min-bw: invalid rate: '%s' "
		    "(examples: 50Gb/s, 6GB/s, 6.25GB/s)", o->min_bw);
	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if (cli_remote_bin(o) != NULL && !launch_bin_ok(cli_remote_bin(o), &err))
		return cli_usage_error(o->cmd, "%s %s", o->remote_bin != NULL ?
		    "argument --remote-bin:" : "JACCL_CONFIG_REMOTE:", err.msg);
	if ((rc = cli_python_ok(o)) != 0)
		return rc;
	hostfile_load(o->hostfile, &hf, &d);
	rc = cmd_verify_hostfile(o, hf, &d, o->hostfile);
	jc_hostfile_free(hf);
	hostfile_diags_free(&d);
	return rc;
}
